"""The operator's settings: one object from `GRYVIA_OPERATOR_*` env variables and the flags."""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from pydantic import Field, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from gryvia_operator.api.ssrf import parse_cidrs
from gryvia_operator.recordsettings import JobRecordSettings, add_job_record_arguments
from gryvia_operator.stripesettings import StripeSettings, add_stripe_arguments, stripe_problems

LogFormat = Literal["json", "text"]
LogLevel = Literal["debug", "info", "warning", "error"]


def in_cluster() -> bool:
    """True when running in a pod (the service account environment is present)."""
    return bool(os.environ.get("KUBERNETES_SERVICE_HOST"))


class OperatorSettings(StripeSettings, JobRecordSettings, BaseSettings):
    """Everything the operator process is configured with; flags override env variables
    (the Stripe fields: `gryvia_operator.stripesettings`; the job records':
    `gryvia_operator.recordsettings`)."""

    model_config = SettingsConfigDict(env_prefix="GRYVIA_OPERATOR_", extra="ignore")

    kubeconfig: Path | None = None
    """Kubeconfig file; unset: in-cluster config in a pod, else $KUBECONFIG or ~/.kube/config."""
    context: str | None = None
    """Kubeconfig context; unset: the current context."""
    namespaces: list[str] = Field(default_factory=list)
    """Namespaces whose jobs are served; empty: all namespaces."""
    peering: str | None = None
    """kopf peering object name; unset: standalone (no peering)."""
    leader_election: bool = False
    """Elect one leader through a coordination.k8s.io Lease; only it reconciles (see
    `controller/leader.py`). Off: this process alone reconciles (the sandbox's way)."""
    leader_election_id: str = "gryvia-operator"
    """Name of the Lease."""
    leader_election_namespace: str | None = None
    """Namespace of the Lease; unset: the pod's (`POD_NAMESPACE`), else `default`."""
    lease_duration: float = Field(15.0, gt=0)
    """Seconds a standby waits after the last renewal it saw before taking the Lease
    (controller-runtime's LeaseDuration)."""
    renew_deadline: float = Field(10.0, gt=0)
    """Seconds the leader keeps trying to renew before it stops (RenewDeadline)."""
    retry_period: float = Field(2.0, gt=0)
    """Seconds between two tries to acquire or renew (RetryPeriod)."""
    watch_probe_period: float = Field(15.0, ge=0)
    """Seconds of each /readyz watch probe (`controller/watchprobe.py`); 0: no probe."""
    log_level: LogLevel = "info"
    log_format: LogFormat | None = None
    """json or text; unset: json in a cluster, text elsewhere."""
    health_port: int = 8080
    """Port of /healthz and /readyz (0: off)."""
    metrics_port: int = 9090
    """Port of /metrics (0: off)."""
    probe_host: str = "0.0.0.0"
    """Address the health and metrics servers bind."""
    webhook_port: int = 9443
    """HTTPS port of the validating webhook (0: no webhook)."""
    webhook_host: str | None = None
    """Address the webhook binds and self-registers; unset: 0.0.0.0 in a cluster, else 127.0.0.1."""
    webhook_self_register: bool = False
    """Register the ValidatingWebhookConfiguration with a freshly minted CA (the sandbox's way)."""
    webhook_cert_dir: Path | None = None
    """Folder with tls.crt, tls.key (and ca.crt) of the webhook; unset: a self-signed pair."""
    webhook_config_name: str = "gryvia-validating"
    """Name of the self-registered ValidatingWebhookConfiguration."""
    webhook_failure_policy: Literal["Ignore", "Fail"] = "Ignore"
    """What the API server does when the self-registered webhook is down."""
    cluster_domain: str = "cluster.local"
    """DNS domain used in MASTER_ADDR."""
    workers: int = Field(default=16, ge=1, le=256)
    """Concurrent GryviaAIJob reconciles."""
    admission_gate: bool = False
    """Refuse a Pending job whose estimate would take a hard budget over its limit
    (`gryvia_operator.api.budgetgate`); off by default."""
    admission_fail_open: bool = True
    """When the gate cannot check a job (catalog or spend unreadable): admit it with
    condition AdmissionUnchecked and a Warning event (true), or hold it Queued (false)."""
    admission_default_hours: float = Field(default=1.0, gt=0, le=8760)
    """Hours the gate estimates for a job without a timeout."""
    billing_ledger: bool = False
    """Write the hash-chained billing ledger: one GryviaLedgerEntry per sealed usage record."""
    # Job hooks (GryviaJobHook, issue 18 part 1).
    enable_job_hooks: bool = False
    """Deliver GryviaJobHooks: signed POSTs of job transitions; off by default."""
    job_hook_allowed_cidrs: list[str] = Field(default_factory=list)
    """Address ranges hooks may reach despite the SSRF guard (e.g. an in-cluster receiver)."""
    job_hook_workers: int = Field(default=4, ge=1, le=64)
    """Hook deliveries in flight at once."""
    # --- priorities and preemption (issue 18 part 3) ---
    enable_priorities: bool = False
    """GryviaPriority -> PriorityClass, pods' priorityClassName, preemption in full quotas."""
    # Checkpoint guards (GryviaCheckpointGuard, docs/checkpoints.md).
    enable_checkpoint_guards: bool = False
    """Serve GryviaCheckpointGuards: checkpoint env, commit records and resume after a loss."""
    checkpoint_poll_seconds: float = Field(default=5.0, ge=0.2, le=300)
    """How often the logs of guarded pods are read for committed steps."""
    # GPU metrics (docs/gpu-metrics.md).
    enable_gpu_metrics: bool = False
    """Sample running jobs' GPUs from the dcgm-exporter pods into their status.metrics."""
    gpu_sample_seconds: float = Field(default=30.0, ge=1, le=3600)
    """How often the GPUs are sampled: one read of every exporter per pass."""
    stalled_seconds: float = Field(default=1800.0, ge=10, le=86400)
    """A running job idle on its GPUs and silent in its log this long is `Stalled`."""
    prometheus_url: str = Field(default="", pattern=r"^(https?://\S+)?$")
    """A Prometheus server scraping dcgm-exporter: one PromQL query a pass instead of reading
    every exporter pod through the API server ("" reads the pods)."""
    # GPU sharing (GryviaGPUSharingPolicy, docs/gpu-sharing.md).
    enable_gpu_sharing: bool = False
    """Serve GryviaGPUSharingPolicies: the device plugin ConfigMap and node labels."""
    device_plugin_config_name: str = "gryvia-device-plugin-config"
    """Name of the device plugin ConfigMap (the GPU Operator's devicePlugin.config.name)."""
    device_plugin_config_namespace: str = "gpu-operator"
    """Namespace of that ConfigMap (the GPU Operator's namespace)."""
    simulate_device_plugin: bool = False
    """Sandbox only: advertise time-sliced GPUs on the node status as a device plugin would."""
    # Auto-tuners (issue 21 part 2, docs/tuning.md).
    enable_autotuners: bool = False
    """Run the GryviaAutoTuner controller: trial jobs, their metric lines, early stopping."""
    # Kueue integration (issue 19, docs/kueue.md).
    enable_kueue: bool = False
    """Jobs in a Kueue LocalQueue are admitted by Kueue (created suspended, labelled), and each
    tenant gets ResourceFlavors, a ClusterQueue in cohort `gryvia` and a LocalQueue."""
    kueue_default_queue: str = "gryvia"
    """LocalQueue a tenant job goes to when it names none."""
    kueue_strict_admission: bool = False
    """Every job in a tenant namespace goes through the default queue, even before it exists."""
    # Reservations (issue 18 part 2).
    enable_reservations: bool = False
    """Run the GryviaReservation controller (claims, taints and labels nodes) and steer jobs
    annotated `gryvia.io/reservation: <name>` onto them."""
    # Workflows (issue 21 part 1).
    enable_workflows: bool = False
    """Run the GryviaWorkflow controller: step jobs in dependency order, numbered runs,
    cron schedules."""
    # Inference services (issue 21 part 5).
    enable_inference: bool = False
    """Run the GryviaInferenceService controller: a Deployment, Service and optional HPA and
    canary per service, status from the Deployments."""
    # Model registries (issue 21 part 6).
    enable_model_registry: bool = False
    """Run the GryviaModelRegistry controller: status of each registry and, with autoServe, a
    GryviaInferenceService kept serving its Production version."""

    @model_validator(mode="after")
    def _lease_timings(self) -> OperatorSettings:
        if not self.retry_period < self.renew_deadline < self.lease_duration:
            raise ValueError(
                "leader election needs --retry-period < --renew-deadline < --lease-duration "
                f"(got {self.retry_period}, {self.renew_deadline}, {self.lease_duration}): "
                "a leader must stop before a standby may take the Lease"
            )
        return self

    @field_validator("job_hook_allowed_cidrs")
    @classmethod
    def _cidrs(cls, value: list[str]) -> list[str]:
        parse_cidrs(value)  # raises ValueError naming the bad entry
        return value

    @property
    def effective_log_format(self) -> LogFormat:
        """json in a cluster, text elsewhere, unless set."""
        return self.log_format or ("json" if in_cluster() else "text")

    @property
    def effective_webhook_host(self) -> str:
        """The webhook's bind (and self-registration) address."""
        return self.webhook_host or ("0.0.0.0" if in_cluster() else "127.0.0.1")


