"""What the create/list/get/delete groups of Gryvia's own kinds share (`gryvia budget`,
`checkpoint`, `hook`, `priority`, `reservation`, `tenant`): reading one object with a hint
when it is missing, printing what a write returned, listing validated objects, deleting after
a confirmation. Each group keeps its own options, columns and wording.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import typer

from gryvia_cli.cli.options import confirm, render_raw
from gryvia_cli.cli.session import Session
from gryvia_cli.core.cells import plural_of
from gryvia_cli.errors import InvalidInputError, NotFoundError
from gryvia_cli.kube.resources import Resource
from gryvia_cli.output import (
    MACHINE_FORMATS,
    OutputFormat,
    info,
    render_data,
    render_names,
    render_one,
    render_table,
    success,
    warn,
)

if TYPE_CHECKING:
    from pydantic import BaseModel

M = TypeVar("M", bound="BaseModel")


@dataclass(frozen=True)
class TableSpec(Generic[M]):
    """How `list` shows a kind: columns and a row builder `(object, now) -> cells`, plain and
    wide (`-o wide`)."""

    columns: tuple[str, ...]
    row: Callable[[M, datetime], list[Any]]
    wide_columns: tuple[str, ...]
    wide_row: Callable[[M, datetime], list[Any]]


@dataclass(frozen=True)
class ObjectGroup:
    """One kind's command group: its resource, the noun its messages use (`checkpoint
    guard`) and the group's name in hints (`gryvia checkpoint list`)."""

    resource: Resource
    noun: str
    group: str

    def where(self, name: str, namespace: str | None) -> str:
        """`NAME`, or `NAME in namespace NS` for a namespaced object."""
        return f"{name} in namespace {namespace}" if namespace else name

    def qualified(self, name: str) -> str:
        """`<plural>.<group>/NAME`, as `-o name` prints it."""
        return f"{self.resource.qualified}/{name}"

    def read(self, state: Session, name: str, namespace: str | None = None) -> dict[str, Any]:
        """The object as stored; NotFoundError naming it, with `see 'gryvia GROUP list'`."""
        try:
            return state.access().get(self.resource, name, namespace)
        except NotFoundError:
            where = f" in namespace {namespace}" if namespace else ""
            raise NotFoundError(
                f'{self.noun} "{name}" not found{where}',
                hint=f"see 'gryvia {self.group} list'",
            ) from None

    def print_written(self, state: Session, obj: dict[str, Any], output: Any) -> None:
        """What a create or apply prints on stdout: the object for `-o json|yaml`, else its
        `-o name` line (the success message went to stderr)."""
        fmt = state.fmt(output, OutputFormat.name)
        if fmt in MACHINE_FORMATS:
            render_data(obj, fmt)
        else:
            render_names([self.qualified(str((obj.get("metadata") or {}).get("name") or ""))])

    def submit(
        self,
        state: Session,
        file: str,
        namespace: str | None,
        output: Any,
        build: Callable[[Any, str, str], dict[str, Any]],
        follow: str,
    ) -> None:
        """Create one object from a manifest file (`-` for stdin) that holds exactly one
        document of the kind: `build(document, namespace, source)` returns the body to
        create (a ValueError is an InvalidInputError and nothing is created). Says `<noun>
        NS/NAME submitted; follow it with `gryvia GROUP FOLLOW NAME`` and prints what
        `print_written` prints. Raises InvalidInputError when the file cannot be read, is not
        YAML or holds another number of documents."""
        from gryvia_cli.cli.files import read_one_document

        doc, source = read_one_document(file, self.resource.kind)
        ns = state.manifest_namespace(doc, namespace)
        try:
            body = build(doc, ns, source)
        except ValueError as exc:
            raise InvalidInputError(str(exc)) from None
        obj = state.access().create(self.resource, body, ns)
        name = body["metadata"]["name"]
        follow_cmd = f"gryvia {self.group} {follow} {name}"
        success(f"{self.noun} {ns}/{name} submitted; follow it with `{follow_cmd}`")
        self.print_written(state, obj, output)

    def show(
        self,
        state: Session,
        name: str,
        namespace: str | None,
        output: OutputFormat | None,
        model: type[M],
        details: Callable[[M], Sequence[tuple[str, str]]],
    ) -> None:
        """`get` of one object (NotFoundError as `read` raises it): `-o json|yaml` as stored,
        `-o name` its line, else the label/value lines `details` builds from the object
        validated against `model` (`output.render_one`)."""
        fmt = state.fmt(output)
        obj = self.read(state, name, namespace)
        render_one(obj, fmt, self.qualified(name), lambda: details(self.validated(model, obj)))

    def validated(self, model: type[M], obj: dict[str, Any]) -> M:
        """`obj` validated as `model`; InvalidInputError naming the object, the first field
        that fails and the fix (`gryvia apply`) when it does not validate."""
        from pydantic import ValidationError

        try:
            return model.model_validate(obj)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            name = (obj.get("metadata") or {}).get("name")
            raise InvalidInputError(
                f"{self.noun} {name} is invalid ({where}: "
                f"{str(first['msg']).removeprefix('Value error, ')}); fix it with `gryvia apply`"
            ) from None

    def listed(
        self,
        state: Session,
        model: type[M],
        fmt: OutputFormat,
        namespace: str | None = None,
        empty: str | None = None,
    ) -> list[M] | None:
        """List the kind (in `namespace`, all namespaces when None): `-o json|yaml|name`
        printed as the API returned it (None returned); else the items that validate against
        `model` (a warning for each that does not), None with `empty` said when there are
        none (default `No <noun>s found.`)."""
        from gryvia_operator.api.parse import parse_all

        data = state.access().list_objects(self.resource, namespace)
        if render_raw(data, self.resource, fmt):
            return None
        found, problems = parse_all(model, data.get("items") or [])
        for problem in problems:
            warn(f"skipped an invalid {self.noun}: {problem}")
        if not found:
            info(empty or f"No {plural_of(self.noun)} found.")
            return None
        return found

    def print_table(
        self,
        state: Session,
        model: type[M],
        output: OutputFormat | None,
        namespace: str | None,
        all_namespaces: bool,
        table: TableSpec[M],
        empty: str | None = None,
    ) -> list[M]:
        """`list` of the kind: machine formats as the API returned them, else the validated
        objects sorted by namespace and name as `table` builds them (the wide table with `-o
        wide`; a NAMESPACE column first with `-A`). Returns the objects shown ([] for none or
        a machine format)."""
        fmt = state.fmt(output)
        ns = None if all_namespaces else state.resolve_namespace(namespace)
        found = self.listed(state, model, fmt, ns, empty=empty)
        if found is None:
            return []
        found.sort(key=lambda m: (getattr(m, "namespace", ""), getattr(m, "name", "")))
        wide = fmt is OutputFormat.wide
        now = state.now()
        columns, build = (
            (table.wide_columns, table.wide_row) if wide else (table.columns, table.row)
        )
        rows = rows_for(found, lambda m: build(m, now), ns is None)
        render_table(("NAMESPACE", *columns) if ns is None else columns, rows)
        return found

    def delete(
        self,
        state: Session,
        name: str,
        namespace: str | None,
        yes: bool,
        question: str | None = None,
        done: str | None = None,
    ) -> None:
        """Delete one object after `question` is confirmed (`--yes` skips it; no answer
        exits 1 and deletes nothing); NotFoundError first when it does not exist. Prints
        `done` (default `<noun> NAME deleted`) and the `-o name` line."""
        self.read(state, name, namespace)
        where = self.where(name, namespace)
        if not confirm(question or f"Delete {self.noun} {where}?", yes):
            raise typer.Exit(1)
        state.access().delete(self.resource, name, namespace)
        success(done or f"{self.noun} {name} deleted")
        render_names([self.qualified(name)])


def rows_for(
    items: list[M], row: Callable[[M], list[Any]], all_namespaces: bool
) -> list[list[Any]]:
    """Table rows of `items`, with the object's namespace first when listing all of them."""
    rows = [row(item) for item in items]
    if not all_namespaces:
        return rows
    return [
        [getattr(item, "namespace", ""), *cells] for item, cells in zip(items, rows, strict=True)
    ]
