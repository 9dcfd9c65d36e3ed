"""GryviaInferenceService, pure: the Deployments, Service and HPA it wants, the canary split,
and its status from what the Deployments report. No I/O."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from gryvia_operator.api.controlled import owner_reference
from gryvia_operator.api.inference import (
    ANNOTATION_HASH,
    LABEL_SERVICE,
    LABEL_TRACK,
    LABEL_VERSION,
    GryviaInferenceService,
    canary_name,
    stable_name,
)
from gryvia_operator.api.names import GPU_RESOURCE

DEFAULT_CPU_TARGET = 80
"""Percent CPU utilisation the HPA aims at when neither a target nor a metric is set."""
CONTAINER = "server"


def version_of(image: str, version: str | None) -> str:
    """The version served: `version`, else the image's tag (`latest` without one)."""
    if version:
        return version
    last = image.rsplit("/", 1)[-1]
    tag = last.split("@", 1)[0].rsplit(":", 1)
    return tag[1] if len(tag) == 2 else "latest"


def label_value(text: str) -> str:
    """`text` made a valid label value (63 characters of [A-Za-z0-9._-], alphanumeric ends)."""
    clean = re.sub(r"[^A-Za-z0-9._-]", "-", text)[:63]
    return clean.strip("-._") or "unknown"


def split_replicas(total: int, weight: int) -> tuple[int, int]:
    """Split `total` replicas into (stable, canary) so the canary has about `weight` percent.

    A canary with a weight above 0 gets at least one replica, and the stable track keeps at
    least one unless the weight is 100; so a total of 1 with 0 < weight < 100 gives (1, 1).
    The traffic share is then canary / (stable + canary) of the ready endpoints.
    """
    if weight <= 0 or total <= 0:
        return max(total, 0), 0
    canary = min(max(1, round(total * weight / 100)), total)
    stable = total - canary if weight >= 100 else max(1, total - canary)
    return stable, canary


def _hash(spec: Mapping[str, Any]) -> str:
    return hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:16]


def _meta(isvc: GryviaInferenceService, name: str, labels: dict[str, str], spec: Any) -> Any:
    return {
        "name": name,
        "namespace": isvc.namespace,
        "labels": labels,
        "annotations": {ANNOTATION_HASH: _hash(spec)},
        "ownerReferences": [owner_reference(isvc)],
    }


def _container(
    isvc: GryviaInferenceService, image: str, command: list[str] | None
) -> dict[str, Any]:
    spec = isvc.spec
    ctr: dict[str, Any] = {
        "name": CONTAINER,
        "image": image,
        "ports": [{"name": "http", "containerPort": spec.port, "protocol": "TCP"}],
    }
    if command:
        ctr["command"] = list(command)
    if spec.env:
        ctr["env"] = [{"name": k, "value": v} for k, v in sorted(spec.env.items())]
    requests = {k: v for k, v in (("cpu", spec.cpu), ("memory", spec.memory)) if v}
    resources: dict[str, Any] = {"requests": requests} if requests else {}
    if spec.gpus:
        resources.setdefault("requests", {})[GPU_RESOURCE] = str(spec.gpus)
        resources["limits"] = {GPU_RESOURCE: str(spec.gpus)}
    if resources:
        ctr["resources"] = resources
    check = spec.health_check
    if check is not None:
        probe: dict[str, Any] = {
            "initialDelaySeconds": check.initial_delay_seconds,
            "periodSeconds": check.period_seconds,
        }
        if check.path is not None:
            probe["httpGet"] = {"path": check.path, "port": spec.port}
        else:
            probe["exec"] = {"command": list(check.command or [])}
        ctr["readinessProbe"] = probe
    return ctr


