"""The view of a kind the console polls while it is shown (hooks, priorities, checkpoint
guards, GPU sharing policies, workflows, tuners, workspaces, inference services, model
registries): a kind module gives only what is its own (title, columns, cells, search,
details, filter placeholder); the view name, the noun, the object reference, the poll, the
rows (keyed `namespace/name`, or `name` for a cluster-scoped kind), the AGE sort and the
empty line come from the kind's console row (`kindnames.CONSOLE_KINDS`) and its model."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from gryvia_cli.core.describe import Section
from gryvia_cli.tui.kindnames import CONSOLE_KIND, ObjectKind
from gryvia_cli.tui.registry import (
    Ctx,
    ObjectRef,
    ViewSpec,
    model_sections,
    poll_objects,
    register,
    rows_by_name,
)
from gryvia_cli.tui.widgets.rowtable import Cell, Column

POLL_SECONDS = 10.0
"""How often a shown polled view re-reads its kind."""


def age_value(item: Any) -> float | None:
    """Sort value of AGE: minus the creation time (ascending: youngest first); None unknown."""
    created = item.metadata.creation_timestamp
    return -created.timestamp() if created is not None else None


def _plural(kind: str) -> str:
    return kind[:-1] + "ies" if kind.endswith("y") else kind + "s"


def _by_name(model: type[Any]) -> Callable[[Ctx], dict[str, Any]]:
    """Rows of a cluster-scoped kind: the polled objects that validate, by name."""
    from gryvia_operator.api.parse import parse_valid

    def rows(ctx: Ctx) -> dict[str, Any]:
        return {o.name: o for o in sorted(parse_valid(model, ctx.polled), key=lambda o: o.name)}

    return rows


def polled_view(
    kind: ObjectKind,
    model: type[Any],
    *,
    title: str,
    columns: tuple[Column, ...],
    cells: Callable[[Any, Ctx], list[Cell]],
    search: Callable[[Any], str],
    placeholder: str,
    details: Callable[[Any, Ctx], Sequence[tuple[str, str]]] | None = None,
    sections: Callable[[dict[str, Any], Ctx], list[Section]] | None = None,
    **more: Any,
) -> ViewSpec:
    """Register and return the view of `kind` (objects validated as `model`): `details`
    gives its detail section (titled with the kind's noun) unless `sections` builds them
    all; `more` sets any other `ViewSpec` field (e.g. `sort_values`, whose default sorts a
    `created` column by age)."""
    row = CONSOLE_KIND[kind]
    noun = row.title
    namespaced = row.resource.namespaced
    if sections is None:
        assert details is not None, "give details or sections"
        sections = model_sections(model, noun[0].upper() + noun[1:], details)
    spec = ViewSpec(
        name=row.view,
        title=title,
        columns=columns,
        rows=(lambda ctx: rows_by_name(model, ctx.polled)) if namespaced else _by_name(model),
        cells=cells,
        search=search,
        ref=lambda item: ObjectRef(kind, item.namespace if namespaced else None, item.name),
        poll=poll_objects(kind),
        poll_every=POLL_SECONDS,
        sort_values={"created": age_value},
        sections=sections,
        empty=f"No {_plural(row.resource.kind)}.",
        noun=noun,
        placeholder=placeholder,
    )
    return register(replace(spec, **more), kind)
