"""The view registry: one declarative `ViewSpec` per kind a person looks at, from which the
console builds its list view and its detail (describe) view, instead of a screen per kind.

A spec says where the rows come from (the store's kinds, or a poll of the source), their
columns and cells, the text the `/` filter matches, which object a row stands for (`ObjectRef`,
what `d` describes and `e` shows the events of), and the extra detail sections the kind adds
to the generic `kubectl describe`-style ones (`core.describe`). Specs live in `kinds.py`,
`kind_tenants.py`, `kind_budgets.py` and `kind_policies.py`; `screens/registry.py` turns them
into screens. Add a kind: give it a row in `kindnames.CONSOLE_KINDS` (its view name, title and
words; its scope, names and REST path come from its API resource), write a spec, `register`
it and import its module in `kinds.py`.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeVar

from gryvia_cli.core.cells import Marked
from gryvia_cli.core.describe import Section
from gryvia_cli.tui.bindings import list_sort_keys
from gryvia_cli.tui.kindnames import CONSOLE_KINDS, Kind
from gryvia_cli.tui.source import ClusterSource, ObjectKind
from gryvia_cli.tui.store import ClusterStore
from gryvia_cli.tui.widgets.rowtable import Cell, Column

if TYPE_CHECKING:
    from pydantic import BaseModel

M = TypeVar("M", bound="BaseModel")


SINGULAR: Mapping[ObjectKind, str] = {row.name: row.title for row in CONSOLE_KINDS}
"""What titles call one object of each kind ("Describe reservation rsv-l40")."""


@dataclass(frozen=True)
class ObjectRef:
    """One API object: its kind, namespace (None for cluster-scoped kinds) and name."""

    kind: ObjectKind
    namespace: str | None
    name: str

    @property
    def label(self) -> str:
        """`pod tenant-acme/llama-0`, `tenant acme`: the kind's singular noun, then the name."""
        where = f"{self.namespace}/{self.name}" if self.namespace else self.name
        return f"{SINGULAR.get(self.kind, self.kind)} {where}"

    @property
    def events_namespace(self) -> str:
        """Where its events are: its namespace, `default` for cluster-scoped objects."""
        return self.namespace or "default"


@dataclass(frozen=True)
class Ctx:
    """What a spec's functions see: the store, the clock, what the view polled (rows of
    polled views), and what the detail view fetched (`ViewSpec.fetch`)."""

    store: ClusterStore
    now: datetime
    polled: list[dict[str, Any]] = field(default_factory=list)
    extra: Mapping[str, list[dict[str, Any]]] = field(default_factory=dict)


Poll = Callable[[ClusterSource, str | None], list[dict[str, Any]]]
"""Read rows from the source (thread worker): (source, namespace or None for all)."""


def poll_objects(kind: ObjectKind) -> Poll:
    """A poll of every object of `kind` (namespaced kinds: in the console's namespace)."""

    def poll(source: ClusterSource, namespace: str | None) -> list[dict[str, Any]]:
        return source.list_objects(kind, namespace)

    return poll


def model_sections(
    model: type[M], title: str, details: Callable[[M, Ctx], Sequence[tuple[str, str]]]
) -> Callable[[dict[str, Any], Ctx], list[Section]]:
    """A spec's `sections`: one titled `title` with `details` of the object validated as
    `model` (what the kind's `gryvia X get` shows), or the first line of why it does not
    validate."""

    def sections(raw: dict[str, Any], ctx: Ctx) -> list[Section]:
        try:
            item = model.model_validate(raw)
        except ValueError as exc:
            return [Section(title, [("Invalid", str(exc).splitlines()[0])])]
        return [Section(title, list(details(item, ctx)))]

    return sections


def rows_by_name(model: type[Any], polled: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The polled objects that validate as `model`, keyed `namespace/name`, in that order (the
    `rows` of a namespaced kind's view)."""
    from gryvia_operator.api.parse import parse_valid

    found = sorted(parse_valid(model, polled), key=lambda o: (o.namespace, o.name))
    return {f"{o.namespace}/{o.name}": o for o in found}


def row_cells(values: Sequence[object], markers: Mapping[int, str] | None = None) -> list[Cell]:
    """Cells of a row that a core function built for the CLI's table: a `Marked` value keeps
    its marker, `markers` gives others one by index, anything else is its text unmarked."""
    given = markers or {}
    return [
        (v.text, v.marker) if isinstance(v, Marked) else (str(v), given.get(i, ""))
        for i, v in enumerate(values)
    ]


def _no_sections(raw: dict[str, Any], ctx: Ctx) -> list[Section]:
    return []


def _no_fetch(source: ClusterSource, raw: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    return {}


@dataclass(frozen=True)
class ViewSpec:
    """A list view and a detail view of one kind; see the module docstring.

    `rows(ctx)` returns items by row key, in display order; `cells(item, ctx)` their cells
    (one per column, in column order); `search(item)` the lower-case text `/` matches;
    `ref(item)` the object a row stands for (None: nothing to describe); `kinds` the store
    kinds whose changes redraw the view, `poll` (with `poll_every` seconds) for rows that are
    not in the store; `sections(raw, ctx)` detail sections shown before the generic ones and
    `fetch(source, raw)` what they need read first (thread worker, by name into `ctx.extra`).
    """

    name: str
    title: str
    columns: tuple[Column, ...]
    rows: Callable[[Ctx], dict[str, Any]]
    cells: Callable[[Any, Ctx], list[Cell]]
    search: Callable[[Any], str]
    ref: Callable[[Any], ObjectRef | None]
    kinds: frozenset[Kind] = frozenset()
    poll: Poll | None = None
    poll_every: float = 5.0
    sections: Callable[[dict[str, Any], Ctx], list[Section]] = _no_sections
    fetch: Callable[[ClusterSource, dict[str, Any]], dict[str, list[dict[str, Any]]]] = _no_fetch
    empty: str = "Nothing here."
    noun: str = "row"
    nouns: str = ""
    """The plural of `noun` when it is not noun + "s" (`priorities`)."""
    placeholder: str = "filter: words"
    order: str = ""
    """How rows are ordered, for the status line (`newest first`); "" says nothing."""
    sort_values: Mapping[str, Callable[[Any], Hashable | None]] = field(default_factory=dict)
    """Sort value of an item per column key (`seen`: the event's age); a column not listed
    sorts by its cell's text (a leading number by value). The first column's order must be
    the order of `rows` (the view starts sorted by it, ties in `rows` order)."""
    descending: bool = False
    """The view starts sorted by its first column descending (its header says `↓`): `rows`
    come highest first, and its sort value still grows with the column's value."""
    table: str = ""
    """Its table's name in console.yaml (`columns:`); "" means `name`."""

    @property
    def table_name(self) -> str:
        """The name its hidden columns are saved under in console.yaml."""
        return self.table or self.name


REGISTRY: dict[str, ViewSpec] = {}
"""Specs by view name."""
BY_KIND: dict[str, ViewSpec] = {}
"""The spec whose detail view describes objects of an `ObjectKind` (tenants, pods)."""


def register(spec: ViewSpec, *kinds: ObjectKind) -> ViewSpec:
    """Add `spec` to the registry (and as the describer of `kinds`), derive its sort keys
    (`bindings.list_sort_keys`); returns it."""
    REGISTRY[spec.name] = spec
    list_sort_keys(spec.name, [(c.key, c.label) for c in spec.columns])
    for kind in kinds:
        BY_KIND[kind] = spec
    return spec
