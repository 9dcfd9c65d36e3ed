"""Kubernetes core types that Gryvia specs pass through to pods (env, mounts, tolerations)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated

from pydantic import StrictBool, StringConstraints

from gryvia_operator.api.base import FreeForm, GryviaModel, Int64
from gryvia_operator.api.quantity import Quantity


class EnvVar(GryviaModel):
    """A container environment variable (Kubernetes `EnvVar`)."""

    name: Annotated[str, StringConstraints(min_length=1)]
    """Variable name."""
    value: str | None = None
    """Literal value."""
    value_from: FreeForm | None = None
    """Kubernetes `EnvVarSource` (secretKeyRef, configMapKeyRef, fieldRef, ...), passed through."""


class VolumeMount(GryviaModel):
    """Where a volume is mounted in the trainer container (Kubernetes `VolumeMount`)."""

    name: str
    """Name of a volume in `spec.volumes`."""
    mount_path: str
    """Absolute path in the container."""
    read_only: StrictBool | None = None
    """Mount read-only."""
    sub_path: str | None = None
    """Path inside the volume to mount instead of its root."""
    sub_path_expr: str | None = None
    """Like subPath, with `$(VAR)` expansion."""
    mount_propagation: str | None = None
    """None, HostToContainer or Bidirectional."""


class Toleration(GryviaModel):
    """A pod toleration (Kubernetes `Toleration`)."""

    key: str | None = None
    """Taint key; empty with operator Exists matches every taint."""
    operator: str | None = None
    """Exists or Equal (default Equal)."""
    value: str | None = None
    """Taint value for operator Equal."""
    effect: str | None = None
    """NoSchedule, PreferNoSchedule or NoExecute; empty matches all."""
    toleration_seconds: Int64 | None = None
    """How long a NoExecute taint is tolerated."""


class ResourceRequirements(GryviaModel):
    """Container requests and limits; the GPU limit is added by the operator, not here."""

    limits: dict[str, Quantity] | None = None
    """Maximum resources, e.g. `{cpu: "8", memory: 64Gi}`."""
    requests: dict[str, Quantity] | None = None
    """Guaranteed resources; cpu and memory must be positive and not above the limits."""


class LabelSelectorRequirement(GryviaModel):
    """One `matchExpressions` term of a label selector."""

    key: str
    """Label key."""
    operator: str
    """In, NotIn, Exists or DoesNotExist."""
    values: list[str] | None = None
    """Values for In and NotIn."""


class LabelSelector(GryviaModel):
    """A Kubernetes label selector; empty selects everything."""

    match_labels: dict[str, str] | None = None
    """Labels that must all be present with these values."""
    match_expressions: list[LabelSelectorRequirement] | None = None
    """Set-based requirements, all of which must hold."""


def selector_matches(selector: LabelSelector | None, labels: Mapping[str, str]) -> bool:
    """True when `labels` satisfy a Kubernetes label selector (None or empty: everything).

    Unknown operators match nothing (the API server refuses them on real selectors)."""
    if selector is None:
        return True
    for key, value in (selector.match_labels or {}).items():
        if labels.get(key) != value:
            return False
    for req in selector.match_expressions or []:
        values = set(req.values or [])
        present = req.key in labels
        ok = {
            "In": present and labels.get(req.key) in values,
            "NotIn": not present or labels.get(req.key) not in values,
            "Exists": present,
            "DoesNotExist": not present,
        }.get(req.operator, False)
        if not ok:
            return False
    return True
