"""The syntax of kubectl's JSONPath templates: the node types and the parser.

A template is literal text and actions in braces; an action is a sequence of steps (`.name`,
`[*]`, `[1:3]`, `[a,b]`, `[?(@.x=="y")]`, `..`, `"literal"`, numbers, `true`/`false`, the
keywords `range` and `end`). The grammar, terminators and error messages are client-go's
`util/jsonpath/parser.go` (kubectl v1.36): `unclosed action`, `unterminated array`,
`invalid array index X`, `unterminated filter`, `unterminated quoted string`, `cannot parse
number X`, `unrecognized character in action: U+0021 '!'`. Evaluation lives in
`core/jsonpath.py`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = [
    "Action",
    "Array",
    "Field",
    "Filter",
    "Identifier",
    "Literal",
    "Recursive",
    "Step",
    "Text",
    "Union",
    "Wildcard",
    "parse_template",
]


@dataclass(frozen=True)
class Text:
    """Literal text: outside braces, or a quoted string inside an action (one value)."""

    text: str


@dataclass(frozen=True)
class Field:
    """`.name`: a map's key (backslashes removed: `app\\.kubernetes\\.io/name`)."""

    name: str


@dataclass(frozen=True)
class Wildcard:
    """`.*` or `[*]` as a field: every child."""


@dataclass(frozen=True)
class Recursive:
    """`..`: the value and every descendant that has children."""


@dataclass(frozen=True)
class Array:
    """`[start:end:step]`; None where not given. `end_derived`: `[i]` (end is i+1)."""

    start: int | None
    end: int | None
    step: int | None
    end_derived: bool = False


@dataclass(frozen=True)
class Union:
    """`[a,b]`: the results of each branch in turn."""

    branches: tuple[tuple[Step, ...], ...]


@dataclass(frozen=True)
class Filter:
    """`[?(LEFT OP RIGHT)]`, or `[?(LEFT)]` with op "exists"."""

    left: tuple[Step, ...]
    op: str
    right: tuple[Step, ...]


@dataclass(frozen=True)
class Literal:
    """A number or boolean inside an action: that value once per input value."""

    value: int | float | bool


@dataclass(frozen=True)
class Identifier:
    """A bare word: `range` and `end` are keywords, anything else fails when evaluated."""

    name: str


Step = Text | Field | Wildcard | Recursive | Array | Union | Filter | Literal | Identifier


@dataclass(frozen=True)
class Action:
    """One `{...}`: its steps in order."""

    steps: tuple[Step, ...]


_DICT_KEY = re.compile(r"^'([^']*)'$")
_SLICE = re.compile(r"^(-?[0-9]*)(:-?[0-9]*)?(:-?[0-9]*)?$")
_FILTER = re.compile(r"^([^!<>=]+)([!<>=]+)(.+?)$", re.DOTALL)
_TERMINATORS = frozenset(" \t\r\n.,[]$@{}")
_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}


def parse_template(source: str) -> list[Text | Action]:
    """The top-level nodes of a template: Text and Action. Raises ValueError with
    client-go's message for a template kubectl refuses."""
    nodes: list[Text | Action] = []
    pos = 0
    while True:
        brace = source.find("{", pos)
        if brace < 0:
            if pos < len(source):
                nodes.append(Text(source[pos:]))
            return nodes
        if brace > pos:
            nodes.append(Text(source[pos:brace]))
        steps, pos = _parse_action(source, brace + 1)
        nodes.append(Action(tuple(steps)))


def _sub_action(text: str) -> list[Step]:
    """The steps of `text` parsed as one action (union branches, filter operands, keys)."""
    steps, _ = _parse_action(text + "}", 0)
    return steps


def _parse_action(src: str, pos: int) -> tuple[list[Step], int]:
    """Steps from `pos` up to the closing brace; returns them and the index after it."""
    steps: list[Step] = []
    while True:
        if src.startswith("}", pos):
            return steps, pos + 1
        if src.startswith("[?(", pos):
            pos = _parse_filter(src, pos + 3, steps)
            continue
        if src.startswith("..", pos):
            if steps and isinstance(steps[-1], Recursive):
                raise ValueError("invalid multiple recursive descent")
            steps.append(Recursive())
            pos += 2
            if pos < len(src) and _alnum(src[pos]):
                pos = _parse_field(src, pos, steps)
            continue
        if pos >= len(src) or src[pos] in "\r\n":
            raise ValueError("unclosed action")
        char = src[pos]
        if char in " @$":
            pos += 1
        elif char == "[":
            pos = _parse_array(src, pos, steps)
        elif char in "\"'":
            pos = _parse_quote(src, pos, steps)
        elif char == ".":
            pos = _parse_field(src, pos + 1, steps)
        elif char in "+-" or char.isdigit():
            pos = _parse_number(src, pos, steps)
        elif _alnum(char):
            end = _scan_word(src, pos)
            word = src[pos:end]
            steps.append(Literal(word == "true") if word in ("true", "false") else Identifier(word))
            pos = end
        else:
            raise ValueError(f"unrecognized character in action: U+{ord(char):04X} {char!r}")


def _alnum(char: str) -> bool:
    return char == "_" or char.isalpha() or char.isdigit()


