"""Node taints and pod tolerations, as the kube-scheduler's TaintToleration filter reads them.

The matching rule is Kubernetes' own (`ToleratesTaint` in k8s.io/api core/v1
toleration.go): a toleration matches a taint when the effects match (an empty toleration
effect matches every effect), the keys match (an empty key with operator `Exists` matches
every key), and, for operator `Equal` (the default), the values are equal; `Exists` ignores
the value. Only `NoSchedule` and `NoExecute` taints keep a pod off a node; `PreferNoSchedule`
is a preference.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

HARD_EFFECTS = frozenset({"NoSchedule", "NoExecute"})
"""The effects that keep a pod that does not tolerate them off a node."""

SCHEDULER_KEY_PREFIX = "node.kubernetes.io/"
"""Taints the node lifecycle controller adds for a node's conditions (not-ready, unreachable,
unschedulable, ...): placement reads those conditions themselves, so these are left out."""


@dataclass(frozen=True)
class Taint:
    """One node taint (Kubernetes `Taint`): key, value ("" when none) and effect."""

    key: str
    value: str
    effect: str

    def __str__(self) -> str:
        """`key=value:Effect`, or `key:Effect` without a value (kubectl's spelling)."""
        return (
            f"{self.key}={self.value}:{self.effect}" if self.value else f"{self.key}:{self.effect}"
        )


def hard_taints(node: Mapping[str, Any]) -> tuple[Taint, ...]:
    """The `NoSchedule`/`NoExecute` taints of a Node object (`spec.taints`), without the node
    lifecycle controller's own (`node.kubernetes.io/...`)."""
    out = []
    for raw in (node.get("spec") or {}).get("taints") or []:
        if not isinstance(raw, Mapping):
            continue
        taint = Taint(
            str(raw.get("key") or ""), str(raw.get("value") or ""), str(raw.get("effect") or "")
        )
        if taint.effect in HARD_EFFECTS and not taint.key.startswith(SCHEDULER_KEY_PREFIX):
            out.append(taint)
    return tuple(out)


def tolerates(toleration: Mapping[str, Any], taint: Taint) -> bool:
    """True when one toleration (wire names: key, operator, value, effect) matches `taint`."""
    effect = toleration.get("effect") or ""
    if effect and effect != taint.effect:
        return False
    key = toleration.get("key") or ""
    operator = toleration.get("operator") or "Equal"
    if not key:
        return operator == "Exists"
    if key != taint.key:
        return False
    return operator == "Exists" or (toleration.get("value") or "") == taint.value


def untolerated(taints: Iterable[Taint], tolerations: Iterable[Mapping[str, Any]]) -> list[Taint]:
    """The taints of `taints` no toleration of `tolerations` matches."""
    given = list(tolerations)
    return [t for t in taints if not any(tolerates(tol, t) for tol in given)]
