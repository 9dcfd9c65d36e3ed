"""kubectl's JSONPath templates (`-o jsonpath=TEMPLATE`): parse once, run on a JSON document.

The language is client-go's `util/jsonpath` (kubectl v1.36), not RFC 9535: literal text with
actions in braces (`{.items[*].metadata.name}`), `{range EXPR}...{end}`, quoted literals
(`{"\\n"}`), `[?(@.x=="y")]` filters with Go's comparison rules, unions `[a,b]`, slices
`[1:3:1]`, `..` recursive descent, `\\.` inside a field name; missing keys print nothing (as
kubectl's `--allow-missing-template-keys=true`); scalars print as Go's `fmt.Sprint`, maps and
lists as compact JSON, several results of one action joined by a space.

Why not jsonpath-ng: it parses RFC-style paths only (no template text, range/end or quoted
literals), rejects kubectl's escaped field names (`labels.app\\.kubernetes\\.io/name`), returns
nothing where kubectl fails (an index out of range, comparing a string with a number), and
orders `..` results differently; the path steps are the small part of this module, the rest
being kubectl's template and printing rules it does not have.

Source of the rules: client-go util/jsonpath parser.go and jsonpath.go, and
third_party/forked/golang/template (Equal, Less); `tests/unit/core/test_jsonpath.py` holds
kubectl's documented examples and outputs of the kubectl binary.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from gryvia_cli.core.gotext import go_json, go_sprint, go_type
from gryvia_cli.core.jsonpathsyntax import (
    Action,
    Array,
    Field,
    Filter,
    Identifier,
    Literal,
    Recursive,
    Step,
    Text,
    Union,
    Wildcard,
    parse_template,
)

__all__ = ["JsonPathError", "Template", "compile_template", "relaxed_path"]


class JsonPathError(ValueError):
    """A template kubectl would refuse to parse, or that failed on this document.

    `partial`: the values the failing step had as input (kubectl's `[?(...)]` exists-filter
    counts them as found)."""

    def __init__(self, message: str, partial: Sequence[Any] = ()) -> None:
        super().__init__(message)
        self.partial = list(partial)


@dataclass(frozen=True)
class Template:
    """A parsed kubectl JSONPath template; `render(doc)` gives the text kubectl prints."""

    source: str
    nodes: tuple[Text | Action, ...]

    def results(self, document: Any) -> list[list[Any]]:
        """The values of every top-level node in order, as client-go's FindResults: a range
        body contributes one list per node and element. Raises JsonPathError as kubectl."""
        out: list[list[Any]] = []
        _run(self.nodes, 0, document, out, 0)
        return out

    def render(self, document: Any) -> str:
        """The text `kubectl -o jsonpath=TEMPLATE` prints for `document` (no newline added).
        Raises JsonPathError when kubectl reports an error executing the template."""
        return "".join(" ".join(_text(v) for v in values) for values in self.results(document))


def compile_template(source: str) -> Template:
    """Parse a kubectl JSONPath template. Raises JsonPathError with kubectl's parse message
    (`unclosed action`, `invalid array index x`, ...)."""
    try:
        return Template(source, tuple(parse_template(source)))
    except ValueError as exc:
        raise JsonPathError(str(exc)) from None


_RELAXED = re.compile(r"^\{\.?([^{}]+)\}$|^\.?([^{}]+)$")


def relaxed_path(expression: str) -> str:
    """kubectl's RelaxedJSONPathExpression for custom columns: `metadata.name`,
    `.metadata.name`, `{metadata.name}` and `{.metadata.name}` all become `{.metadata.name}`
    ("" stays ""). Raises JsonPathError for text with braces inside."""
    if not expression:
        return expression
    match = _RELAXED.match(expression)
    if match is None:
        raise JsonPathError(
            "unexpected path string, expected a 'name1.name2' or '.name1.name2' or "
            "'{name1.name2}' or '{.name1.name2}'"
        )
    return "{." + (match.group(1) or match.group(2)) + "}"


def _text(value: Any) -> str:
    """One result as client-go's PrintResults writes it: maps and lists as JSON, nil as
    `null`, other values as fmt.Sprint."""
    if isinstance(value, dict | list):
        return go_json(value)
    return "null" if value is None else go_sprint(value)


def _marker(action: Action) -> str | None:
    """ "range" or "end" when the action holds that keyword, else None."""
    for step in action.steps:
        if isinstance(step, Identifier) and step.name in ("range", "end"):
            return step.name
    return None


def _run(
    nodes: Sequence[Text | Action], start: int, data: Any, out: list[list[Any]], depth: int
) -> int:
    """Run `nodes[start:]` on `data`, appending each node's values to `out`, until the `end`
    closing this range level (depth > 0); return the index after it (len(nodes) at the end).
    A range with no element still walks its body once, on nil, to find its end (and its
    errors), printing nothing, as client-go does."""
    index = start
    while index < len(nodes):
        node = nodes[index]
        if isinstance(node, Text):
            out.append([node.text])
            index += 1
            continue
        marker = _marker(node)
        if marker == "end":
            if depth == 0:
                raise JsonPathError("not in range, nothing to end")
            return index + 1
        values = _walk([data], node.steps)
        if marker == "range":
            after = len(nodes)
            for value in values:
                after = _run(nodes, index + 1, value, out, depth + 1)
            if not values:
                after = _run(nodes, index + 1, None, [], depth + 1)
            index = after
            continue
        out.append(values)
        index += 1
    return len(nodes)


def _walk(values: list[Any], steps: Sequence[Step]) -> list[Any]:
    """Apply `steps` in turn to every value (client-go's evalList)."""
    for step in steps:
        values = _step(values, step)
    return values


def _children(value: Any) -> list[Any]:
    """A map's values (by key: Go's order is random), a list's items, a string's bytes."""
    if isinstance(value, dict):
        return [value[k] for k in sorted(value)]
    if isinstance(value, list):
        return list(value)
    if isinstance(value, str):
        return list(value.encode())
    return []


def _step(values: list[Any], step: Step) -> list[Any]:
    """One step on every value; missing keys and nil values give nothing."""
    if isinstance(step, Field):
        return [v[step.name] for v in values if isinstance(v, dict) and step.name in v]
    if isinstance(step, Wildcard):
        return [c for v in values for c in _children(v)]
    if isinstance(step, Recursive):
        return _recursive(values)
    if isinstance(step, Array):
        return _array(values, step)
    if isinstance(step, Union):
        return [r for branch in step.branches for r in _walk(values, branch)]
    if isinstance(step, Filter):
        return _filter(values, step)
    if isinstance(step, Literal):
        return [step.value for _ in values]
    if isinstance(step, Text):
        return [step.text]
    if step.name == "range":
        return values
    if step.name == "end":
        return []
    raise JsonPathError(f"unrecognized identifier {step.name}", values)


def _recursive(values: list[Any]) -> list[Any]:
    """`..`: every value that has children, then its descendants, depth first."""
    out: list[Any] = []
    for value in values:
        children = _children(value)
        if children:
            out.append(value)
            out.extend(_recursive(children))
    return out


def _array(values: list[Any], step: Array) -> list[Any]:
    """`[i]`, `[a:b]`, `[a:b:c]`, `[*]` with client-go's bounds checks."""
    out: list[Any] = []
    for value in values:
        if value is None:
            continue
        if not isinstance(value, list):
            raise JsonPathError(f"{go_type(value)} is not array or slice", values)
        length = len(value)
        first = step.start if step.start is not None else 0
        if first < 0:
            first += length
        last = step.end if step.end is not None else length
        if last < 0 or (last == 0 and step.end_derived):
            last += length
        if last == first:
            return out  # client-go returns here, skipping the other inputs
        if first >= length or first < 0:
            raise JsonPathError(
                f"array index out of bounds: index {first}, length {length}", values
            )
        if last > length or last < 0:
            raise JsonPathError(
                f"array index out of bounds: index {last - 1}, length {length}", values
            )
        if first > last:
            raise JsonPathError(
                f"starting index {first} is greater than ending index {last}", values
            )
        if step.step is not None and step.step <= 0:
            raise JsonPathError("step must be > 0", values)
        out.extend(value[first : last : step.step or 1])
    return out


def _filter(values: list[Any], step: Filter) -> list[Any]:
    """`[?(@.x OP y)]` and `[?(@.x)]` (exists) over the items of each list."""
    out: list[Any] = []
    for value in values:
        if not isinstance(value, list):
            raise JsonPathError(
                f"{go_sprint(value)} is not array or slice and cannot be filtered", values
            )
        for item in value:
            try:
                lefts = _walk([item], step.left)
            except JsonPathError as exc:
                if step.op != "exists":
                    raise
                lefts = exc.partial
            if step.op == "exists":
                if lefts:
                    out.append(item)
                continue
            left = _single(lefts)
            if left is _NOTHING:
                continue
            right = _single(_walk([item], step.right))
            if right is _NOTHING:
                continue
            if _compare(left, step.op, right):
                out.append(item)
    return out


_NOTHING = object()


def _single(values: list[Any]) -> Any:
    """The one value of a filter operand; _NOTHING when there is none (the item is skipped).
    Raises JsonPathError for several."""
    if not values:
        return _NOTHING
    if len(values) > 1:
        raise JsonPathError("can only compare one element at a time")
    return values[0]


def _kind(value: Any) -> str:
    """Go template's basicKind: bool, int, float or string; else an invalid comparison."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "string"
    raise JsonPathError("invalid type for comparison")


def _compare(left: Any, op: str, right: Any) -> bool:
    """Go template's eq/ne/lt/le/gt/ge: same basic kind only (1 == 1.0 is an error)."""
    if op not in ("==", "!=", "<", "<=", ">", ">="):
        raise JsonPathError(f"unrecognized filter operator {op}")
    kind = _kind(left)
    if kind != _kind(right):
        raise JsonPathError("incompatible types for comparison")
    if op in ("==", "!="):
        return bool(left == right) == (op == "==")
    if kind == "bool":
        raise JsonPathError("invalid type for comparison")
    less = left < right
    if op == "<":
        return bool(less)
    if op == ">=":
        return not less
    less_equal = less or left == right
    return bool(less_equal) if op == "<=" else not less_equal
