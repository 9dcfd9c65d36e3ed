"""The `-o` formats that carry an argument, as kubectl has them: `jsonpath=TEMPLATE`,
`jsonpath-file=FILE`, `custom-columns=SPEC` and `custom-columns-file=FILE`.

`output_parser` parses every `-o` option (the global one, `OutputOpt` and the billing
reports'): it reads `NAME` or `NAME=ARGUMENT`, parses the template at once (a bad one
is a usage error naming `-o`, exit 2) and keeps it here; the option's value stays a plain
format member (`OutputFormat.jsonpath`), so the commands' `fmt in MACHINE_FORMATS` tests are
unchanged. `render_templated` prints the document `-o json` would print through it
(`output.render_data` calls it). The languages are kubectl's: `core/jsonpath.py`,
`core/customcolumns.py`.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any, TypeVar

import typer

from gryvia_cli.errors import GryviaError

F = TypeVar("F", bound=StrEnum)

TEMPLATE_NAMES = {
    "jsonpath": ("jsonpath", False),
    "jsonpath-file": ("jsonpath", True),
    "custom-columns": ("custom-columns", False),
    "custom-columns-file": ("custom-columns", True),
}
"""`-o` name -> (the format it selects, whether its argument is a file)."""


@dataclass
class Templates:
    """The templates the last `-o NAME=ARGUMENT` of each kind gave (the command's own `-o`
    is parsed after the global one, so it wins, as `Session.fmt` picks it)."""

    jsonpath: Any = None
    columns: list[Any] = field(default_factory=list)
    source: dict[str, str] = field(default_factory=dict)


templates = Templates()


def parse_output(value: str, choices: type[F]) -> F:
    """The member of `choices` that `value` names (case-insensitive), compiling and keeping
    the template of `jsonpath=`/`custom-columns=` (and their `-file=` forms).

    Raises ValueError naming the format and the fix: an unknown format, a template format
    without its argument, an unreadable file, or kubectl's parse error of the template."""
    name, equals, argument = value.partition("=")
    key = name.strip().lower()
    known = [m.value for m in choices]
    if key in TEMPLATE_NAMES and TEMPLATE_NAMES[key][0] in known:
        fmt, is_file = TEMPLATE_NAMES[key]
        if not equals or not argument:
            what = "FILE" if is_file else "TEMPLATE" if fmt == "jsonpath" else "SPEC"
            raise ValueError(f"{key} needs its argument: -o {key}={what}")
        text = _read(argument, key) if is_file else argument
        _compile(fmt, text, is_file)
        return choices(fmt)
    try:
        return choices(value.lower())
    except ValueError:
        shown = [n for n in known if n not in TEMPLATE_NAMES]
        shown += [f"{n}=..." for n, (fmt, _) in TEMPLATE_NAMES.items() if fmt in known]
        raise ValueError(f"{value!r} is not a format: use one of {', '.join(shown)}") from None


def _read(path: str, key: str) -> str:
    """The text of a template file; ValueError naming `-o KEY=` when it cannot be read."""
    try:
        return Path(path).expanduser().read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"-o {key}={path}: cannot read the file ({exc})") from None


def _compile(fmt: str, text: str, is_file: bool) -> None:
    """Parse `text` as `fmt`'s template and keep it; ValueError with kubectl's message."""
    from gryvia_cli.core.jsonpath import JsonPathError

    try:
        if fmt == "jsonpath":
            from gryvia_cli.core.jsonpath import compile_template

            templates.jsonpath = compile_template(text)
        else:
            from gryvia_cli.core.customcolumns import columns_from_file, columns_from_spec

            templates.columns = columns_from_file(text) if is_file else columns_from_spec(text)
    except JsonPathError as exc:
        raise ValueError(f"error parsing {fmt} {text}, {exc}") from None
    templates.source[fmt] = text


def output_parser(choices: type[F]) -> Callable[[Any], F]:
    """The `parser=` of an `-o` option over the formats of `choices` (a StrEnum): a bad
    value is a usage error (exit 2) naming -o and saying what to write instead."""

    def parse(value: Any) -> F:
        if isinstance(value, choices):
            return value
        try:
            return parse_output(str(value), choices)
        except ValueError as exc:
            raise typer.BadParameter(str(exc), param_hint="'-o' / '--output'") from None

    return parse


def output_completion(choices: type[StrEnum]) -> Callable[[str], list[str]]:
    """The `autocompletion=` of an `-o` option: format names starting with the typed text
    (the template ones with their `=`)."""
    known = [m.value for m in choices]
    names = [n for n in known if n not in ("jsonpath", "custom-columns")]
    names += [f"{n}=" for n, (fmt, _) in TEMPLATE_NAMES.items() if fmt in known]

    def complete(incomplete: str) -> list[str]:
        return [n for n in names if n.startswith(incomplete.lower())]

    return complete


def render_templated(data: Any, fmt: str) -> None:
    """Print `data` (the document `-o json` prints) through the kept template of `fmt`
    ("jsonpath" or "custom-columns"), exactly as kubectl would print it. Raises GryviaError
    (exit 1) when the template fails on this document, as kubectl fails."""
    import json

    from gryvia_cli.core.jsonpath import JsonPathError

    data = json.loads(json.dumps(data, default=str))  # the values `-o json` prints
    try:
        if fmt == "jsonpath":
            text = templates.jsonpath.render(data)
            if sys.stdout.isatty():  # kubectl prints raw; a terminal is shown no escapes
                text = text.replace("\x1b", "^[")
        else:
            from gryvia_cli.core.customcolumns import render_columns

            text = render_columns(data, templates.columns)
    except JsonPathError as exc:
        raise GryviaError(
            f"error executing {fmt} {templates.source.get(fmt, '')!r}: {exc}",
            hint="check the template against the document `-o json` prints",
        ) from None
    sys.stdout.write(text)
    sys.stdout.flush()
