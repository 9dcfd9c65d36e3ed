"""Hand-made drift of a job's children, and the merge patch that puts them back.

Only fields Kubernetes lets change after creation are compared and patched.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gryvia_operator.api.names import CONTAINER_NAME, GPU_RESOURCE
from gryvia_operator.reconcile.views import ChildView


def _container(template: Mapping[str, Any]) -> Mapping[str, Any]:
    spec = template.get("spec") if isinstance(template, Mapping) else None
    containers = spec.get("containers") if isinstance(spec, Mapping) else None
    for container in containers or []:
        if isinstance(container, Mapping) and container.get("name") == CONTAINER_NAME:
            return container
    return {}


def _normal_env(env: Any) -> list[Any]:
    """Env as compared: fieldRef's defaulted apiVersion dropped."""
    out: list[Any] = []
    for item in env or []:
        entry = dict(item) if isinstance(item, Mapping) else item
        source = entry.get("valueFrom") if isinstance(entry, dict) else None
        if isinstance(source, Mapping) and isinstance(source.get("fieldRef"), Mapping):
            ref = {k: v for k, v in source["fieldRef"].items() if k != "apiVersion"}
            entry["valueFrom"] = {**source, "fieldRef": ref}
        out.append(entry)
    return out


def _template_facts(template: Mapping[str, Any]) -> dict[str, Any]:
    """The fields of a pod template the operator keeps in line (behaviour reference section 4)."""
    container = _container(template)
    limits = container.get("resources", {}).get("limits", {}) if container else {}
    meta = template.get("metadata") or {}
    spec = template.get("spec") or {}
    return {
        "image": container.get("image"),
        "command": container.get("command") or [],
        "args": container.get("args") or [],
        "env": _normal_env(container.get("env")),
        "gpus": str(limits.get(GPU_RESOURCE, "")) if isinstance(limits, Mapping) else "",
        "annotations": dict(meta.get("annotations") or {}),
        "nodeSelector": dict(spec.get("nodeSelector") or {}),
    }


def _ports(ports: Any) -> list[tuple[Any, Any]]:
    return sorted((p.get("name"), p.get("port")) for p in ports or [] if isinstance(p, Mapping))


def drift_patch(desired: Mapping[str, Any], observed: ChildView) -> dict[str, Any] | None:
    """The merge patch that undoes hand-made drift of `observed`, or None when it matches.

    Job: only `spec.suspend` (the pod template is immutable). StatefulSet: replicas, and the
    template when image, command, args, env, GPU limit, annotations or nodeSelector differ.
    Service: selector, ports and publishNotReadyAddresses. PVC: nothing.
    """
    want = desired.get("spec") or {}
    have = observed.spec
    kind = observed.kind
    if kind == "Job":
        if bool(have.get("suspend", False)) != bool(want.get("suspend", False)):
            return {"spec": {"suspend": bool(want.get("suspend", False))}}
        return None
    if kind == "StatefulSet":
        patch: dict[str, Any] = {}
        if have.get("replicas") != want.get("replicas"):
            patch["replicas"] = want.get("replicas")
        if _template_facts(have.get("template") or {}) != _template_facts(want["template"]):
            patch["template"] = want["template"]
        return {"spec": patch} if patch else None
    if kind == "Service":
        service: dict[str, Any] = {}
        if dict(have.get("selector") or {}) != dict(want.get("selector") or {}):
            service["selector"] = want.get("selector")
        if _ports(have.get("ports")) != _ports(want.get("ports")):
            service["ports"] = want.get("ports")
        if bool(have.get("publishNotReadyAddresses")) != bool(want.get("publishNotReadyAddresses")):
            service["publishNotReadyAddresses"] = want.get("publishNotReadyAddresses")
        return {"spec": service} if service else None
    return None