def deployment(isvc: GryviaInferenceService, track: str, replicas: int | None) -> dict[str, Any]:
    """The Deployment of `track` (`stable` or `canary`); `replicas` None leaves the count to
    the HPA. Pods carry the service, track and version labels; the selector is service and
    track only, so a new version is a rolling update of the same Deployment."""
    spec = isvc.spec
    if track == "canary" and spec.canary is not None:
        image, version = spec.canary.image, version_of(spec.canary.image, spec.canary.version)
        command, name = spec.canary.command or spec.command, canary_name(isvc.name)
    else:
        image, version = spec.image, version_of(spec.image, spec.version)
        command, name = spec.command, stable_name(isvc.name)
    select = {LABEL_SERVICE: isvc.name, LABEL_TRACK: track}
    labels = select | {LABEL_VERSION: label_value(version)}
    body_spec: dict[str, Any] = {
        "selector": {"matchLabels": select},
        "template": {
            "metadata": {"labels": labels},
            "spec": {"containers": [_container(isvc, image, command)]},
        },
    }
    if replicas is not None:
        body_spec["replicas"] = replicas
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": _meta(isvc, name, labels, body_spec),
        "spec": body_spec,
    }


def service(isvc: GryviaInferenceService) -> dict[str, Any]:
    """The Service selecting every replica of both tracks on the serving port."""
    spec = {
        "selector": {LABEL_SERVICE: isvc.name},
        "ports": [{"name": "http", "port": isvc.spec.port, "targetPort": isvc.spec.port}],
    }
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": _meta(isvc, stable_name(isvc.name), {LABEL_SERVICE: isvc.name}, spec),
        "spec": spec,
    }


def hpa(isvc: GryviaInferenceService) -> dict[str, Any] | None:
    """The autoscaling/v2 HPA of the stable Deployment, or None without spec.autoscaling."""
    auto = isvc.spec.autoscaling
    if auto is None:
        return None
    if auto.metric is not None:
        metric: dict[str, Any] = {
            "type": "Pods",
            "pods": {
                "metric": {"name": auto.metric},
                "target": {"type": "AverageValue", "averageValue": auto.target_average_value},
            },
        }
    else:
        metric = {
            "type": "Resource",
            "resource": {
                "name": "cpu",
                "target": {
                    "type": "Utilization",
                    "averageUtilization": auto.target_cpu_utilization or DEFAULT_CPU_TARGET,
                },
            },
        }
    spec = {
        "scaleTargetRef": {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "name": stable_name(isvc.name),
        },
        "minReplicas": auto.min_replicas,
        "maxReplicas": auto.max_replicas,
        "metrics": [metric],
    }
    return {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": _meta(isvc, stable_name(isvc.name), {LABEL_SERVICE: isvc.name}, spec),
        "spec": spec,
    }


@dataclass
class Children:
    """What an inference service wants: bodies to apply, and (kind, name) to delete."""

    apply: list[dict[str, Any]] = field(default_factory=list)
    delete: list[tuple[str, str]] = field(default_factory=list)
    stable_replicas: int = 0
    canary_replicas: int = 0


def desired(isvc: GryviaInferenceService) -> Children:
    """The children of `isvc`. With autoscaling, the canary's share is taken of minReplicas
    and the HPA scales the stable Deployment only."""
    spec = isvc.spec
    auto = spec.autoscaling
    total = auto.min_replicas if auto is not None else spec.replicas
    weight = spec.canary.weight if spec.canary is not None else 0
    stable, canary = split_replicas(total, weight)
    out = Children(stable_replicas=stable, canary_replicas=canary)
    out.apply.append(deployment(isvc, "stable", None if auto is not None else stable))
    if spec.canary is not None:
        out.apply.append(deployment(isvc, "canary", canary))
    else:
        out.delete.append(("Deployment", canary_name(isvc.name)))
    out.apply.append(service(isvc))
    autoscaler = hpa(isvc)
    if autoscaler is not None:
        out.apply.append(autoscaler)
    else:
        out.delete.append(("HorizontalPodAutoscaler", stable_name(isvc.name)))
    return out


def needs_write(existing: Mapping[str, Any] | None, want: Mapping[str, Any]) -> bool:
    """True when `existing` (None: absent) was not written from `want`'s spec."""
    if existing is None:
        return True
    have = ((existing.get("metadata") or {}).get("annotations") or {}).get(ANNOTATION_HASH)
    return bool(have != want["metadata"]["annotations"][ANNOTATION_HASH])


