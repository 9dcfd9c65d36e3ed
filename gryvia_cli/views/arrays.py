"""A job array as one handle, as in Slurm: `sweep` names every job labelled
`gryvia.io/array-name=sweep` when no job of that exact name exists; `--index N` picks one."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from gryvia_cli.errors import NotFoundError
from gryvia_cli.kube import resources as r
from gryvia_operator.api.names import LABEL_ARRAY_INDEX, LABEL_ARRAY_NAME


def array_elements(access: Any, namespace: str, name: str) -> list[dict[str, Any]]:
    """The jobs of array `name` in `namespace`, lowest index first ([] when none)."""
    items = access.items(r.AIJOB, namespace, label_selector=f"{LABEL_ARRAY_NAME}={name}")

    def index(obj: dict[str, Any]) -> int:
        text = str(((obj.get("metadata") or {}).get("labels") or {}).get(LABEL_ARRAY_INDEX, ""))
        return int(text) if text.isdigit() else -1

    return sorted(items, key=index)


def expand_names(access: Any, namespace: str, names: Iterable[str]) -> list[str]:
    """Each name, or, when no job has that name but an array does, its elements' names."""
    out: list[str] = []
    for name in names:
        try:
            access.get(r.AIJOB, name, namespace)
        except NotFoundError:
            elements = array_elements(access, namespace, name)
            if elements:
                out += [str(e["metadata"]["name"]) for e in elements]
                continue
        out.append(name)
    return out


def element_name(access: Any, namespace: str, name: str, index: int) -> str:
    """The job of array `name` with array index `index`; NotFoundError naming the indices
    that exist when it has none."""
    elements = array_elements(access, namespace, name)
    for obj in elements:
        labels = (obj.get("metadata") or {}).get("labels") or {}
        if labels.get(LABEL_ARRAY_INDEX) == str(index):
            return str(obj["metadata"]["name"])
    if not elements:
        raise NotFoundError(
            f'no job array "{name}" in namespace "{namespace}"',
            hint=f"gryvia list jobs {name} -n {namespace}",
        )
    have = [
        ((e.get("metadata") or {}).get("labels") or {}).get(LABEL_ARRAY_INDEX) for e in elements
    ]
    raise NotFoundError(
        f'job array "{name}" has no index {index}', hint=f"indices: {', '.join(map(str, have))}"
    )
