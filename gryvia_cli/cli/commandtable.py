"""The table of every `gryvia` command: its module (imported on first use), help section,
short help and hidden aliases. `gryvia_cli.main` registers them on the root group."""

from __future__ import annotations

from gryvia_cli.cli.group import LazyCommand

_C = "gryvia_cli.commands."


def _cmd(
    name: str,
    panel: str,
    short_help: str,
    *aliases: str,
    module: str | None = None,
    pick: str | None = None,
) -> tuple[LazyCommand, tuple[str, ...]]:
    """One row: the command `name` of module `gryvia_cli.commands.<module or name>`, shown in
    help section `panel`; `pick` chooses one command of a module that holds several."""
    return LazyCommand(name, _C + (module or name), panel, short_help, pick), aliases


COMMANDS: tuple[tuple[LazyCommand, tuple[str, ...]], ...] = (
    _cmd(
        "submit", "Workloads", "Submit jobs from manifests or a Slurm batch script.", pick="submit"
    ),
    _cmd(
        "apply",
        "Workloads",
        "Create or update Gryvia objects from manifests (server-side apply).",
        pick="apply",
    ),
    _cmd(
        "validate",
        "Workloads",
        "Check manifests offline with the admission webhook's rules.",
        pick="validate",
    ),
    _cmd("status", "Workloads", "Platform health, or one job's state.", pick="status"),
    _cmd("logs", "Workloads", "Print or follow a job's log.", pick="logs"),
    _cmd("exec", "Workloads", "Run a command in a job's pod.", module="podexec", pick="exec"),
    _cmd("shell", "Workloads", "Open a shell in a job's pod.", module="podexec", pick="shell"),
    _cmd(
        "port-forward",
        "Workloads",
        "Forward a local port to a job's pod.",
        module="podexec",
        pick="port-forward",
    ),
    _cmd(
        "seff",
        "Workloads",
        "A job's efficiency as Slurm's seff prints it: state, wall time, GPU efficiency.",
        pick="seff",
    ),
    _cmd("cancel", "Workloads", "Cancel waiting or running jobs.", pick="cancel"),
    _cmd("delete", "Workloads", "Delete jobs (or other Gryvia objects).", "rm", pick="delete"),
    _cmd("queue", "Workloads", "Waiting jobs, oldest first, and why each one waits.", pick="queue"),
    _cmd(
        "squeue",
        "Workloads",
        "Jobs in Slurm's squeue layout: states, reasons, -o letters.",
        pick="squeue",
    ),
    _cmd(
        "sacct",
        "Workloads",
        "Jobs in Slurm's sacct layout, deleted ones included: state, exit code, GPU-hours.",
        pick="sacct",
    ),
    _cmd("list", "Cluster", "List jobs, GPU nodes, quotas or SKUs.", "ls", module="listing"),
    _cmd("get", "Cluster", "Print one object as YAML or JSON.", pick="get"),
    _cmd("describe", "Cluster", "Describe one object for people.", module="get", pick="describe"),
    _cmd(
        "capacity",
        "Cluster",
        "GPUs per type: total, allocated, free, pending, shortfall.",
        "cap",
        pick="capacity",
    ),
    _cmd("catalog", "Cluster", "The GPU price catalog (GryviaGpuSku).", "skus", pick="catalog"),
    _cmd(
        "sinfo",
        "Cluster",
        "GPU nodes in Slurm's sinfo layout: GPU types as partitions.",
        pick="sinfo",
    ),
    _cmd(
        "health",
        "Cluster",
        "GPU node and storage health: phase, driver, CUDA, RDMA, GPU errors, storage probes.",
        pick="health",
    ),
    _cmd(
        "storage",
        "Cluster",
        "Storage backends: the StorageClasses jobs name, their provisioner's health, quotas.",
        "storages",
    ),
    _cmd(
        "gpu",
        "Workloads",
        "GPU training and NCCL insights: per-rank GPU use, stragglers, NCCL transports.",
    ),
    _cmd(
        "maintenance",
        "Cluster",
        "Node maintenance: cordon and drain a faulty node, list and end maintenance.",
    ),
    _cmd(
        "reservation",
        "Tenancy",
        "GPU reservations: create, list, show and delete them.",
        "reservations",
    ),
    _cmd(
        "workflow",
        "Workloads",
        "Workflows: DAGs of job steps, run once or on a schedule.",
        "workflows",
    ),
    _cmd("tune", "Workloads", "Auto-tuners: hyperparameter searches run as trial jobs.", "tuners"),
    _cmd("serve", "Workloads", "Inference services: models served behind a Service."),
    _cmd(
        "model",
        "Workloads",
        "Model registries: versions, stages, promotion and rollback.",
        "models",
    ),
    _cmd(
        "checkpoint",
        "Workloads",
        "Checkpoint guards: save and resume selected jobs.",
        "checkpoints",
    ),
    _cmd(
        "workspace",
        "Workloads",
        "Workspaces: development pods with a persistent home; create, start, stop, shell.",
        "workspaces",
    ),
    _cmd(
        "tenant",
        "Tenancy",
        "Tenants: create, list, show and delete them; add and remove members.",
        "tenants",
    ),
    _cmd("budget", "Tenancy", "Budgets: create, list, show and delete them.", "budgets"),
    _cmd("hook", "Workloads", "Job hooks: signed POSTs when jobs reach chosen phases.", "hooks"),
    _cmd(
        "idle-policy",
        "Tenancy",
        "Idle policies: warn about, suspend or cancel jobs whose GPUs sit idle.",
        "idle-policies",
        "idlepolicy",
        module="idlepolicy",
    ),
    _cmd(
        "dataset",
        "Workloads",
        "Datasets: data staged once onto a storage backend, mounted read-only by jobs.",
        "datasets",
    ),
    _cmd(
        "sharing",
        "Tenancy",
        "GPU sharing policies: time-slicing or MIG for selected GPU nodes.",
        "gpusharing",
    ),
    _cmd(
        "priority", "Tenancy", "Job priorities: create, list, show and delete them.", "priorities"
    ),
    _cmd("quota", "Tenancy", "GPU quota use per team, and spend against the budget.", pick="quota"),
    _cmd(
        "cost",
        "Tenancy",
        "Spend per team in a day, week or month, against its budget.",
        pick="cost",
    ),
    _cmd(
        "usage",
        "Tenancy",
        "Metered GPU-hours and estimated cost per tenant, SKU, day, job, user, project or label.",
        pick="usage",
    ),
    _cmd("invoice", "Tenancy", "Monthly invoice estimates per tenant, one line per SKU."),
    _cmd("ledger", "Tenancy", "The billing ledger: verify a tenant's chain."),
    _cmd("chargeback", "Tenancy", "A month's cost-center report: show it or export its records."),
    _cmd("config", "Utilities", "Show or change what gryvia connects to."),
    _cmd(
        "login",
        "Utilities",
        "Log in with OIDC and add a kubeconfig user that uses the login.",
        module="auth",
        pick="login",
    ),
    _cmd(
        "logout",
        "Utilities",
        "Forget an OIDC login: keyring entry and kubeconfig user.",
        module="auth",
        pick="logout",
    ),
    _cmd("auth", "Utilities", "Log in with OIDC; the kubeconfig's exec credential plugin."),
    _cmd(
        "completion",
        "Utilities",
        "Print a shell completion script (no cluster needed).",
        pick="completion",
    ),
    _cmd("version", "Utilities", "Client and server versions.", pick="version"),
    _cmd(
        "tui",
        "Workloads",
        "Open the interactive console: jobs, queue, capacity, cost, nodes, submit.",
        pick="tui",
    ),
    _cmd("mcp", "Utilities", "Serve Gryvia's tools to AI agents over MCP (stdio).", pick="mcp"),
    _cmd("demo", "Utilities", "Run the demo: a sandbox with Gryvia installed and seeded."),
    _cmd("sandbox", "Utilities", "Run a local sandbox cluster with simulated GPU nodes."),
    _cmd("sbatch", "Utilities", "Import Slurm batch scripts as GryviaAIJobs (no cluster needed)."),
)
"""Every command: (entry, hidden aliases). Modules load on first use; the short help must
match the command's first docstring line (tests/unit/cli/test_cli_root.py checks)."""
