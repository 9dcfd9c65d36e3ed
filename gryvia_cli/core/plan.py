"""The short placement plan `gryvia submit` prints before creating a job.

What the job asks for and which nodes could take it right now.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from gryvia_cli.core.cells import plural
from gryvia_cli.core.jobs import JobSummary, gpu_text
from gryvia_cli.core.nodes import GpuNode, free_gpus
from gryvia_operator.api.mig import parse_profile, type_serves


@dataclass(frozen=True)
class Plan:
    """Placement outlook of one job."""

    job: JobSummary
    candidates: tuple[tuple[str, int], ...]
    """(node, free GPUs) of usable nodes of the right type with room for one pod."""
    fits_now: bool
    warning: str | None

    def lines(self) -> list[str]:
        """The plan as short lines for stderr."""
        out = [f"plan for {self.job.name}: {gpu_text(self.job)}"]
        if self.job.cpu_only:
            out.append("  CPU-only job: no GPU placement needed")
        elif self.candidates:
            shown = ", ".join(f"{n} ({free} free)" for n, free in self.candidates[:5])
            more = f" and {len(self.candidates) - 5} more" if len(self.candidates) > 5 else ""
            out.append(f"  nodes that could take a pod now: {shown}{more}")
        return out


def plan_job(job: JobSummary, nodes: Sequence[GpuNode], allocated: Mapping[str, int]) -> Plan:
    """Which usable nodes of the job's GPU type have room for one of its pods now, and a
    warning when the whole job cannot start now (no such type, pods too big, too few free)."""
    if job.cpu_only:
        return Plan(job, (), True, None)
    per_pod = job.gpus_per_pod
    of_type = [n for n in nodes if type_serves(n.gpu_type, job.gpu_type)]
    label = job.gpu_type or "GPU"
    unit = "MIG slice" if parse_profile(job.gpu_type) else "GPU"
    if not of_type:
        types = ", ".join(sorted({n.gpu_type for n in nodes})) or "none"
        warning = (
            f'no node has GPU type "{job.gpu_type}" (types here: {types}); '
            "the job will wait until such a node joins"
        )
        return Plan(job, (), False, warning)
    largest = max(n.gpus for n in of_type)
    if per_pod > largest:
        warning = (
            f"each pod asks for {plural(per_pod, unit)} but the largest {label} node has "
            f"{largest}; "
            "the job cannot start until a larger node joins (or use distributed.nodes)"
        )
        return Plan(job, (), False, warning)
    room = sorted(
        ((n.name, free_gpus(n, allocated)) for n in of_type),
        key=lambda item: (-item[1], item[0]),
    )
    candidates = tuple((name, free) for name, free in room if free >= per_pod)
    fitting = sum(free // per_pod for _, free in room)
    if fitting >= job.pods:
        return Plan(job, candidates, True, None)
    total_free = sum(free for _, free in room)
    if not candidates:
        warning = (
            f"no {label} node can take a pod of {plural(per_pod, unit)} now "
            f"({total_free} free in total); "
            "the job will queue until GPUs free up"
        )
    else:
        warning = (
            f"only {fitting} of {job.pods} pods fit on free {label} {unit}s now; "
            "the job will queue until more free up"
        )
    return Plan(job, candidates, False, warning)
