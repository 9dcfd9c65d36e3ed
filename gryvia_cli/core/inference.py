"""`gryvia serve`, pure: the GryviaInferenceService a create builds from its flags, table rows
and the details of `serve get`."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from gryvia_cli.core.timefmt import age

if TYPE_CHECKING:
    from gryvia_operator.api.inference import GryviaInferenceService

SERVE_COLUMNS = ("NAME", "PHASE", "READY", "VERSION", "AGE")
SERVE_WIDE_COLUMNS = (*SERVE_COLUMNS, "URL", "CANARY", "MESSAGE")


def build_service(
    name: str,
    namespace: str,
    *,
    image: str,
    port: int,
    replicas: int | None = None,
    version: str | None = None,
    command: list[str] | None = None,
    health_path: str | None = None,
    health_command: list[str] | None = None,
    gpus: int = 0,
    cpu: str | None = None,
    memory: str | None = None,
    min_replicas: int | None = None,
    max_replicas: int | None = None,
    cpu_target: int | None = None,
) -> dict[str, Any]:
    """The GryviaInferenceService body (camelCase) of `gryvia serve create`, checked against
    the model. Raises ValueError naming the flag and the fix."""

    from gryvia_operator.api.inference import INFERENCE_SERVICE_KIND, GryviaInferenceService

    if health_path and health_command:
        raise ValueError("--health-path and --health-command: give one, not both")
    if (min_replicas is None) != (max_replicas is None):
        raise ValueError("--min-replicas and --max-replicas go together (autoscaling)")
    if min_replicas is not None and replicas is not None:
        raise ValueError("--replicas or --min/--max-replicas (autoscaling), not both")
    spec: dict[str, Any] = {"image": image, "port": port, "gpus": gpus}
    for key, value in (("version", version), ("command", command), ("cpu", cpu)):
        if value:
            spec[key] = value
    if memory:
        spec["memory"] = memory
    if health_path:
        spec["healthCheck"] = {"path": health_path}
    elif health_command:
        spec["healthCheck"] = {"command": health_command}
    if min_replicas is not None:
        auto: dict[str, Any] = {"minReplicas": min_replicas, "maxReplicas": max_replicas}
        if cpu_target is not None:
            auto["targetCpuUtilization"] = cpu_target
        spec["autoscaling"] = auto
    else:
        spec["replicas"] = 1 if replicas is None else replicas
    body = {
        "apiVersion": INFERENCE_SERVICE_KIND.resource.api_version,
        "kind": INFERENCE_SERVICE_KIND.kind,
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    }
    from gryvia_operator.api.controlled import checked_body

    return checked_body(GryviaInferenceService, body)


def serve_row(isvc: GryviaInferenceService, now: datetime) -> list[Any]:
    """NAME PHASE READY(ready/wanted) VERSION AGE."""
    st = isvc.status
    ready = f"{(st.ready_replicas or 0) if st else 0}/{(st.replicas or 0) if st else 0}"
    return [
        isvc.name,
        (st.phase if st else None) or "Pending",
        ready,
        (st.serving_version if st else None) or "-",
        age(isvc.metadata.creation_timestamp, now),
    ]


def serve_wide_row(isvc: GryviaInferenceService, now: datetime) -> list[Any]:
    """serve_row, then URL, CANARY (version and replicas) and MESSAGE."""
    st = isvc.status
    canary = "-"
    if st and st.canary_version:
        canary = f"{st.canary_version} ({st.canary_replicas or 0})"
    return [
        *serve_row(isvc, now),
        (st.url if st else None) or "-",
        canary,
        (st.message if st else None) or "",
    ]


def serve_details(isvc: GryviaInferenceService) -> list[tuple[str, str]]:
    """(label, value) lines of `gryvia serve get`."""
    spec, st = isvc.spec, isvc.status
    lines = [
        ("Name", f"{isvc.namespace}/{isvc.name}"),
        ("Image", spec.image),
        ("Port", str(spec.port)),
        ("GPUs", str(spec.gpus)),
    ]
    if spec.autoscaling is not None:
        a = spec.autoscaling
        target = f"{a.metric}={a.target_average_value}" if a.metric else "cpu"
        lines.append(("Autoscaling", f"{a.min_replicas}-{a.max_replicas} on {target}"))
    else:
        lines.append(("Replicas", str(spec.replicas)))
    if spec.health_check is not None:
        hc = spec.health_check
        lines.append(("Health check", hc.path or " ".join(hc.command or [])))
    if spec.canary is not None:
        lines.append(("Canary", f"{spec.canary.image} ({spec.canary.weight}% of replicas)"))
    if st is not None:
        lines += [
            ("Phase", st.phase or "-"),
            ("URL", st.url or "-"),
            ("Ready", f"{st.ready_replicas or 0}/{st.replicas or 0}"),
            ("Serving version", st.serving_version or "-"),
        ]
        if st.canary_version:
            lines.append(("Canary version", f"{st.canary_version} ({st.canary_replicas or 0})"))
        if st.message:
            lines.append(("Message", st.message))
    return lines
