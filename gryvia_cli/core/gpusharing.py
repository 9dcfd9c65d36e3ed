"""GPU sharing policies for people (pure): the body `gryvia sharing create` applies, the row
of a GryviaGPUSharingPolicy in a list (`gryvia sharing list`, the console's `:gpusharing`) and
the label/value lines of its details. The operator decides which nodes a policy covers and
writes them to its status; this module only builds, reads and formats."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from gryvia_cli.core.cells import Marked
from gryvia_cli.core.manifests import new_object
from gryvia_cli.core.timefmt import age
from gryvia_operator.api.controlled import checked_body
from gryvia_operator.api.core import LabelSelector
from gryvia_operator.api.gpusharing import GryviaGPUSharingPolicy

SHARING_COLUMNS = ("NAME", "STRATEGY", "SHARING", "NODE SELECTOR", "CONFIG", "NODES", "READY")
SHARING_WIDE_COLUMNS = (*SHARING_COLUMNS, "AGE")
READY_MARKERS = {"Applied": "ok", "Pending": "info"}
"""Marker of a policy's Ready reason (anything else, e.g. ConfigMapFailed, is an error)."""


def selector_text(selector: LabelSelector | None, everything: str = "every GPU node") -> str:
    """`gryvia.io/gpu=H100, pool In a,b`, or `everything` for an empty selector."""
    if selector is None:
        return everything
    parts = [f"{k}={v}" for k, v in sorted((selector.match_labels or {}).items())]
    parts += [
        f"{e.key} {e.operator} {','.join(e.values or [])}".strip()
        for e in selector.match_expressions or []
    ]
    return ", ".join(parts) or everything


def sharing_text(policy: GryviaGPUSharingPolicy) -> str:
    """How the GPUs are shared: `4 replicas` (time-slicing) or `mixed all-1g.10gb` (MIG)."""
    spec = policy.spec
    if spec.strategy == "time-slicing" and spec.time_slicing is not None:
        return f"{spec.time_slicing.replicas} replicas"
    mig = spec.mig
    return f"{mig.strategy if mig else 'mixed'} {mig.config if mig else 'all-1g.10gb'}"


def ready(policy: GryviaGPUSharingPolicy) -> tuple[str, str]:
    """(Ready reason, message): `Applied`, `ConfigMapFailed`, ..., or `Pending` before the
    operator (run with --enable-gpu-sharing) applied it."""
    for cond in (policy.status.conditions if policy.status else None) or []:
        if cond.type == "Ready":
            return cond.reason or cond.status, cond.message or ""
    return "Pending", "the operator has not applied it (is it run with --enable-gpu-sharing?)"


def _nodes(policy: GryviaGPUSharingPolicy) -> list[str]:
    return list((policy.status.nodes if policy.status else None) or [])


def sharing_row(policy: GryviaGPUSharingPolicy, now: datetime) -> list[Any]:
    """NAME, STRATEGY, SHARING, NODE SELECTOR, CONFIG, NODES (the nodes labelled with it),
    READY (a Marked reason) and AGE."""
    reason = ready(policy)[0]
    nodes = _nodes(policy)
    return [
        policy.name,
        policy.spec.strategy,
        sharing_text(policy),
        selector_text(policy.spec.node_selector),
        (policy.status.config_name if policy.status else None) or "-",
        ", ".join(nodes) or "-",
        Marked(reason, READY_MARKERS.get(reason, "error")),
        age(policy.metadata.creation_timestamp, now),
    ]


def sharing_details(policy: GryviaGPUSharingPolicy) -> list[tuple[str, str]]:
    """(label, value) lines: strategy and its settings, the nodes it selects and holds, the
    device plugin configuration key, and Ready."""
    spec = policy.spec
    reason, message = ready(policy)
    lines = [
        ("Name", policy.name),
        ("Strategy", spec.strategy),
        ("Selects", selector_text(spec.node_selector)),
    ]
    if spec.strategy == "time-slicing" and spec.time_slicing is not None:
        ts = spec.time_slicing
        resource = "nvidia.com/gpu.shared" if ts.rename_by_default else "nvidia.com/gpu"
        lines += [
            ("Replicas", f"{ts.replicas} {resource} units per physical GPU"),
            ("Requests > 1", "refused" if ts.fail_requests_greater_than_one else "allowed"),
        ]
    else:
        mig = spec.mig
        lines += [
            ("MIG strategy", mig.strategy if mig else "mixed"),
            ("MIG layout", mig.config if mig else "all-1g.10gb"),
        ]
    nodes = _nodes(policy)
    lines += [
        ("Config key", (policy.status.config_name if policy.status else None) or "-"),
        ("Nodes", f"{len(nodes)}: {', '.join(nodes)}" if nodes else "none labelled yet"),
        ("Ready", f"{reason}: {message}" if message else reason),
    ]
    return lines


def build_sharing_policy(
    name: str,
    strategy: str,
    selector: list[str],
    *,
    replicas: int | None = None,
    rename_by_default: bool = False,
    one_unit_per_pod: bool = False,
    mig_strategy: str | None = None,
    mig_config: str | None = None,
) -> dict[str, Any]:
    """The GryviaGPUSharingPolicy `gryvia sharing create` applies: `selector` is KEY=VALUE
    node labels (none: every GPU node). Raises ValueError naming the option to fix, with
    the model's rules (replicas 2..64, strategy time-slicing|mig, the MIG layout's form)."""

    labels: dict[str, str] = {}
    for item in selector:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ValueError(f"--node-selector {item!r}: use KEY=VALUE, e.g. gryvia.io/gpu=H100")
        labels[key] = value
    spec: dict[str, Any] = {"strategy": strategy, "nodeSelector": {"matchLabels": labels}}
    if strategy == "time-slicing":
        if replicas is None:
            raise ValueError("--replicas: time-slicing needs the shared units per GPU (2..64)")
        spec["timeSlicing"] = {
            "replicas": replicas,
            "renameByDefault": rename_by_default,
            "failRequestsGreaterThanOne": one_unit_per_pod,
        }
    elif strategy == "mig":
        if replicas is not None:
            raise ValueError("--replicas: only with --strategy time-slicing")
        mig = {"strategy": mig_strategy, "config": mig_config}
        spec["mig"] = {k: v for k, v in mig.items() if v is not None}
    else:
        raise ValueError(f"--strategy {strategy}: use time-slicing or mig")
    body = new_object("GryviaGPUSharingPolicy", name, spec)
    return checked_body(GryviaGPUSharingPolicy, body)
