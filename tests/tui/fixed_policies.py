"""The fixed cluster plus the job-policy kinds (hooks, priorities, checkpoint guards, GPU
sharing policies), more budgets and their events: what the snapshots and pilot tests of the
`:hooks`, `:priorities`, `:checkpoints`, `:gpusharing` and `:budgets` views show."""

from __future__ import annotations

from typing import Any

from gryvia_operator.api.priority import PRIORITY_TABLE
from tests.tui.builders import H, M, ts
from tests.tui.fixed import _event, fixed_cluster

API = "gryvia.io/v1alpha1"


def ready(status: str, reason: str, message: str = "", ago: Any = H) -> dict[str, Any]:
    """A Ready condition that changed `ago` before NOW."""
    return {
        "type": "Ready",
        "status": status,
        "reason": reason,
        "message": message,
        "lastTransitionTime": ts(ago),
    }


def obj(
    kind: str, name: str, spec: dict[str, Any], status: Any = None, **meta: Any
) -> dict[str, Any]:
    """A raw object of `kind` created a day before NOW (`namespace=` for namespaced ones)."""
    out: dict[str, Any] = {
        "apiVersion": API,
        "kind": kind,
        "metadata": {"name": name, "creationTimestamp": ts(24 * H), "uid": f"uid-{name}", **meta},
        "spec": spec,
    }
    if status is not None:
        out["status"] = status
    return out


def hook(name: str, ns: str, spec: dict[str, Any], status: Any = None) -> dict[str, Any]:
    """A GryviaJobHook."""
    return obj("GryviaJobHook", name, spec, status, namespace=ns)


HOOKS = [
    hook(
        "notify-done",
        "tenant-acme",
        {
            "events": ["Succeeded", "Failed"],
            "selector": {"matchLabels": {"team": "ml"}},
            "webhook": {
                "url": "https://hooks.acme.example/gryvia",
                "headers": {"X-Team": "ml", "Authorization": "Bearer not-shown"},
                "secretRef": {"name": "hook-key"},
            },
            "retry": {"attempts": 5, "backoffSeconds": 30},
        },
        {
            "conditions": [ready("True", "Valid", "deliveries go to hooks.acme.example")],
            "deliveries": 42,
            "failures": 1,
            "lastDelivery": ts(12 * M),
            "lastError": "POST https://hooks.acme.example/gryvia: HTTP 503 after 5 attempts",
        },
    ),
    hook(
        "chat-failures",
        "tenant-acme",
        {
            "events": ["Failed", "Preempted"],
            "webhook": {"url": "https://chat.example/hooks/T000/B000", "format": "slack"},
            "suspend": True,
        },
        {"conditions": [ready("False", "Suspended", "spec.suspend is true")], "deliveries": 7},
    ),
    hook(
        "audit",
        "tenant-globex",
        {"events": ["Running"], "webhook": {"url": "http://10.0.0.5/hook"}},
        {
            "conditions": [
                ready("False", "InvalidSpec", "10.0.0.5 is in a private range (10.0.0.0/8)")
            ],
        },
    ),
    hook(
        "fresh",
        "tenant-globex",
        {"events": ["Succeeded"], "webhook": {"url": "https://ci.globex.example/done"}},
    ),
]

PRIORITIES = [
    obj(
        "GryviaPriority",
        band.name,
        {"value": band.value, "description": band.description},
        {"priorityClassName": band.name, "conditions": [ready("True", "Applied")]},
    )
    for band in PRIORITY_TABLE
] + [
    obj(
        "GryviaPriority",
        "urgent",
        {"value": 50000, "description": "deadline work"},
        {"priorityClassName": "urgent", "conditions": [ready("True", "Applied")]},
    ),
    obj("GryviaPriority", "batch", {"value": 100, "preemptionPolicy": "Never"}),
    obj(
        "GryviaPriority",
        "clash",
        {"value": 2000},
        {"conditions": [ready("False", "Conflict", "PriorityClass clash belongs to someone else")]},
    ),
]

