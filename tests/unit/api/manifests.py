"""Manifest builders shared by the validation tests."""

from __future__ import annotations

from typing import Any

from tests.builders import make_job


def job(**spec: Any) -> dict[str, Any]:
    """A valid GryviaAIJob manifest with `spec` overrides (a value of ... removes the key)."""
    builder = make_job("demo", "ml").image("nvcr.io/nvidia/pytorch:24.01-py3").set(**spec)
    return builder.unset(*(key for key, value in spec.items() if value is ...)).manifest()
