"""How the sandbox's pod runner turns a container spec into a process: env, argv, paths.

Pure functions. The rules are the kubelet's (Kubernetes API reference, "EnvVar" and
"Container"): `env` in order with `$(VAR)` references to earlier variables and `$$` escapes,
`valueFrom.fieldRef` (metadata.name, namespace, uid, labels[...], annotations[...],
spec.nodeName, spec.serviceAccountName, status.podIP, status.hostIP), `resourceFieldRef`,
`configMapKeyRef`/`secretKeyRef` and `envFrom` through lookups the caller passes in.
`command`+`args` go through the same `$(VAR)` expansion.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from gryvia_operator.api.names import GPU_RESOURCE

#: Looks up one key of a ConfigMap or Secret: (kind, namespace, name, key) -> value or None.
KeyLookup = Callable[[str, str, str, str | None], Mapping[str, str] | str | None]

_REF = re.compile(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)")


class PodSpecError(ValueError):
    """Raised when a container cannot start (the kubelet's CreateContainerConfigError)."""


class MissingReferenceError(PodSpecError):
    """A non-optional ConfigMap or Secret (or one of its keys) the container's environment
    names does not exist (yet): the kubelet keeps such a container waiting and retries."""


def expand(text: str, env: Mapping[str, str]) -> str:
    """Expand `$(VAR)` from `env` (unknown references stay as written) and `$$` to `$`."""

    def sub(match: re.Match[str]) -> str:
        if match.group(0) == "$$":
            return "$"
        name = match.group(1)
        return env.get(name, match.group(0))

    return _REF.sub(sub, text)


def field_value(pod: Mapping[str, Any], path: str, pod_ip: str, host_ip: str) -> str:
    """Return the value of a `fieldRef.fieldPath` for this pod. Raises PodSpecError."""
    meta = pod.get("metadata", {})
    spec = pod.get("spec", {})
    simple = {
        "metadata.name": meta.get("name", ""),
        "metadata.namespace": meta.get("namespace", ""),
        "metadata.uid": meta.get("uid", ""),
        "spec.nodeName": spec.get("nodeName", ""),
        "spec.serviceAccountName": spec.get("serviceAccountName", ""),
        "status.podIP": pod_ip,
        "status.podIPs": pod_ip,
        "status.hostIP": host_ip,
        "status.hostIPs": host_ip,
    }
    if path in simple:
        return str(simple[path])
    match = re.fullmatch(r"metadata\.(labels|annotations)\['([^']+)'\]", path)
    if match:
        return str((meta.get(match.group(1)) or {}).get(match.group(2), ""))
    raise PodSpecError(f"unsupported fieldRef.fieldPath {path!r}")


def resource_value(container: Mapping[str, Any], resource: str) -> str:
    """Return a `resourceFieldRef` value (limits, else requests; cpu rounded up to cores)."""
    kind, _, name = resource.partition(".")
    res = container.get("resources") or {}
    value = (res.get(kind) or {}).get(name) or (res.get("requests") or {}).get(name) or "0"
    if name == "cpu" and str(value).endswith("m"):
        return str(-(-int(str(value)[:-1]) // 1000))
    return str(value)


def container_env(
    pod: Mapping[str, Any],
    container: Mapping[str, Any],
    *,
    pod_ip: str,
    host_ip: str,
    lookup: KeyLookup,
) -> dict[str, str]:
    """Return the container's environment as the kubelet builds it (without the host's).

    `lookup("ConfigMap"|"Secret", namespace, name, key)` returns a value (key given) or the
    whole data map (key None), or None when missing. Raises PodSpecError for a missing
    non-optional reference, naming it (MissingReferenceError).
    """
    namespace = pod.get("metadata", {}).get("namespace", "default")
    env: dict[str, str] = {}
    for source in container.get("envFrom") or []:
        prefix = source.get("prefix", "")
        for kind, field in (("ConfigMap", "configMapRef"), ("Secret", "secretRef")):
            ref = source.get(field)
            if not ref:
                continue
            data = lookup(kind, namespace, ref["name"], None)
            if data is None:
                if ref.get("optional"):
                    continue
                raise MissingReferenceError(f"{kind.lower()} {ref['name']!r} not found (envFrom)")
            if isinstance(data, Mapping):
                env.update({prefix + k: str(v) for k, v in data.items()})
    for var in container.get("env") or []:
        name = var["name"]
        if "valueFrom" not in var:
            env[name] = expand(str(var.get("value", "")), env)
            continue
        src = var["valueFrom"]
        if "fieldRef" in src:
            env[name] = field_value(pod, src["fieldRef"]["fieldPath"], pod_ip, host_ip)
        elif "resourceFieldRef" in src:
            env[name] = resource_value(container, src["resourceFieldRef"]["resource"])
        else:
            for kind, field in (("ConfigMap", "configMapKeyRef"), ("Secret", "secretKeyRef")):
                ref = src.get(field)
                if not ref:
                    continue
                value = lookup(kind, namespace, ref["name"], ref["key"])
                if value is None:
                    if ref.get("optional"):
                        break
                    raise MissingReferenceError(
                        f"env {name}: key {ref['key']!r} of {kind.lower()} "
                        f"{ref['name']!r} not found"
                    )
                env[name] = str(value)
    return env


def container_argv(container: Mapping[str, Any], env: Mapping[str, str]) -> list[str]:
    """Return `command` + `args` with `$(VAR)` expanded.

    Raises PodSpecError without a `command`: the sandbox does not pull images, so it cannot
    know an image's entrypoint.
    """
    command = list(container.get("command") or [])
    if not command:
        raise PodSpecError(
            f"container {container.get('name')!r} has no command: the sandbox runs commands as "
            "local processes and cannot read an image's entrypoint; set spec.command (and "
            "spec.args) in the GryviaAIJob"
        )
    return [expand(str(a), env) for a in command + list(container.get("args") or [])]


def pod_hostname(pod: Mapping[str, Any]) -> str:
    """Return the pod's host name: `spec.hostname`, else the pod name (cut to 63 characters)."""
    spec = pod.get("spec", {})
    return str(spec.get("hostname") or pod["metadata"]["name"])[:63]


def gpu_count(container: Mapping[str, Any]) -> int:
    """The container's `nvidia.com/gpu` (its limit, else its request), 0 when it asks none."""
    resources = container.get("resources") or {}
    for kind in ("limits", "requests"):
        if value := (resources.get(kind) or {}).get(GPU_RESOURCE):
            return int(value)
    return 0
