"""Manifests the integration tests create, written once."""

from __future__ import annotations

from typing import Any

from gryvia_operator.api.names import API_VERSION


def sh_job(
    name: str, *, gpus: int = 8, gpu_type: str = "A100-80G", script: str = "sleep 1", **spec: Any
) -> dict[str, Any]:
    """A training GryviaAIJob that runs `sh -c script` on `gpus` GPUs of `gpu_type`; more
    spec fields (retryLimit, timeout, ...) as keyword arguments."""
    return {
        "apiVersion": API_VERSION,
        "kind": "GryviaAIJob",
        "metadata": {"name": name},
        "spec": {
            "type": "training",
            "image": "none",
            "gpus": gpus,
            "gpuType": gpu_type,
            "command": ["sh", "-c", script],
            **spec,
        },
    }
