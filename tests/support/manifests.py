"""Manifests the integration tests create, written once."""

from __future__ import annotations

from typing import Any

from gryvia_operator.api.names import API_VERSION


def sh_job(
    name: str,
    *,
    gpus: int = 8,
    gpu_type: str = "A100-80G",
    script: str = "sleep 1",
    namespace: str | None = None,
    **spec: Any,
) -> dict[str, Any]:
    """A training GryviaAIJob that runs `sh -c script` on `gpus` GPUs of `gpu_type` (in
    `namespace`, else the one it is applied in); more spec fields (retryLimit, timeout,
    suspend, ...) as keyword arguments."""
    metadata = {"name": name} if namespace is None else {"name": name, "namespace": namespace}
    return {
        "apiVersion": API_VERSION,
        "kind": "GryviaAIJob",
        "metadata": metadata,
        "spec": {
            "type": "training",
            "image": "none",
            "gpus": gpus,
            "gpuType": gpu_type,
            "command": ["sh", "-c", script],
            **spec,
        },
    }