def _scan_word(src: str, pos: int) -> int:
    """The index of the next terminator from `pos` (a backslash escapes the next char)."""
    while pos < len(src):
        if src[pos] == "\\":
            pos += 2
            continue
        if src[pos] in _TERMINATORS:
            break
        pos += 1
    return min(pos, len(src))


def _parse_field(src: str, pos: int, steps: list[Step]) -> int:
    end = _scan_word(src, pos)
    name = src[pos:end]
    steps.append(Wildcard() if name == "*" else Field(name.replace("\\", "")))
    return end


def _parse_number(src: str, pos: int, steps: list[Step]) -> int:
    end = pos + 1 if src[pos] in "+-" else pos
    while end < len(src) and (src[end] == "." or src[end].isdigit()):
        end += 1
    text = src[pos:end]
    if re.fullmatch(r"[+-]?[0-9]+", text):
        steps.append(Literal(int(text)))
    elif re.fullmatch(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)", text):
        steps.append(Literal(float(text)))
    else:
        raise ValueError(f"cannot parse number {text}")
    return end


def _parse_array(src: str, pos: int, steps: list[Step]) -> int:
    """`[...]` from its opening bracket: a union, a quoted key, or a slice."""
    end = pos + 1
    while end < len(src) and src[end] not in "]\n":
        end += 1
    if end >= len(src) or src[end] == "\n":
        raise ValueError("unterminated array")
    text = src[pos + 1 : end]
    text = ":" if text == "*" else text
    parts = text.split(",")
    if len(parts) > 1:
        steps.append(Union(tuple(tuple(_sub_action(f"[{p.strip(' ')}]")) for p in parts)))
        return end + 1
    key = _DICT_KEY.match(text)
    if key:
        steps.extend(_sub_action("." + key.group(1)))
        return end + 1
    match = _SLICE.match(text)
    if match is None:
        raise ValueError(f"invalid array index {text}")
    groups = [match.group(1) or "", match.group(2) or "", match.group(3) or ""]
    start = _index(groups[0]) if groups[0] else None
    if groups[1]:
        stop = _index(groups[1][1:]) if groups[1][1:] else None
        derived = False
    else:
        stop, derived = (start or 0) + 1, True
    step = _index(groups[2][1:]) if groups[2][1:] else None
    steps.append(Array(start, stop, step, derived))
    return end + 1


def _index(text: str) -> int:
    if not re.fullmatch(r"-?[0-9]+", text):
        raise ValueError(f"array index {text} is not a number")
    return int(text)


def _parse_filter(src: str, pos: int, steps: list[Step]) -> int:
    """`[?(...)]` from after `[?(`: the operands split at the first run of !<>= signs."""
    begin = pos
    opened = closed = False
    pair = ""
    while True:
        if pos >= len(src) or src[pos] == "\n":
            raise ValueError("unterminated filter")
        char = src[pos]
        pos += 1
        if char in "\"'":
            if not opened:
                opened, pair = True, char
            elif src[pos - 2] != "\\" and char == pair:
                closed = True
        elif char == ")" and opened == closed:
            break
    if pos >= len(src) or src[pos] != "]":
        raise ValueError("unclosed array expect ]")
    text = src[begin : pos - 1]
    match = _FILTER.match(text)
    if match is None:
        steps.append(Filter(tuple(_sub_action(text)), "exists", ()))
    else:
        left, op, right = match.groups()
        steps.append(Filter(tuple(_sub_action(left)), op, tuple(_sub_action(right))))
    return pos + 1


def _parse_quote(src: str, pos: int, steps: list[Step]) -> int:
    """A quoted literal from its opening quote, unquoted as Go's strconv.UnquoteChar."""
    quote = src[pos]
    end = pos + 1
    while True:
        if end >= len(src) or src[end] == "\n":
            raise ValueError("unterminated quoted string")
        if src[end] == quote and src[end - 1] != "\\":
            break
        end += 1
    raw = src[pos : end + 1]
    try:
        steps.append(Text(_unquote(raw[1:-1], quote)))
    except ValueError:
        raise ValueError(f"unquote string {raw} error invalid syntax") from None
    return end + 1


def _unquote(body: str, quote: str) -> str:
    """Go escapes: \\a \\b \\f \\n \\r \\t \\v \\\\ \\' \\" \\xHH \\ooo \\uHHHH
    \\UHHHHHHHH; an unescaped `quote` or an unknown escape raises ValueError."""
    out: list[str] = []
    i = 0
    while i < len(body):
        char = body[i]
        if char == quote:
            raise ValueError(body)
        if char != "\\":
            out.append(char)
            i += 1
            continue
        code = body[i + 1 : i + 2]
        if code in _ESCAPES:
            out.append(_ESCAPES[code])
            i += 2
        elif code == "\\" or (code in "'\"" and code == quote and code):
            out.append(code)
            i += 2
        elif code in ("x", "u", "U"):
            size = {"x": 2, "u": 4, "U": 8}[code]
            digits = body[i + 2 : i + 2 + size]
            if len(digits) != size or not re.fullmatch(r"[0-9a-fA-F]+", digits):
                raise ValueError(body)
            out.append(chr(int(digits, 16)))
            i += 2 + size
        elif re.fullmatch(r"[0-7]{3}", body[i + 1 : i + 4]) and int(body[i + 1 : i + 4], 8) < 256:
            out.append(chr(int(body[i + 1 : i + 4], 8)))
            i += 4
        else:
            raise ValueError(body)
    return "".join(out)
