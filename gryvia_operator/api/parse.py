"""Parsing lists of raw API objects into models, one odd object never hiding the others.

Used wherever a component reads many objects of a kind (the operator's indexes, the CLI's
lists, the console's store): objects written by another version or by hand may not validate.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

M = TypeVar("M", bound=BaseModel)


def parse_all(model: type[M], items: Iterable[Mapping[str, Any]]) -> tuple[list[M], list[str]]:
    """Validate raw API objects as `model`: (valid objects, one problem per invalid object,
    as `<name>: <field path>: <pydantic message>`)."""
    good: list[M] = []
    problems: list[str] = []
    for item in items:
        try:
            good.append(model.model_validate(dict(item)))
        except ValidationError as exc:
            name = (item.get("metadata") or {}).get("name") or "?"
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first.get("loc", ()))
            problems.append(f"{name}: {where}: {first.get('msg')}")
    return good, problems


def parse_valid(model: type[M], items: Iterable[Mapping[str, Any]]) -> list[M]:
    """The objects of `items` that validate as `model`, in order; the others are skipped."""
    return parse_all(model, items)[0]
