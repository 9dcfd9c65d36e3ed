"""Go's text forms of JSON values, as kubectl prints them in `-o jsonpath` and `-o custom-columns`.

kubectl reads objects as Go's `map[string]interface{}`: strings, int64 (whole JSON numbers),
float64 (the others), bool, nil, maps and slices. Its printers then use two Go formats, which
this module reproduces for the same values read by Python's `json` (int, float, ...):

- `fmt.Sprint` (`%v`): what `-o jsonpath` prints for a scalar and `-o custom-columns` for any
  value: maps as `map[k:v ...]` (keys sorted), slices as `[a b]`, nil as `<nil>`, floats in
  `strconv.FormatFloat(f, 'g', -1, 64)` form (`2.5`, `1.2345675e+06`, `1e-05`).
- `json.Marshal`: what `-o jsonpath` prints for a map or slice: compact, keys sorted, `<`, `>`,
  `&`, U+2028 and U+2029 escaped as `\\u003c`..., floats in 'f' form unless below 1e-6 or from
  1e21 on (then `1e-7`, `1e+21`).

Source of the rules: Go's `fmt`, `strconv` and `encoding/json` (floatEncoder) packages; checked
against kubectl v1.36.3's output (tests/unit/core/test_jsonpath.py).
"""

from __future__ import annotations

import json
import math
from decimal import Decimal
from typing import Any

_HTML_ESCAPES = {
    "<": "\\u003c",
    ">": "\\u003e",
    "&": "\\u0026",
    "\u2028": "\\u2028",
    "\u2029": "\\u2029",
}


def _digits(value: float) -> tuple[str, int]:
    """The shortest decimal digits that read back as `value` (no sign) and the exponent of
    the first digit (1234.5 -> ("12345", 3)); Python's repr is Go's shortest form too."""
    _, digits, exponent = Decimal(repr(abs(value))).as_tuple()
    text = "".join(map(str, digits)).rstrip("0") or "0"
    assert isinstance(exponent, int)
    return text, len(digits) + exponent - 1


def _fixed(digits: str, exp: int) -> str:
    """`digits` (first digit at 10**exp) in positional notation without trailing zeros."""
    if exp < 0:
        return "0." + "0" * (-exp - 1) + digits
    whole = digits[: exp + 1].ljust(exp + 1, "0")
    frac = digits[exp + 1 :]
    return whole + ("." + frac if frac else "")


def _scientific(digits: str, exp: int) -> str:
    """`digits` as d.ddde±XX with at least two exponent digits, as Go's strconv writes it."""
    mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
    return f"{mantissa}e{'-' if exp < 0 else '+'}{abs(exp):02d}"


def go_float(value: float) -> str:
    """`fmt.Sprint(value)` of a float64: %g with the shortest digits, scientific when the
    exponent is below -4 or from 6 on (`strconv.FormatFloat(v, 'g', -1, 64)`)."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    sign = "-" if math.copysign(1.0, value) < 0 else ""
    if value == 0:
        return sign + "0"
    digits, exp = _digits(value)
    body = _scientific(digits, exp) if exp < -4 or exp >= 6 else _fixed(digits, exp)
    return sign + body


def go_json_float(value: float) -> str:
    """A float64 as Go's `encoding/json` writes it: positional unless |v| < 1e-6 or >= 1e21,
    then scientific with `e-7` (not `e-07`) for negative exponents."""
    if value == 0:
        return "-0" if math.copysign(1.0, value) < 0 else "0"
    sign = "-" if value < 0 else ""
    digits, exp = _digits(value)
    if abs(value) < 1e-6 or abs(value) >= 1e21:
        text = _scientific(digits, exp)
        if exp < 0 and abs(exp) < 10:
            text = text.replace("e-0", "e-")
        return sign + text
    return sign + _fixed(digits, exp)


def go_json(value: Any) -> str:
    """`json.Marshal(value)` of a value read from JSON: compact, map keys sorted, HTML
    characters escaped. Raises ValueError for a float that JSON cannot hold (NaN, Inf)."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            raise ValueError(f"json: unsupported value: {go_float(value)}")
        return go_json_float(value)
    if isinstance(value, str):
        text = json.dumps(value, ensure_ascii=False)
        return "".join(_HTML_ESCAPES.get(ch, ch) for ch in text)
    if isinstance(value, dict):
        items = (f"{go_json(str(k))}:{go_json(v)}" for k, v in sorted(value.items()))
        return "{" + ",".join(items) + "}"
    if isinstance(value, list | tuple):
        return "[" + ",".join(go_json(v) for v in value) + "]"
    return go_json(str(value))


def go_sprint(value: Any) -> str:
    """`fmt.Sprint(value)` (%v) of a value read from JSON: `<nil>`, `true`, `map[a:1 b:[x y]]`
    (keys sorted, as fmt sorts maps), strings as they are."""
    if value is None:
        return "<nil>"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, float):
        return go_float(value)
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{go_sprint(v)}" for k, v in sorted(value.items())) + "]"
    if isinstance(value, list | tuple):
        return "[" + " ".join(go_sprint(v) for v in value) + "]"
    return str(value)


def go_type(value: Any) -> str:
    """The Go type kubectl names in its errors for a JSON value (`map[string]interface {}`)."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int64"
    if isinstance(value, float):
        return "float64"
    if isinstance(value, str):
        return "string"
    if isinstance(value, dict):
        return "map[string]interface {}"
    if isinstance(value, list | tuple):
        return "[]interface {}"
    return "<nil>"