GUARDS = [
    obj(
        "GryviaCheckpointGuard",
        "guarded",
        {
            "jobSelector": {"matchLabels": {"checkpoint": "on"}},
            "checkpointPolicy": {"intervalSeconds": 300, "directory": "checkpoints"},
        },
        {
            "conditions": [ready("True", "Valid")],
            "jobs": [
                {
                    "job": "llama-pretrain",
                    "steps": [1200, 1500, 1800],
                    "lastCommitTime": ts(20 * M),
                    "restores": 1,
                }
            ],
            "lastRestore": {
                "job": "llama-pretrain",
                "pod": "llama-pretrain-1",
                "step": 1500,
                "reason": "PodEvicted",
                "time": ts(2 * H),
            },
        },
        namespace="tenant-acme",
    ),
    obj(
        "GryviaCheckpointGuard",
        "all-jobs",
        {
            "jobSelector": {},
            "checkpointPolicy": {"intervalSeconds": 600, "directory": "ckpt/runs"},
            "restore": {"enabled": True, "wholeJob": False},
        },
        {"conditions": [ready("True", "Valid")], "jobs": []},
        namespace="tenant-globex",
    ),
]

SHARING = [
    obj(
        "GryviaGPUSharingPolicy",
        "h100-time-slicing",
        {
            "strategy": "time-slicing",
            "nodeSelector": {"matchLabels": {"gryvia.io/gpu": "H100", "gpu-sharing": "on"}},
            "timeSlicing": {"replicas": 4},
        },
        {
            "configName": "gryvia-ts-4",
            "nodes": ["gpu-h100-0"],
            "conditions": [ready("True", "Applied")],
        },
    ),
    obj(
        "GryviaGPUSharingPolicy",
        "a100-mig",
        {
            "strategy": "mig",
            "nodeSelector": {"matchLabels": {"gryvia.io/gpu": "A100-80G"}},
            "mig": {"strategy": "mixed", "config": "all-1g.10gb"},
        },
        {
            "conditions": [
                ready(
                    "False",
                    "ConfigMapFailed",
                    "namespace gpu-operator not found: create it or set "
                    "--device-plugin-config-namespace",
                )
            ],
        },
    ),
    obj(
        "GryviaGPUSharingPolicy",
        "l40-shared",
        {"strategy": "time-slicing", "nodeSelector": {}, "timeSlicing": {"replicas": 2}},
    ),
]

BUDGETS = [
    obj(
        "GryviaBudget",
        "acme-monthly",
        {
            "scope": {"type": "tenant", "name": "acme"},
            "period": {"type": "monthly"},
            "limits": {"costUSD": 100},
            "alerts": [{"threshold": 50}, {"threshold": 90, "actions": ["block"]}],
            "enforcement": {"enabled": True, "action": "block", "gracePeriod": "2h"},
            "receiver": {"url": "https://hooks.acme.example/budget"},
        },
        {
            "currentPeriod": {
                "startDate": "2026-11-01",
                "endDate": "2026-11-30",
                "daysRemaining": 11,
                "costLimitUSD": 100,
            },
            "usage": {"costUSD": 93.1, "gpuHours": 41.5},
            "utilization": {"costPercent": 93.1, "percent": 93.1},
            "state": "warning",
            "forecast": {
                "projectedCostUSD": 146.2,
                "budgetSufficient": False,
                "estimatedExhaustionDate": "2026-11-21",
            },
            "alerts": [
                {"threshold": 50, "timestamp": ts(5 * 24 * H), "delivered": True},
                {"threshold": 90, "timestamp": ts(3 * H), "delivered": False, "lastError": "502"},
            ],
        },
    ),
    obj(
        "GryviaBudget",
        "research-gpu-h",
        {
            "scope": {"type": "team", "name": "research"},
            "period": {"type": "weekly", "weekStart": "monday"},
            "limits": {"gpuHours": 200, "maxConcurrentJobs": 4},
            "enforcement": {"enabled": True, "action": "throttle"},
        },
        {
            "usage": {"costUSD": 0, "gpuHours": 212.4},
            "utilization": {"gpuHoursPercent": 106.2, "percent": 106.2},
            "state": "exceeded",
            "forecast": {"projectedGPUHours": 260, "budgetSufficient": False},
        },
    ),
    obj(
        "GryviaBudget",
        "q4-launch",
        {
            "scope": {"type": "namespace", "name": "default"},
            "period": {"type": "custom", "startDate": "2026-12-01", "endDate": "2026-12-15"},
            "limits": {"costUSD": 500},
        },
    ),
]

