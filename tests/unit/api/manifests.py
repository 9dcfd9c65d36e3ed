"""Manifest builders shared by the validation tests."""

from __future__ import annotations

from typing import Any


def job(**spec: Any) -> dict[str, Any]:
    """A valid GryviaAIJob manifest with `spec` overrides (a value of ... removes the key)."""
    base: dict[str, Any] = {
        "type": "training",
        "gpus": 1,
        "image": "nvcr.io/nvidia/pytorch:24.01-py3",
    }
    base.update(spec)
    return {
        "apiVersion": "gryvia.io/v1alpha1",
        "kind": "GryviaAIJob",
        "metadata": {"name": "demo", "namespace": "ml"},
        "spec": {k: v for k, v in base.items() if v is not ...},
    }
