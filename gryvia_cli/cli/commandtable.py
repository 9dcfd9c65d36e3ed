"""The table of every `gryvia` command: its module (imported on first use), help section,
short help and hidden aliases. `gryvia_cli.main` registers them on the root group."""

from __future__ import annotations

from gryvia_cli.cli.group import LazyCommand

_C = "gryvia_cli.commands."
COMMANDS: tuple[tuple[LazyCommand, tuple[str, ...]], ...] = (
    (
        LazyCommand(
            "submit",
            _C + "submit",
            "Workloads",
            "Submit jobs from manifests or a Slurm batch script.",
            "submit",
        ),
        (),
    ),
    (
        LazyCommand(
            "validate",
            _C + "validate",
            "Workloads",
            "Check manifests offline with the admission webhook's rules.",
            "validate",
        ),
        (),
    ),
    (
        LazyCommand(
            "status", _C + "status", "Workloads", "Platform health, or one job's state.", "status"
        ),
        (),
    ),
    (LazyCommand("logs", _C + "logs", "Workloads", "Print or follow a job's log.", "logs"), ()),
    (
        LazyCommand("exec", _C + "podexec", "Workloads", "Run a command in a job's pod.", "exec"),
        (),
    ),
    (
        LazyCommand("shell", _C + "podexec", "Workloads", "Open a shell in a job's pod.", "shell"),
        (),
    ),
    (
        LazyCommand(
            "port-forward",
            _C + "podexec",
            "Workloads",
            "Forward a local port to a job's pod.",
            "port-forward",
        ),
        (),
    ),
    (
        LazyCommand(
            "cancel", _C + "cancel", "Workloads", "Cancel waiting or running jobs.", "cancel"
        ),
        (),
    ),
    (
        LazyCommand(
            "delete", _C + "delete", "Workloads", "Delete jobs (or other Gryvia objects).", "delete"
        ),
        ("rm",),
    ),
    (
        LazyCommand(
            "queue",
            _C + "queue",
            "Workloads",
            "Waiting jobs, oldest first, and why each one waits.",
            "queue",
        ),
        (),
    ),
    (
        LazyCommand(
            "squeue",
            _C + "squeue",
            "Workloads",
            "Jobs in Slurm's squeue layout: states, reasons, -o letters.",
            "squeue",
        ),
        (),
    ),
    (
        LazyCommand(
            "sacct",
            _C + "sacct",
            "Workloads",
            "Jobs in Slurm's sacct layout: state, exit code, elapsed, GPU-hours.",
            "sacct",
        ),
        (),
    ),
    (
        LazyCommand("list", _C + "listing", "Cluster", "List jobs, GPU nodes, quotas or SKUs."),
        ("ls",),
    ),
    (LazyCommand("get", _C + "get", "Cluster", "Print one object as YAML or JSON.", "get"), ()),
    (
        LazyCommand(
            "describe", _C + "get", "Cluster", "Describe one object for people.", "describe"
        ),
        (),
    ),
    (
        LazyCommand(
            "capacity",
            _C + "capacity",
            "Cluster",
            "GPUs per type: total, allocated, free, pending, shortfall.",
            "capacity",
        ),
        ("cap",),
    ),
    (
        LazyCommand(
            "catalog", _C + "catalog", "Cluster", "The GPU price catalog (GryviaGpuSku).", "catalog"
        ),
        ("skus",),
    ),
    (
        LazyCommand(
            "sinfo",
            _C + "sinfo",
            "Cluster",
            "GPU nodes in Slurm's sinfo layout: GPU types as partitions.",
            "sinfo",
        ),
        (),
    ),
    (
        LazyCommand(
            "health",
            _C + "health",
            "Cluster",
            "GPU node health: phase, driver, CUDA, RDMA.",
            "health",
        ),
        (),
    ),
    (
        LazyCommand(
            "gpu",
            _C + "gpu",
            "Workloads",
            "GPU training and NCCL insights (not built yet: says what it needs).",
            "gpu",
        ),
        (),
    ),
    (
        LazyCommand(
            "reservation",
            _C + "reservation",
            "Tenancy",
            "GPU reservations: create, list, show and delete them.",
        ),
        ("reservations",),
    ),
    (
        LazyCommand(
            "workflow",
            _C + "workflow",
            "Workloads",
            "Workflows: DAGs of job steps, run once or on a schedule.",
        ),
        ("workflows",),
    ),
    (
        LazyCommand(
            "tune",
            _C + "tune",
            "Workloads",
            "Auto-tuners: hyperparameter searches run as trial jobs.",
        ),
        ("tuners",),
    ),
    (
        LazyCommand(
            "serve",
            _C + "serve",
            "Workloads",
            "Inference services: models served behind a Service.",
        ),
        (),
    ),
    (
        LazyCommand(
            "model",
            _C + "model",
            "Workloads",
            "Model registries: versions, stages, promotion and rollback.",
        ),
        ("models",),
    ),
    (
        LazyCommand(
            "checkpoint",
            _C + "checkpoint",
            "Workloads",
            "Checkpoint guards: save and resume selected jobs.",
        ),
        ("checkpoints",),
    ),
    (
        LazyCommand(
            "workspace",
            _C + "workspace",
            "Workloads",
            "Workspaces: development pods with a persistent home; create, start, stop, shell.",
        ),
        ("workspaces",),
    ),
    (
        LazyCommand(
            "tenant",
            _C + "tenant",
            "Tenancy",
            "Tenants: create, list, show and delete them; add and remove members.",
        ),
        ("tenants",),
    ),
    (
        LazyCommand(
            "budget",
            _C + "budget",
            "Tenancy",
            "Budgets: create, list, show and delete them.",
        ),
        ("budgets",),
    ),
    (
        LazyCommand(
            "hook",
            _C + "hook",
            "Workloads",
            "Job hooks: signed POSTs when jobs reach chosen phases.",
        ),
        ("hooks",),
    ),
    (
        LazyCommand(
            "sharing",
            _C + "sharing",
            "Tenancy",
            "GPU sharing policies: time-slicing or MIG for selected GPU nodes.",
        ),
        ("gpusharing",),
    ),
    (
        LazyCommand(
            "priority",
            _C + "priority",
            "Tenancy",
            "Job priorities: create, list, show and delete them.",
        ),
        ("priorities",),
    ),
    (
        LazyCommand(
            "quota",
            _C + "quota",
            "Tenancy",
            "GPU quota use per team, and spend against the budget.",
            "quota",
        ),
        (),
    ),
    (
        LazyCommand(
            "cost",
            _C + "cost",
            "Tenancy",
            "Spend per team in a day, week or month, against its budget.",
            "cost",
        ),
        (),
    ),
    (
        LazyCommand(
            "usage",
            _C + "usage",
            "Tenancy",
            "Metered GPU-hours and estimated cost per tenant, SKU, day or job.",
            "usage",
        ),
        (),
    ),
    (
        LazyCommand(
            "invoice",
            _C + "invoice",
            "Tenancy",
            "Monthly invoice estimates per tenant, one line per SKU.",
        ),
        (),
    ),
    (
        LazyCommand(
            "ledger",
            _C + "ledger",
            "Tenancy",
            "The billing ledger: verify a tenant's chain.",
        ),
        (),
    ),
    (
        LazyCommand(
            "config", _C + "config", "Utilities", "Show or change what gryvia connects to."
        ),
        (),
    ),
    (
        LazyCommand(
            "login",
            _C + "auth",
            "Utilities",
            "Log in with OIDC and add a kubeconfig user that uses the login.",
            "login",
        ),
        (),
    ),
    (
        LazyCommand(
            "logout",
            _C + "auth",
            "Utilities",
            "Forget an OIDC login: keyring entry and kubeconfig user.",
            "logout",
        ),
        (),
    ),
    (
        LazyCommand(
            "auth",
            _C + "auth",
            "Utilities",
            "Log in with OIDC; the kubeconfig's exec credential plugin.",
        ),
        (),
    ),
    (
        LazyCommand(
            "completion",
            _C + "completion",
            "Utilities",
            "Print a shell completion script (no cluster needed).",
            "completion",
        ),
        (),
    ),
    (
        LazyCommand(
            "version", _C + "version", "Utilities", "Client and server versions.", "version"
        ),
        (),
    ),
    (
        LazyCommand(
            "tui",
            _C + "tui",
            "Workloads",
            "Open the interactive console: jobs, queue, capacity, cost, nodes, submit.",
            "tui",
        ),
        (),
    ),
    (
        LazyCommand(
            "demo",
            _C + "demo",
            "Utilities",
            "Run the demo: a sandbox with Gryvia installed and seeded.",
        ),
        (),
    ),
    (
        LazyCommand(
            "sandbox",
            _C + "sandbox",
            "Utilities",
            "Run a local sandbox cluster with simulated GPU nodes.",
        ),
        (),
    ),
    (
        LazyCommand(
            "sbatch",
            _C + "sbatch",
            "Utilities",
            "Import Slurm batch scripts as GryviaAIJobs (no cluster needed).",
        ),
        (),
    ),
)
"""Every command: (entry, hidden aliases). Modules load on first use; the short help must
match the command's first docstring line (tests/unit/cli/test_cli_root.py checks)."""
