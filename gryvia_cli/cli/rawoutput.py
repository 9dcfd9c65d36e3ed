"""Lists printed as machines want them (`-o json|yaml|name` and the templates), without
Typer: the command modules (through `cli.options`) and the start-up fast path share them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gryvia_cli.output import OutputFormat

if TYPE_CHECKING:
    from gryvia_cli.kube.resources import Resource

__all__ = ["names_of", "render_raw"]


def names_of(res: Resource, items: list[dict[str, Any]]) -> list[str]:
    """`kind.group/name` for every item (`-o name`)."""
    return [f"{res.qualified}/{(i.get('metadata') or {}).get('name')}" for i in items]


def render_raw(data: dict[str, Any], res: Resource, fmt: OutputFormat) -> bool:
    """Print a List as machines want it (`-o json|yaml` as the API returned it, `-o name` as
    `kind.group/name` lines) and return True; False for the people formats (table, wide),
    which the command renders itself."""
    from gryvia_cli.output import MACHINE_FORMATS, render_data, render_names

    if fmt in MACHINE_FORMATS:
        render_data(data, fmt)
        return True
    if fmt is OutputFormat.name:
        render_names(names_of(res, list(data.get("items") or [])))
        return True
    return False
