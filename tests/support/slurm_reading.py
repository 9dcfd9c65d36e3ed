"""What a job asks for, read two ways: from Slurm's own record (`scontrol show job -o` of a
held job) and from Gryvia's import (`convert_script`), in the same terms per node, so the
Slurm oracle (tests/integration/test_slurm_oracle.py) can compare them field by field."""

from __future__ import annotations

import re
from dataclasses import dataclass, fields

from gryvia_cli.sbatch.convert import Conversion

MIB = 1024 * 1024
UNITS = {"K": 1 / 1024, "M": 1, "G": 1024, "T": 1024 * 1024}


@dataclass(frozen=True)
class Reading:
    """One job's shape: per node, as Slurm counts it; None where nothing was asked."""

    accepted: bool
    nodes: int | None = None
    tasks: int | None = None
    cpus_per_task: int | None = None
    cpus_per_node: int | None = None
    time_limit_s: int | None = None
    memory_per_node_mb: int | None = None
    gpus_per_node: int = 0
    gpu_type: str | None = None
    array: tuple[tuple[int, ...], int | None] | None = None
    dependency: str | None = None

    def differences(self, other: Reading) -> dict[str, tuple[object, object]]:
        """`{field: (mine, other's)}` for every field that differs (only `accepted` when
        either side refused the job)."""
        if not (self.accepted and other.accepted):
            same = self.accepted == other.accepted
            return {} if same else {"accepted": (self.accepted, other.accepted)}
        out = {}
        for item in fields(self):
            mine, theirs = getattr(self, item.name), getattr(other, item.name)
            if mine != theirs:
                out[item.name] = (mine, theirs)
        return out


def megabytes(text: str) -> int:
    """Slurm's memory text (`32G`, `24000M`, `7812.50G`) in MiB."""
    match = re.fullmatch(r"([0-9.]+)([KMGT]?)", text)
    if match is None:
        raise ValueError(f"not a memory size: {text!r}")
    return round(float(match.group(1)) * UNITS[match.group(2) or "M"])


def seconds(text: str) -> int | None:
    """Slurm's TimeLimit (`2-00:00:00`, `00:45:00`, `UNLIMITED`) in seconds."""
    if text in ("UNLIMITED", "Partition_Limit", "NONE"):
        return None
    days, _, clock = text.rpartition("-")
    hours, minutes, secs = (int(part) for part in clock.split(":"))
    return int(days or 0) * 86400 + hours * 3600 + minutes * 60 + secs


def expand_indices(text: str) -> tuple[tuple[int, ...], int | None]:
    """ArrayTaskId (`0-9%2`, `1,3,7`, `0-15:4`) as (indices, throttle)."""
    spec, _, throttle = text.partition("%")
    indices: list[int] = []
    for part in spec.split(","):
        span, _, step = part.partition(":")
        low, _, high = span.partition("-")
        indices += range(int(low), int(high or low) + 1, int(step or 1))
    return tuple(sorted(indices)), int(throttle) if throttle else None


def _gres(text: str | None) -> tuple[int, str | None] | None:
    """`gres:gpu:a100:8` -> (8, 'a100'); `gres:gpu` -> (1, None); None when absent."""
    if not text or text == "(null)":
        return None
    parts = text.split(",")[0].split(":")[2:]  # drop "gres", "gpu"
    count = int(parts[-1]) if parts and parts[-1].isdigit() else 1
    kind = parts[0] if parts and not parts[0].isdigit() else None
    return count, kind


def from_slurm(records: list[dict[str, str]] | None) -> Reading:
    """Slurm's reading of a held job (None: sbatch refused it).

    Per node: CPUs are the most of ceil(NumTasks/NumNodes) x CPUs/Task, MinCPUsNode and
    --cpus-per-gpu x GPUs; GPUs come from TresPerNode, TresPerTask x tasks per node or
    TresPerJob / nodes; memory from MinMemoryNode, MinMemoryCPU x CPUs or MemPerTres x GPUs
    (0: none requested, which Slurm without DefMemPerCPU reads as the whole node); the GPU
    type from the gres, else the --constraint (Features)."""
    if records is None:
        return Reading(accepted=False)
    job = records[0]
    nodes = int(job["NumNodes"].split("-")[0])
    tasks = int(job["NumTasks"])
    gpus, kind = 0, None
    for key, scale in (("TresPerNode", 1.0), ("TresPerTask", tasks / nodes),
                       ("TresPerJob", 1 / nodes)):  # fmt: skip
        found = _gres(job.get(key))
        if found is not None:
            gpus, kind = int(found[0] * scale), found[1] or kind
            break
    features = job.get("Features", "(null)")
    if kind is None and features != "(null)":
        kind = features  # a model (`h100`) or a choice of models (`a100|h100`)
    widest = -(-tasks // nodes) * int(job["CPUs/Task"])  # the largest block of tasks
    cpus = max(widest, int(job["MinCPUsNode"]))
    per_gpu = _gres(job.get("CpusPerTres"))
    if per_gpu is not None and gpus:
        cpus = max(cpus, per_gpu[0] * gpus)
    memory: int | None = None
    if "MinMemoryCPU" in job:
        memory = megabytes(job["MinMemoryCPU"]) * cpus
    elif _gres(job.get("MemPerTres")) is not None and gpus:
        memory = (_gres(job.get("MemPerTres")) or (0, None))[0] * gpus
    elif megabytes(job.get("MinMemoryNode", "0")):
        memory = megabytes(job["MinMemoryNode"])
    array = expand_indices(job["ArrayTaskId"]) if "ArrayTaskId" in job else None
    dependency = job.get("Dependency", "(null)")
    return Reading(
        accepted=True,
        nodes=nodes,
        tasks=tasks,
        cpus_per_task=int(job["CPUs/Task"]),
        cpus_per_node=cpus,
        time_limit_s=seconds(job["TimeLimit"]),
        memory_per_node_mb=memory,
        gpus_per_node=gpus,
        gpu_type=kind.lower() if kind else None,
        array=array,
        dependency=None if dependency == "(null)" else re.sub(r"\([a-z]+\)", "", dependency),
    )


def from_gryvia(conversion: Conversion) -> Reading:
    """Gryvia's reading: what the pods of the imported job get (refused: not accepted)."""
    res = conversion.resources
    if not conversion.ok or res is None:
        return Reading(accepted=False)
    cpt = conversion.parsed.last("cpus-per-task")
    array = None
    if res.array is not None:
        array = (tuple(sorted(res.array.indices)), res.array.max_parallel)
    dependency = conversion.parsed.last("dependency")
    kept = not any(issue.directive == "--dependency" for issue in conversion.issues)
    return Reading(
        accepted=True,
        nodes=res.nodes,
        tasks=sum(res.layout),
        cpus_per_task=int(cpt.value) if cpt is not None and cpt.value else 1,
        cpus_per_node=res.cpus_per_node,
        time_limit_s=res.time_limit_seconds,
        memory_per_node_mb=res.memory_bytes // MIB if res.memory_bytes else None,
        gpus_per_node=res.gpus_per_node,
        gpu_type=res.gpu_type.lower() if res.gpu_type else None,
        array=array,
        dependency=dependency.value if dependency is not None and kept else None,
    )
