"""The fixed cluster every rendering test and snapshot shows, and the log of its busiest pod."""

from __future__ import annotations

from typing import Any

from gryvia_operator.api.pricing import default_catalog
from tests.tui.builders import D, H, M, gpu_node, make_job, node, pod, ts, usage

LLAMA_REPLICAS = {
    0: [96, 98, 97, 99, 98, 97, 96, 98, 99, 97, 98, 96, 97, 99, 98, 97, 98, 96, 99, 98],
    1: [95, 97, 96, 12, 4, 3, 61, 94, 96, 97, 95, 96, 98, 97, 96, 95, 97, 96, 98, 97],
}
"""llama-pretrain's replicas' recent GPU activity (replica 1 stalled for a while, restarted)."""


def fixed_cluster() -> dict[str, list[dict[str, Any]]]:
    """The cluster every snapshot shows: kind -> raw objects."""
    acme, globex = "tenant-acme", "tenant-globex"
    jobs = [
        make_job("llama-pretrain")
        .ns(acme)
        .created(3 * H + 5 * M)
        .gpus(8)
        .gpu_type("H100")
        .nodes(2)
        .spec(timeout="24h", command=["torchrun", "train.py"])
        .phase("Running", started=3 * H, nodes=("gpu-h100-0", "gpu-h100-1"))
        .gpu_activity(97.4, 95.0, LLAMA_REPLICAS)
        .condition("Scheduled", "True", "Scheduled", "Job scheduled successfully", 3 * H)
        .condition("Ready", "True", "Ready", "All replicas are ready", 3 * H)
        .obj(),
        make_job("bert-finetune")
        .ns(acme)
        .annotate("gryvia.io/submitted-by", "alice@example.com")
        .type("fine-tuning")
        .created(50 * M)
        .gpus(4)
        .gpu_type("A100-80G")
        .phase("Running", started=40 * M, nodes=("gpu-a100-80g-0",))
        .gpu_activity(3.0, 4.5)
        .obj(),
        make_job("eval-nightly")
        .ns(globex)
        .type("evaluation")
        .created(5 * H)
        .gpus(2)
        .gpu_type("A100-80G")
        .phase("Succeeded", started=5 * H, ended=4 * H - 35 * M)
        .obj(),
        make_job("sd-inference")
        .ns(globex)
        .annotate("gryvia.io/submitted-by", "bob@example.com")
        .type("inference")
        .created(2 * D + 3 * H)
        .gpus(1)
        .gpu_type("L40")
        .phase("Running", started=2 * D + 3 * H, nodes=("gpu-l40-0",))
        .obj(),
        make_job("big-sweep")
        .ns(acme)
        .annotate("gryvia.io/submitted-by", "alice@example.com")
        .created(25 * M)
        .gpus(8)
        .gpu_type("H100")
        .phase("Queued", message="quota acme: 16 of 16 GPUs held by running jobs")
        .obj(),
        make_job("gb200-probe")
        .ns("default")
        .created(12 * M)
        .gpus(4)
        .gpu_type("GB200")
        .phase("Pending")
        .obj(),
        make_job("waiting-a100")
        .ns(globex)
        .created(8 * M)
        .gpus(8)
        .gpu_type("A100-80G")
        .phase("Pending", message="waiting for placement")
        .obj(),
        make_job("cpu-preprocess")
        .ns("default")
        .created(6 * H)
        .gpus(0)
        .phase("Succeeded", started=6 * H, ended=5 * H + 50 * M)
        .obj(),
        make_job("crashy")
        .ns(globex)
        .created(2 * H)
        .gpus(1)
        .gpu_type("L40")
        .phase("Failed", started=2 * H - M, ended=H + 50 * M, message="BackoffLimitExceeded")
        .obj(),
        make_job("too-big")
        .ns(acme)
        .created(D)
        .gpus(64)
        .gpu_type("H100")
        .phase("Rejected", message="64 GPUs exceed maxGPUsPerJob 32")
        .condition("Rejected", "True", "QuotaExceeded", "64 GPUs exceed maxGPUsPerJob 32", D)
        .obj(),
        make_job("old-sweep")
        .ns(acme)
        .created(3 * D)
        .gpus(2)
        .gpu_type("H100")
        .phase("Cancelled", started=3 * D, ended=2 * D + 20 * H, message="Cancelled by user")
        .obj(),
        make_job("stopping-run")
        .ns(globex)
        .created(90 * M)
        .gpus(4)
        .gpu_type("A100-80G")
        .annotate("gryvia.io/cancel", "true")
        .phase("Running", started=80 * M, nodes=("gpu-a100-80g-1",))
        .obj(),
        make_job("l40-batch")
        .ns(globex)
        .type("evaluation")
        .created(2 * M)
        .gpus(2)
        .gpu_type("L40")
        .phase("Scheduling", nodes=("gpu-l40-1",))
        .obj(),
    ]
    gpunodes = [
        gpu_node("gpu-h100-0", "H100", 8),
        gpu_node("gpu-h100-1", "H100", 8),
        gpu_node("gpu-a100-80g-0", "A100-80G", 8),
        gpu_node("gpu-a100-80g-1", "A100-80G", 8),
        gpu_node("gpu-l40-0", "L40", 4, memory=48),
        gpu_node("gpu-l40-1", "L40", 4, phase="Degraded", memory=48),
    ]
    nodes = [node(n["metadata"]["name"]) for n in gpunodes] + [node("cpu-0")]
    pods = [
        pod("llama-pretrain", acme, 0, "gpu-h100-0", 8, started=3 * H),
        pod("llama-pretrain", acme, 1, "gpu-h100-1", 8, started=3 * H, restarts=1),
        pod("bert-finetune", acme, 0, "gpu-a100-80g-0", 4, started=40 * M),
        pod("sd-inference", globex, 0, "gpu-l40-0", 1, started=2 * D),
        pod("stopping-run", globex, 0, "gpu-a100-80g-1", 4, started=80 * M),
    ]
    records = [
        usage("llama-pretrain", acme, "acme", "H100", 16, 8.0, 3 * H, 3.0, final=False),
        usage("bert-finetune", acme, "acme", "A100-80G", 4, 4.0, 40 * M, 0.66, final=False),
        usage("eval-nightly", globex, "globex", "A100-80G", 2, 4.0, 5 * H, 0.42),
        usage("sd-inference", globex, "globex", "L40", 1, 2.5, 2 * D + 3 * H, 51.0, final=False),
        usage("old-sweep", acme, "acme", "H100", 2, 8.0, 3 * D, 28.0),
        usage("nov-train-a", acme, "acme", "H100", 8, 8.0, 15 * D, 30.0),
        usage("nov-train-b", globex, "globex", "A100-80G", 8, 4.0, 9 * D, 20.0),
        usage("nov-train-c", acme, "acme", "H100", 16, 8.0, 6 * D, 12.0),
    ]
    tenants = [
        {
            "apiVersion": "gryvia.io/v1alpha1",
            "kind": "GryviaTenant",
            "metadata": {"name": "acme"},
            "spec": {
                "displayName": "ACME",
                "quotas": {"costUSD": {"monthly": 20000}},
                "members": [
                    {"username": "alice@acme.example", "role": "admin"},
                    {"username": "bob@acme.example", "role": "member"},
                ],
            },
        },
        {
            "apiVersion": "gryvia.io/v1alpha1",
            "kind": "GryviaTenant",
            "metadata": {"name": "globex"},
            "spec": {"displayName": "Globex", "quotas": {"costUSD": {"monthly": 1500}}},
        },
    ]
    quotas = [
        {
            "apiVersion": "gryvia.io/v1alpha1",
            "kind": "GryviaQuota",
            "metadata": {"name": "acme"},
            "spec": {
                "team": "acme",
                "namespaces": [acme],
                "gpuQuota": {"maxGPUs": 16},
                "budget": {"monthlyBudget": 12000, "alertThreshold": 80},
            },
        },
    ]
    budgets = [
        {
            "apiVersion": "gryvia.io/v1alpha1",
            "kind": "GryviaBudget",
            "metadata": {"name": "globex-monthly"},
            "spec": {
                "scope": {"type": "tenant", "name": "globex"},
                "period": {"type": "monthly"},
                "limits": {"costUSD": 1500},
                "alerts": [{"threshold": 50}, {"threshold": 90}],
                "enforcement": {"enabled": True, "action": "block"},
            },
            "status": {
                "usage": {"costUSD": 71.42},
                "utilization": {"costPercent": 4.8, "percent": 4.8},
                "state": "active",
                "forecast": {"projectedCostUSD": 120.5, "budgetSufficient": True},
            },
        },
    ]
    reservations = [
        {
            "apiVersion": "gryvia.io/v1alpha1",
            "kind": "GryviaReservation",
            "metadata": {"name": "acme-h100-weekly"},
            "spec": {
                "owner": {"type": "tenant", "name": "acme"},
                "resources": {"gpuType": "H100", "gpuCount": 8},
                "schedule": {
                    "type": "scheduled",
                    "startTime": "2026-11-20T08:00:00Z",
                    "endTime": "2026-11-20T20:00:00Z",
                },
            },
            "status": {"state": "active", "allocatedGPUs": 8, "allocatedNodes": ["gpu-h100-1"]},
        },
        {
            "apiVersion": "gryvia.io/v1alpha1",
            "kind": "GryviaReservation",
            "metadata": {"name": "globex-demo"},
            "spec": {
                "owner": {"type": "tenant", "name": "globex"},
                "resources": {"gpuType": "L40", "gpuCount": 2},
                "schedule": {
                    "type": "scheduled",
                    "startTime": "2026-11-21T09:00:00Z",
                    "endTime": "2026-11-21T17:00:00Z",
                },
            },
            "status": {"state": "pending"},
        },
    ]
    skus = [s.model_dump(mode="json", by_alias=True, exclude_none=True) for s in default_catalog()]
    return {
        "jobs": jobs,
        "gpunodes": gpunodes,
        "nodes": nodes,
        "pods": pods,
        "usage": records,
        "tenants": tenants,
        "quotas": quotas,
        "skus": skus,
        "budgets": budgets,
        "reservations": reservations,
        "events": EVENTS,
    }


