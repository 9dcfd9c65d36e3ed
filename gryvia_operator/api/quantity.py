"""Kubernetes resource quantities (`500m`, `8Gi`, `1e3`): the pydantic type and exact parsing."""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Annotated, Any

from pydantic import BeforeValidator

from gryvia_operator.api.base import SchemaExtra

QUANTITY_PATTERN = (
    r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|"
    r"([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$"
)
"""The regex the Kubernetes API uses for quantities (also the CRD `pattern`)."""
_QUANTITY_RE = re.compile(QUANTITY_PATTERN)
_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {
    "n": Decimal("1e-9"),
    "u": Decimal("1e-6"),
    "m": Decimal("1e-3"),
    "": Decimal(1),
    "k": Decimal("1e3"),
    "M": Decimal("1e6"),
    "G": Decimal("1e9"),
    "T": Decimal("1e12"),
    "P": Decimal("1e15"),
    "E": Decimal("1e18"),
}
_SPLIT_RE = re.compile(r"^([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))(.*)$")


def parse_quantity(value: str | int) -> Decimal:
    """Return the exact value of a quantity (`"500m"` -> 0.5, `"1Gi"` -> 1073741824).

    Raises ValueError with `invalid quantity "<value>"` for anything Kubernetes would reject.
    """
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise ValueError(f'invalid quantity "{value}"')
    if isinstance(value, int):
        return Decimal(value)
    text = value.strip()
    match = _SPLIT_RE.match(text)
    if not _QUANTITY_RE.match(text) or match is None:
        raise ValueError(f'invalid quantity "{value}"')
    number, suffix = Decimal(match.group(1)), match.group(2)
    if suffix in _BINARY:
        return number * _BINARY[suffix]
    if suffix in _DECIMAL:
        return number * _DECIMAL[suffix]
    return number * Decimal(10) ** int(suffix[1:])  # exponent form, e.g. "1e3"


def _check_quantity(value: Any) -> Any:
    """Accept an int or a well-formed quantity string, reject everything else with one message."""
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise ValueError("must be an integer or a quantity string such as 500m or 8Gi")
    parse_quantity(value)
    return value


Quantity = Annotated[
    int | str,
    BeforeValidator(_check_quantity),
    SchemaExtra({"x-kubernetes-int-or-string": True, "pattern": QUANTITY_PATTERN}),
]
"""A resource quantity as written (int or string); on the wire it stays exactly as given."""


def format_bytes(value: int | Decimal) -> str:
    """A byte count as the shortest exact binary quantity (`1649267441664` -> `"1536Gi"`,
    `0` -> `"0"`); a count no binary unit divides stays in bytes. Negative counts are 0."""
    count = max(int(value), 0)
    for suffix, size in reversed(_BINARY.items()):
        if count and count % size == 0:
            return f"{count // size}{suffix}"
    return str(count)
