"""Knobs of the reconcilers that are not part of a job's spec (one object, set at startup)."""

from __future__ import annotations

from dataclasses import dataclass, field

from gryvia_operator.api.datasetuse import DatasetVolume
from gryvia_operator.api.jobstorage import DataClaim
from gryvia_operator.reconcile.checkpointguard import CheckpointPlan
from gryvia_operator.reconcile.kueue import KueueSettings


@dataclass(frozen=True)
class ReconcileConfig:
    """Cluster facts and timings the pure reconcile functions need."""

    cluster_domain: str = "cluster.local"
    """DNS domain of the cluster (MASTER_ADDR is `<pod>.<service>.<ns>.svc.<domain>`)."""
    rdma_network: str = "rdma-network"
    """Multus network attached to pods of `network: rdma` jobs."""
    sriov_network: str = "sriov-network"
    """Multus network attached to pods of `network: sriov` jobs."""
    scheduling_retry_seconds: float = 30.0
    """How often a job that fits no node is placed again (node and pod changes retry at once)."""
    error_retry_seconds: float = 10.0
    """Retry delay after a failed child write."""
    conflict_retry_seconds: float = 2.0
    storage_retry_seconds: float = 30.0
    """How often a job that waits for its storage (its data claim refused by a ResourceQuota,
    or not bound) is read again."""
    """Retry delay while a child of a deleted job of the same name is being collected."""
    admission_gate: bool = False
    """The opt-in admission gate (budget rule of `gryvia_operator.api.budgetgate`)."""
    admission_fail_open: bool = True
    """Admit jobs the gate cannot check (condition AdmissionUnchecked) instead of holding them."""
    admission_default_hours: float = 1.0
    """Hours the gate estimates for a job without a timeout."""
    billing_ledger: bool = False
    job_record_retention_days: int = 90
    """Days a GryviaJobRecord is kept before its tenant-month roll-up takes it."""
    job_record_rollup_seconds: float = 3600.0
    """Seconds between two roll-up passes."""
    """Write the hash-chained billing ledger (GryviaLedgerEntry per sealed usage record)."""
    stripe: bool = False
    """Push Finalized GryviaInvoices to Stripe and mark them Paid on its events (`--stripe`)."""
    job_hooks: bool = False
    """Deliver GryviaJobHooks (`--enable-job-hooks`)."""
    job_hook_allowed_cidrs: tuple[str, ...] = ()
    """Ranges hook deliveries may reach despite the SSRF guard."""
    job_hook_workers: int = 4
    """Hook deliveries in flight at once."""
    reservations: bool = False
    """Run the GryviaReservation controller and honour `gryvia.io/reservation` on jobs."""
    workflows: bool = False
    """Run the GryviaWorkflow controller (`--enable-workflows`)."""
    inference: bool = False
    """Run the GryviaInferenceService controller (`--enable-inference`)."""
    model_registry: bool = False
    """Run the GryviaModelRegistry controller (`--enable-model-registry`)."""
    priorities: bool = False
    """Priorities enabled: pods get the job's PriorityClass, full quotas preempt lower jobs."""
    checkpoint_guards: bool = False
    """Serve GryviaCheckpointGuards (`--enable-checkpoint-guards`)."""
    checkpoint_poll_seconds: float = 5.0
    """How often guarded pods' logs are read for committed steps."""
    autotuners: bool = False
    """Run the GryviaAutoTuner controller (`--enable-autotuners`)."""
    gpu_metrics: bool = False
    """Sample the GPUs of running jobs (`--enable-gpu-metrics`) every `gpu_sample_seconds`."""
    gpu_sample_seconds: float = 30.0
    stalled_seconds: float = 1800.0
    """Idle GPUs and a silent log this long make a running job `Stalled`."""
    prometheus_url: str = ""
    """Where the GPU sampler asks for dcgm-exporter's series ("" reads the exporter pods)."""
    gpu_sharing: bool = False
    """Serve GryviaGPUSharingPolicies (`--enable-gpu-sharing`)."""
    device_plugin_config: tuple[str, str] = ("gpu-operator", "gryvia-device-plugin-config")
    """(namespace, name) of the NVIDIA device plugin ConfigMap."""
    simulate_device_plugin: bool = False
    """Sandbox only: advertise time-sliced GPUs on node status."""
    kueue: KueueSettings = field(default_factory=KueueSettings)
    """The Kueue integration (`--enable-kueue`): off leaves Gryvia's own quota gate in charge of
    every job."""
    datasets: tuple[DatasetVolume, ...] = ()
    """This job's datasets that can be mounted (`api.datasetuse.dataset_use`), read-only."""
    checkpoint: CheckpointPlan | None = None
    """The job's checkpoint guard plan (set per job by the handler; None: not guarded)."""
    data_claim: DataClaim | None = None
    """The job's data claim (`Observed.data_claim`, copied here per job by
    `handlers.jobsteps` so the pod template and the checkpoint plan see it): its name is the
    claim the pods mount at `/data`; None: `<job>-data`."""