EVENTS = [
    _event(
        "p1",
        "tenant-acme",
        "GryviaJobHook",
        "notify-done",
        "DeliveryFailed",
        "POST https://hooks.acme.example/gryvia: HTTP 503 after 5 attempts",
        30 * M,
        type="Warning",
    ),
    _event(
        "p2",
        "tenant-acme",
        "GryviaCheckpointGuard",
        "guarded",
        "Restored",
        "llama-pretrain-1 resumes from step 1500 (PodEvicted)",
        2 * H,
    ),
    _event("p3", "default", "GryviaPriority", "clash", "Conflict", "PriorityClass clash", H),
    _event(
        "p4", "default", "GryviaGPUSharingPolicy", "a100-mig", "ConfigMapFailed", "no ns", 5 * M
    ),
    _event("p5", "default", "GryviaBudget", "acme-monthly", "Threshold", "90 % reached", 3 * H),
]


IDLE = [
    obj(
        "GryviaIdlePolicy",
        "idle-gpus",
        {"thresholdPercent": 5.0, "windowSeconds": 1800, "graceSeconds": 600, "action": "suspend"},
        {
            "phase": "Active",
            "message": "1 of 3 covered running jobs idle",
            "coveredJobs": 3,
            "jobs": [
                {
                    "job": "llama-pretrain",
                    "namespace": "tenant-acme",
                    "idleSince": ts(40 * M),
                    "activityPercent": 1.5,
                    "warnedAt": ts(10 * M),
                    "message": "GPU activity at most 1.5% (DCGM_FI_DEV_GPU_UTIL)",
                }
            ],
        },
        namespace="tenant-acme",
    ),
]

STORAGES = [
    obj(
        "GryviaStorage",
        "fast-nfs",
        {"backend": "nfs", "endpoint": "nfs-1:/export/ai", "capacity": "100Ti"},
        {
            "phase": "Ready",
            "storageClass": "fast-nfs",
            "provisioner": "nfs.csi.k8s.io",
            "provisionerAnswering": True,
            "claims": 3,
            "used": "1536Gi",
            "free": "100864Gi",
            "probe": {
                "claim": "gryvia-probe-fast-nfs-1",
                "startedAt": ts(2 * M),
                "finishedAt": ts(2 * M),
                "result": "Bound",
                "bindSeconds": 0.8,
            },
        },
    ),
    obj("GryviaStorage", "scratch", {"backend": "existing", "storageClass": "gone"}),
]


def policy_cluster() -> dict[str, list[dict[str, Any]]]:
    """fixed_cluster() with hooks, priorities, guards, sharing and idle policies, storage
    backends, three more budgets and events about them."""
    cluster = fixed_cluster()
    cluster["jobhooks"] = HOOKS
    cluster["priorities"] = PRIORITIES
    cluster["checkpointguards"] = GUARDS
    cluster["gpusharingpolicies"] = SHARING
    cluster["idlepolicies"] = IDLE
    cluster["storages"] = STORAGES
    cluster["budgets"] = cluster["budgets"] + BUDGETS
    cluster["events"] = cluster["events"] + EVENTS
    return cluster
