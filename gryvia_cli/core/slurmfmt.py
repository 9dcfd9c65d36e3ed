"""Slurm's text conventions for `gryvia squeue|sacct|sinfo`: format specs, times, host lists.

Sources: squeue(1) `-o/--format` (`%[[.]size]type`: `.` right-justifies, the size pads and
truncates; default `"%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R"`), sacct(1) `--format`
(`field[%size]`, right-justified, a `+` marks a truncated value, a dashed line under the
header), sinfo(1) (`"%9P %5a %.10l %.6D %.6t %N"`), and Slurm's time and host-list forms
(`M:SS`, `H:MM:SS`, `D-HH:MM:SS`; `node[01-03,07]`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

_SPEC = re.compile(r"%(\.)?(\d+)?([A-Za-z])")


@dataclass(frozen=True)
class Field:
    """One column: `letter` (squeue/sinfo) or name (sacct), header, width (0: as wide as the
    value), right-justified or not."""

    key: str
    header: str
    width: int
    right: bool


def parse_percent_format(
    text: str, headers: Mapping[str, str]
) -> tuple[list[Field | str], list[str]]:
    """An squeue/sinfo `-o` format into fields and literal text; unknown letters are returned
    as the second value (the command refuses them, naming the letters it knows)."""
    parts: list[Field | str] = []
    unknown: list[str] = []
    pos = 0
    for match in _SPEC.finditer(text):
        if match.start() > pos:
            parts.append(text[pos : match.start()])
        right, width, letter = match.group(1) is not None, match.group(2), match.group(3)
        if letter not in headers:
            unknown.append(letter)
        parts.append(Field(letter, headers.get(letter, letter), int(width or 0), right))
        pos = match.end()
    if pos < len(text):
        parts.append(text[pos:])
    return parts, unknown


def _cell(value: str, spec: Field) -> str:
    if spec.width == 0:
        return value
    value = value[: spec.width]
    return value.rjust(spec.width) if spec.right else value.ljust(spec.width)


def render_percent(
    parts: Sequence[Field | str], rows: Iterable[Mapping[str, str]], *, header: bool = True
) -> list[str]:
    """Lines as squeue/sinfo print them: the header (field titles in the same widths), then
    one line per row; literal text between fields is kept, trailing blanks dropped."""
    lines = []
    if header:
        lines.append("".join(p if isinstance(p, str) else _cell(p.header, p) for p in parts))
    for row in rows:
        lines.append(
            "".join(p if isinstance(p, str) else _cell(row.get(p.key, ""), p) for p in parts)
        )
    return [line.rstrip() for line in lines]


def parse_sacct_format(text: str, widths: Mapping[str, int]) -> tuple[list[Field], list[str]]:
    """sacct's `--format=JobID,JobName%30,...` (names case-insensitive); unknown names are
    returned as the second value."""
    fields: list[Field] = []
    unknown: list[str] = []
    canonical = {name.lower(): name for name in widths}
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        name, _, size = item.partition("%")
        key = canonical.get(name.lower())
        if key is None:
            unknown.append(name)
            continue
        width = int(size) if size.isdigit() else widths[key]
        fields.append(Field(key, key, width, True))
    return fields, unknown


def render_sacct(
    fields: Sequence[Field], rows: Iterable[Mapping[str, str]], *, header: bool = True
) -> list[str]:
    """sacct's layout: right-justified columns one blank apart, a dashed rule under the
    header, a value longer than its column cut with a trailing `+`."""

    def cell(value: str, width: int) -> str:
        if len(value) > width:
            value = value[: width - 1] + "+"
        return value.rjust(width)

    lines = []
    if header:
        lines.append(" ".join(cell(f.header, f.width) for f in fields))
        lines.append(" ".join("-" * f.width for f in fields))
    for row in rows:
        lines.append(" ".join(cell(row.get(f.key, ""), f.width) for f in fields))
    return lines


def slurm_duration(seconds: float | None) -> str:
    """Slurm's elapsed time: `0:00`, `5:07`, `1:02:03`, `2-03:04:05` (None: `0:00`)."""
    total = max(int(seconds or 0), 0)
    days, rest = divmod(total, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days}-{hours:02d}:{minutes:02d}:{secs:02d}"
    if hours:
        return f"{hours}:{minutes:02d}:{secs:02d}"
    return f"{minutes}:{secs:02d}"


def slurm_elapsed(seconds: float | None) -> str:
    """sacct's Elapsed: always `HH:MM:SS`, with `D-` in front past a day."""
    total = max(int(seconds or 0), 0)
    days, rest = divmod(total, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    text = f"{hours:02d}:{minutes:02d}:{secs:02d}"
    return f"{days}-{text}" if days else text


def slurm_timestamp(when: datetime | None) -> str:
    """Slurm's timestamp `2026-12-01T10:00:00` (UTC here), or `N/A`."""
    return when.strftime("%Y-%m-%dT%H:%M:%S") if when else "N/A"


def slurm_limit(seconds: int | None) -> str:
    """A time limit as Slurm prints it, `UNLIMITED` when there is none."""
    return "UNLIMITED" if not seconds else slurm_duration(seconds)


_NUMBERED = re.compile(r"^(.*?)(\d+)$")


def compress_hostlist(names: Iterable[str]) -> str:
    """Slurm's host list: `gpu-01,gpu-02,gpu-03,cpu` -> `cpu,gpu-[01-03]` (names sharing a
    prefix and a number width are grouped into ranges; the rest are kept as they are)."""
    groups: dict[tuple[str, int], list[int]] = {}
    plain: list[str] = []
    for name in sorted(set(names)):
        match = _NUMBERED.match(name)
        if match is None:
            plain.append(name)
            continue
        prefix, digits = match.group(1), match.group(2)
        groups.setdefault((prefix, len(digits)), []).append(int(digits))
    out = list(plain)
    for (prefix, width), numbers in sorted(groups.items()):
        if len(numbers) == 1:
            out.append(f"{prefix}{numbers[0]:0{width}d}")
            continue
        ranges: list[str] = []
        start = prev = numbers[0]
        for number in [*numbers[1:], None]:
            if number is not None and number == prev + 1:
                prev = number
                continue
            ranges.append(
                f"{start:0{width}d}" if start == prev else f"{start:0{width}d}-{prev:0{width}d}"
            )
            if number is not None:
                start = prev = number
        out.append(f"{prefix}[{','.join(ranges)}]")
    return ",".join(sorted(out))


def select(
    rows: Iterable[Any], wanted: Iterable[str] | None, key: Callable[[Any], str]
) -> list[Any]:
    """Rows whose `key` is in the comma-separated `wanted` values (None: all rows)."""
    values = {v.strip() for item in wanted or [] for v in item.split(",") if v.strip()}
    rows = list(rows)
    return rows if not values else [row for row in rows if key(row) in values]