def _rolled_out(dep: Mapping[str, Any] | None, want_replicas: int | None) -> bool:
    """True when Deployment `dep` has finished rolling out its current template."""
    if dep is None:
        return False
    meta, status = dep.get("metadata") or {}, dep.get("status") or {}
    spec_replicas = int((dep.get("spec") or {}).get("replicas") or 0)
    wanted = spec_replicas if want_replicas is None else want_replicas
    return (
        int(status.get("observedGeneration") or 0) >= int(meta.get("generation") or 0)
        and int(status.get("updatedReplicas") or 0) >= wanted
        and int(status.get("replicas") or 0) == int(status.get("updatedReplicas") or 0)
        and int(status.get("readyReplicas") or 0) >= wanted
    )


def build_status(
    isvc: GryviaInferenceService,
    stable: Mapping[str, Any] | None,
    canary: Mapping[str, Any] | None,
    previous: Mapping[str, Any],
) -> dict[str, Any]:
    """The status (camelCase, as stored) from the live stable and canary Deployments (None:
    absent). servingVersion changes to the spec's version once the stable Deployment has
    rolled it out; until then it keeps `previous`'s and the message says what is rolling."""
    spec = isvc.spec
    kids = desired(isvc)
    want_stable = None if spec.autoscaling is not None else kids.stable_replicas
    stable_status = (stable or {}).get("status") or {}
    canary_status = (canary or {}).get("status") or {}
    if want_stable is None:  # the HPA decides
        want_stable = int(((stable or {}).get("spec") or {}).get("replicas") or 0)
    wanted = want_stable + kids.canary_replicas
    ready = int(stable_status.get("readyReplicas") or 0)
    if spec.canary is not None:
        ready += int(canary_status.get("readyReplicas") or 0)
    version = version_of(spec.image, spec.version)
    rolled = _rolled_out(stable, want_stable)
    serving = version if rolled else previous.get("servingVersion")
    message = None if rolled else f"rolling out version {version}"
    if spec.canary is not None and not _rolled_out(canary, kids.canary_replicas):
        message = (message + "; " if message else "") + "canary rolling out"
    if ready == 0 and wanted > 0:
        phase = "Pending"
    elif ready >= wanted and rolled and message is None:
        phase = "Ready"
    else:
        phase = "NotReady"
    out: dict[str, Any] = {
        "phase": phase,
        "url": f"http://{isvc.name}.{isvc.namespace}.svc:{spec.port}",
        "replicas": wanted,
        "readyReplicas": ready,
        "servingVersion": serving,
        "message": message,
    }
    if spec.canary is not None:
        out["canaryVersion"] = version_of(spec.canary.image, spec.canary.version)
        out["canaryReplicas"] = kids.canary_replicas
    return {k: v for k, v in out.items() if v is not None}


ChildKey = tuple[str, str]
"""(kind, name) of a child of an inference service."""


@dataclass
class Writes:
    """The writes that bring the children to what `desired` wants: whole bodies to create,
    (kind, name, merge patch) for children written from another spec, and (kind, name) of
    owned children to delete."""

    create: list[dict[str, Any]] = field(default_factory=list)
    patch: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)
    delete: list[ChildKey] = field(default_factory=list)


def plan_writes(
    isvc: GryviaInferenceService, observed: Mapping[ChildKey, Mapping[str, Any]]
) -> Writes:
    """Compare `desired(isvc)` with the children as observed (keyed by (kind, name)): create
    the absent ones, patch (labels, annotations, spec) those whose spec hash differs, delete
    the unwanted ones `isvc` owns (a same-named object of someone else is left alone)."""
    kids = desired(isvc)
    out = Writes()
    for want in kids.apply:
        kind, name = want["kind"], want["metadata"]["name"]
        have = observed.get((kind, name))
        if not needs_write(have, want):
            continue
        if have is None:
            out.create.append(want)
        else:
            meta = {k: want["metadata"][k] for k in ("labels", "annotations")}
            out.patch.append((kind, name, {"metadata": meta, "spec": want["spec"]}))
    for kind, name in kids.delete:
        owners = ((observed.get((kind, name)) or {}).get("metadata") or {}).get(
            "ownerReferences"
        ) or []
        if any(o.get("uid") == isvc.metadata.uid for o in owners):
            out.delete.append((kind, name))
    return out