def build_parser() -> argparse.ArgumentParser:
    """The `gryvia-operator` command line (every flag also has a GRYVIA_OPERATOR_* variable)."""
    p = argparse.ArgumentParser(
        prog="gryvia-operator",
        description="Run the Gryvia operator: GryviaAIJob controller, GPU node registration "
        "and the validating webhook.",
    )
    add = p.add_argument
    add("--kubeconfig", type=Path, help="kubeconfig file (env GRYVIA_OPERATOR_KUBECONFIG)")
    add("--context", help="kubeconfig context (env GRYVIA_OPERATOR_CONTEXT)")
    scope = p.add_mutually_exclusive_group()
    scope.add_argument(
        "-A", "--all-namespaces", action="store_true", help="serve every namespace (default)"
    )
    scope.add_argument(
        "-n",
        "--namespace",
        action="append",
        dest="namespaces",
        metavar="NS",
        help="serve only NS; repeatable (env GRYVIA_OPERATOR_NAMESPACES, a JSON list)",
    )
    add("--peering", metavar="NAME", help="kopf peering name; default standalone")
    add(
        "--leader-election",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="elect one leader through a Lease; only it reconciles, every replica serves the "
        "webhook and probes (env GRYVIA_OPERATOR_LEADER_ELECTION); default off",
    )
    add("--leader-election-id", help="the Lease's name (default gryvia-operator)")
    add("--leader-election-namespace", help="the Lease's namespace (default the pod's)")
    add("--lease-duration", type=float, help="seconds before a standby takes over (default 15)")
    add("--renew-deadline", type=float, help="seconds a leader tries to renew (default 10)")
    add("--retry-period", type=float, help="seconds between tries (default 2)")
    add("--watch-probe-period", type=float, help="seconds of each readiness watch probe (15)")
    add("--log-level", choices=["debug", "info", "warning", "error"])
    add("--log-format", choices=["json", "text"], help="default json in a cluster, else text")
    add("--health-port", type=int, help="/healthz and /readyz port, 0 disables (default 8080)")
    add("--metrics-port", type=int, help="/metrics port, 0 disables (default 9090)")
    add("--probe-host", help="bind address of the health and metrics servers (default 0.0.0.0)")
    add("--webhook-port", type=int, help="webhook HTTPS port, 0 disables (default 9443)")
    add("--webhook-host", help="webhook bind address (default 127.0.0.1, 0.0.0.0 in a cluster)")
    add(
        "--webhook-self-register",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="register the ValidatingWebhookConfiguration itself (sandbox); default off",
    )
    add("--webhook-cert-dir", type=Path, help="folder with tls.crt and tls.key")
    add("--webhook-config-name", help="name of the self-registered webhook configuration")
    add("--webhook-failure-policy", choices=["Ignore", "Fail"])
    add("--cluster-domain", help="cluster DNS domain (default cluster.local)")
    add("--workers", type=int, help="concurrent job reconciles (default 16)")
    add(
        "--admission-gate",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="refuse jobs whose estimate would exceed a hard budget; default off",
    )
    add(
        "--admission-fail-open",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="admit (with condition AdmissionUnchecked) jobs the gate cannot check; "
        "--no-admission-fail-open holds them; default on",
    )
    add(
        "--admission-default-hours",
        type=float,
        help="hours the gate estimates for a job without a timeout (default 1)",
    )
    add(
        "--billing-ledger",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="write the hash-chained billing ledger (env GRYVIA_OPERATOR_BILLING_LEDGER); "
        "default off",
    )
    add_stripe_arguments(p)
    add_job_record_arguments(p)
    add(
        "--enable-job-hooks",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="deliver GryviaJobHooks (env GRYVIA_OPERATOR_ENABLE_JOB_HOOKS); default off",
    )
    add(
        "--job-hook-allowed-cidr",
        action="append",
        dest="job_hook_allowed_cidrs",
        metavar="CIDR",
        help="a range hooks may reach despite the SSRF guard, e.g. 10.96.0.0/12; repeatable "
        "(env GRYVIA_OPERATOR_JOB_HOOK_ALLOWED_CIDRS, a JSON list)",
    )
    add("--job-hook-workers", type=int, help="hook deliveries in flight at once (default 4)")
    add(
        "--enable-kueue",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="admit jobs in Kueue queues with Kueue and keep each tenant's Kueue queues "
        "(env GRYVIA_OPERATOR_ENABLE_KUEUE); default off",
    )
    add("--kueue-default-queue", help="a tenant's default LocalQueue (default gryvia)")
    add(
        "--kueue-strict-admission",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="every tenant job goes through the default queue; default off",
    )
    add(
        "--enable-reservations",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="run the GryviaReservation controller (env GRYVIA_OPERATOR_ENABLE_RESERVATIONS); "
        "default off",
    )
    add(
        "--enable-workflows",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="run the GryviaWorkflow controller (env GRYVIA_OPERATOR_ENABLE_WORKFLOWS); "
        "default off",
    )
    add(
        "--enable-inference",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="run the GryviaInferenceService controller (env "
        "GRYVIA_OPERATOR_ENABLE_INFERENCE); default off",
    )
    add(
        "--enable-model-registry",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="run the GryviaModelRegistry controller (env "
        "GRYVIA_OPERATOR_ENABLE_MODEL_REGISTRY); default off",
    )
    # --- priorities and preemption (issue 18 part 3) ---
    add(
        "--enable-priorities",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="GryviaPriority controller, pod PriorityClasses and preemption of lower-priority "
        "jobs in a full quota (env GRYVIA_OPERATOR_ENABLE_PRIORITIES); default off",
    )
    # Auto-tuners (issue 21 part 2).
    add(
        "--enable-autotuners",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="run the GryviaAutoTuner controller (env GRYVIA_OPERATOR_ENABLE_AUTOTUNERS); "
        "default off",
    )
    # Checkpoint guards.
    add(
        "--enable-checkpoint-guards",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="serve GryviaCheckpointGuards (env GRYVIA_OPERATOR_ENABLE_CHECKPOINT_GUARDS); "
        "default off",
    )
    add(
        "--checkpoint-poll-seconds",
        type=float,
        help="how often guarded pods' logs are read for committed steps (default 5)",
    )
    # GPU metrics.
    add(
        "--enable-gpu-metrics",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="sample running jobs' GPUs from the dcgm-exporter pods into status.metrics "
        "(env GRYVIA_OPERATOR_ENABLE_GPU_METRICS); default off",
    )
    add(
        "--gpu-sample-seconds",
        type=float,
        help="seconds between two GPU sampling passes (default 30)",
    )
    add(
        "--stalled-seconds",
        type=float,
        help="seconds a running job's GPUs idle and log silent make it Stalled (default 1800)",
    )
    add(
        "--prometheus-url",
        help="a Prometheus scraping dcgm-exporter, asked once a sampling pass (one PromQL "
        "query) instead of every exporter pod; default: read the pods",
    )
    # GPU sharing.
    add(
        "--enable-gpu-sharing",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="serve GryviaGPUSharingPolicies (env GRYVIA_OPERATOR_ENABLE_GPU_SHARING); default off",
    )
    add("--device-plugin-config-name", help="device plugin ConfigMap name")
    add("--device-plugin-config-namespace", help="device plugin ConfigMap namespace")
    add(
        "--simulate-device-plugin",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="sandbox only: patch node status as the device plugin would; default off",
    )
    return p


def parse_settings(argv: Sequence[str] | None = None) -> OperatorSettings:
    """Read env variables, then apply the flags that were given."""
    args = vars(build_parser().parse_args(argv))
    if args.pop("all_namespaces"):
        args["namespaces"] = []
    given = {k: v for k, v in args.items() if v is not None}
    settings = OperatorSettings(**given)
    problems = stripe_problems(settings, settings.metrics_port)
    if problems:
        build_parser().error("; ".join(problems))
    return settings
