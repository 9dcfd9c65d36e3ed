"""The Slurm environment of the batch step that is known before the job runs
(`SLURM_JOB_NODELIST`, `SLURM_NTASKS`, `SLURM_ARRAY_*`, ...), written into the pod template."""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

from gryvia_cli.sbatch.layout import tasks_per_node_text
from gryvia_cli.sbatch.model import ParsedScript
from gryvia_cli.sbatch.resources import MIB
from gryvia_operator.api.names import service_name

if TYPE_CHECKING:
    from gryvia_cli.sbatch.mapping import ImportPlan

CLUSTER_NAME = "gryvia"
"""`SLURM_CLUSTER_NAME` and `SLURM_SUBMIT_HOST` of imported jobs."""


def array_job_id(base: str, submission_id: str | None) -> str:
    """SLURM_ARRAY_JOB_ID: a stable number from the array's name and an optional submission id."""
    digest = hashlib.sha256(f"{base}/{submission_id or ''}".encode()).hexdigest()
    return str(int(digest[:12], 16) % 67043327 + 1)


def slurm_env(
    plan: ImportPlan, parsed: ParsedScript, name: str, index: int | None, array_id: str
) -> dict[str, str]:
    """The variables Slurm sets for the batch step that are known before the job runs.

    Conditions follow env.c `env_array_for_batch_job` (README §12): SLURM_NTASKS only with a
    task option, SLURM_CPUS_PER_TASK only with -c, SLURM_GPUS only with --gpus.
    """
    res = plan.resources
    env: dict[str, str] = dict(plan.export.values) if plan.export else {}
    hosts = ",".join(f"{name}-{i}.{service_name(name)}" for i in range(res.nodes))
    times = f"(x{res.nodes})" if res.nodes > 1 else ""
    env |= {
        "SLURM_JOB_NAME": plan.job_name,
        "SLURM_NNODES": str(res.nodes),
        "SLURM_JOB_NUM_NODES": str(res.nodes),
        "SLURM_JOB_NODELIST": hosts,
        "SLURM_NODELIST": hosts,
        "SLURM_TASKS_PER_NODE": tasks_per_node_text(res.layout),
        "SLURM_CPUS_ON_NODE": str(res.cpus_per_node),
        "SLURM_JOB_CPUS_PER_NODE": f"{res.cpus_per_node}{times}",
        "SLURM_CLUSTER_NAME": CLUSTER_NAME,
        "SLURM_SUBMIT_HOST": CLUSTER_NAME,
    }
    if any(parsed.given(key) for key in ("ntasks", "ntasks-per-node", "ntasks-per-gpu")):
        env["SLURM_NTASKS"] = env["SLURM_NPROCS"] = str(sum(res.layout))
    optional = {
        "ntasks-per-node": "SLURM_NTASKS_PER_NODE",
        "ntasks-per-gpu": "SLURM_NTASKS_PER_GPU",
        "cpus-per-task": "SLURM_CPUS_PER_TASK",
        "cpus-per-gpu": "SLURM_CPUS_PER_GPU",
        "gpus": "SLURM_GPUS",
        "gpus-per-node": "SLURM_GPUS_PER_NODE",
        "gpus-per-task": "SLURM_GPUS_PER_TASK",
        "partition": "SLURM_JOB_PARTITION",
        "account": "SLURM_JOB_ACCOUNT",
        "qos": "SLURM_JOB_QOS",
        "export": "SLURM_EXPORT_ENV",
    }
    for key, variable in optional.items():
        directive = parsed.last(key)
        if directive is not None and directive.value is not None:
            env[variable] = directive.value
    if "," in env.get("SLURM_JOB_PARTITION", ""):  # the one it runs in, as Slurm sets it
        env["SLURM_JOB_PARTITION"] = env["SLURM_JOB_PARTITION"].split(",")[0]
    if res.gpus_per_node:
        env["SLURM_GPUS_ON_NODE"] = str(res.gpus_per_node)
    for key, variable in (("mem", "SLURM_MEM_PER_NODE"), ("mem-per-cpu", "SLURM_MEM_PER_CPU"),
                          ("mem-per-gpu", "SLURM_MEM_PER_GPU")):  # fmt: skip
        if parsed.given(key) and res.memory_bytes:
            per = {"mem": 1, "mem-per-cpu": res.cpus_per_node, "mem-per-gpu": res.gpus_per_node}
            env[variable] = str(res.memory_bytes // MIB // max(per[key], 1))
    if res.array is not None and index is not None:
        env |= {
            "SLURM_ARRAY_JOB_ID": array_id,
            "SLURM_ARRAY_TASK_ID": str(index),
            "SLURM_ARRAY_TASK_COUNT": str(len(res.array.indices)),
            "SLURM_ARRAY_TASK_MIN": str(res.array.indices[0]),
            "SLURM_ARRAY_TASK_MAX": str(res.array.indices[-1]),
            "SLURM_ARRAY_TASK_STEP": str(res.array.step),
        }
    return env