def _event(
    name: str, ns: str, kind: str, obj: str, reason: str, message: str, ago: Any, **extra: Any
) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": name, "namespace": ns, "uid": f"uid-{name}"},
        "involvedObject": {"kind": kind, "name": obj, "namespace": ns},
        "reason": reason,
        "message": message,
        "type": extra.pop("type", "Normal"),
        "lastTimestamp": ts(ago),
        **extra,
    }


EVENTS = [
    _event(
        "e1",
        "tenant-acme",
        "GryviaAIJob",
        "llama-pretrain",
        "Scheduled",
        "Job scheduled on gpu-h100-0, gpu-h100-1",
        3 * H,
    ),
    _event(
        "e2",
        "tenant-acme",
        "Pod",
        "llama-pretrain-1",
        "BackOff",
        "Back-off restarting failed container trainer",
        45 * M,
        type="Warning",
        count=3,
    ),
    _event(
        "e3",
        "tenant-globex",
        "GryviaAIJob",
        "crashy",
        "Failed",
        "BackoffLimitExceeded: [exit 1] see `gryvia logs crashy`",
        H + 50 * M,
        type="Warning",
    ),
    _event(
        "e4",
        "tenant-acme",
        "GryviaAIJob",
        "big-sweep",
        "Queued",
        "quota acme: 16 of 16 GPUs held by running jobs",
        25 * M,
    ),
    _event(
        "e5",
        "default",
        "Node",
        "gpu-l40-1",
        "NodeNotReady",
        "Node gpu-l40-1 status is now: NodeNotReady",
        2 * M,
        type="Warning",
    ),
    _event(
        "e6",
        "tenant-globex",
        "Pod",
        "sd-inference-0",
        "Pulled",
        'Container image "vllm:0.6" already present on machine',
        2 * D,
    ),
]
"""Events of the fixed cluster (the Events view lists them newest first)."""


LOG_LINES = [
    f"{ts(3 * H - i * M)} step {i * 100:>5}  loss {2.5 - i * 0.01:.3f}  lr 3e-4" for i in range(40)
]
"""The log of llama-pretrain-0 in the fake cluster."""

PREVIOUS_LOG_LINES = [
    f"{ts(3 * H - i * M)} step {i * 100:>5}  loss {2.6 - i * 0.01:.3f}" for i in range(5)
] + [f"{ts(2 * H)} RuntimeError: CUDA error: an illegal memory access was encountered"]
"""The log of llama-pretrain-1's trainer before its restart."""
