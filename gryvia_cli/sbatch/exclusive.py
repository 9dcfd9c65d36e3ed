"""GPU options beyond the count: `--exclusive` takes whole nodes (sbatch(1) --exclusive), and
the GPU options that cannot be translated.

Slurm gives an exclusive job every CPU and GRES of each node it gets. A pod has no "whole
node" request, so the GPUs decide: a script that names no GPU count gets all GPUs of a node of
the requested type (`--gres=gpu:h100`, `--constraint=h100`), or of the cluster's only GPU
type, from `ImportSettings.node_gpus` (`{canonical type: GPUs per node}`). When neither is
known the import is refused with what to add; it never becomes a silent 0-GPU pod.
`--exclusive=user` and `=mcs` share nodes with the user's other jobs: nothing to take.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from gryvia_cli.sbatch.model import Issue, ParsedScript, error, warning
from gryvia_cli.sbatch.values import normalise_gpu_type

WHOLE_NODE_MODES = frozenset({"exclusive", "topo"})
GPU_KEYS = ("gres", "gpus", "gpus-per-node", "gpus-per-task")


@dataclass(frozen=True)
class GpuChoice:
    """GPUs per node, their type and where the type came from (`gres`, `constraint`, ...)."""

    gpus: int
    gpu_type: str | None
    source: str | None


def take_whole_nodes(
    parsed: ParsedScript, choice: GpuChoice, node_gpus: Mapping[str, int]
) -> tuple[GpuChoice, list[Issue]]:
    """Apply `--exclusive` to the GPU choice; returns the new choice and findings."""
    directive = parsed.last("exclusive")
    if directive is None:
        return choice, []
    at = (directive.line, directive.directive)
    mode = (directive.value or "exclusive").lower()
    if mode not in WHOLE_NODE_MODES:  # user, mcs: said, not dropped silently (issue 39, 6)
        return choice, [
            warning(
                "exclusive-shared-node",
                f"--exclusive={mode}: Slurm shares the job's nodes only with jobs of the same "
                f"{'user' if mode == 'user' else 'MCS label'}; Kubernetes has no such rule, so "
                "each pod may share its node with any other pod",
                *at,
            )
        ]
    shapes = {normalise_gpu_type(name): count for name, count in node_gpus.items() if count > 0}
    wanted = normalise_gpu_type(choice.gpu_type) if choice.gpu_type else None
    if choice.gpus > 0:
        per_node = shapes.get(wanted) if wanted else None
        if per_node is not None and per_node > choice.gpus:
            return GpuChoice(per_node, choice.gpu_type, choice.source), [
                warning(
                    "exclusive-whole-node",
                    f"--exclusive takes whole nodes: each pod gets all {per_node} GPUs of a "
                    f"{wanted} node (the script asked for {choice.gpus}); CPUs and memory stay "
                    "as requested",
                    *at,
                )
            ]
        return choice, [
            warning(
                "exclusive-shared-node",
                f"--exclusive: each pod gets the {choice.gpus} GPU(s) requested and may share "
                "its node with other pods; CPUs and memory stay as requested",
                *at,
            )
        ]
    if any(parsed.given(key) for key in GPU_KEYS):  # an explicit zero: a CPU job
        return choice, [
            warning(
                "exclusive-shared-node",
                "--exclusive on a CPU job: the pod gets the CPUs and memory requested and may "
                "share its node with other pods",
                *at,
            )
        ]
    if wanted and wanted in shapes:
        gpu_type, source = choice.gpu_type, choice.source
    elif not wanted and len(shapes) == 1:
        gpu_type, source = next(iter(shapes)), "exclusive"
    else:
        return choice, [error("exclusive-needs-gpus", _refusal(wanted, shapes), *at)]
    count = shapes[normalise_gpu_type(gpu_type or "")]
    return GpuChoice(count, gpu_type, source), [
        warning(
            "exclusive-whole-node",
            f"--exclusive takes whole nodes: each pod gets all {count} GPUs of a "
            f"{normalise_gpu_type(gpu_type or '')} node; CPUs and memory stay as requested",
            *at,
        )
    ]


def _refusal(wanted: str | None, shapes: Mapping[str, int]) -> str:
    known = ", ".join(f"{name} ({count} per node)" for name, count in sorted(shapes.items()))
    if wanted:
        why = f"the GPUs per {wanted} node are not known" + (f" (known: {known})" if known else "")
    elif shapes:
        why = f"the cluster has several GPU types: {known}"
    else:
        why = "the GPUs per node are not known here (no cluster was read)"
    return (
        f"--exclusive takes whole nodes, GPUs included, but the script names no GPU count and "
        f"{why}: add --gpus-per-node=N (with a type: --gres=gpu:TYPE:N), pass --node-gpus "
        "TYPE=N, or add --gres=gpu:0 for a CPU-only job"
    )


def untranslatable_gpus(parsed: ParsedScript) -> list[Issue]:
    """Errors for GPU options that cannot be translated (per socket, --tres-per-task=gpu) or
    that sbatch refuses (--gpus-per-task without a task count or --gpus)."""
    issues: list[Issue] = []
    socket = parsed.last("gpus-per-socket")
    if socket is not None:
        issues.append(
            error(
                "unsupported-gpu-option",
                f"{socket.show()}: GPUs per socket cannot be translated (socket counts are "
                "unknown); use --gpus-per-node",
                socket.line,
                socket.directive,
            )
        )
    per_task = parsed.last("gpus-per-task")
    if per_task is not None and not any(
        parsed.given(k) for k in ("ntasks", "gpus", "ntasks-per-node", "ntasks-per-gpu")
    ):
        issues.append(  # Slurm 22.05's own check, found by the oracle (test_slurm_oracle.py)
            error(
                "gpus-per-task-without-tasks",
                f"{per_task.show()}: --gpus-per-task used without either --gpus or -n/--ntasks "
                "is not allowed (sbatch refuses it); add --ntasks",
                per_task.line,
                per_task.directive,
            )
        )
    tres = parsed.last("tres-per-task")
    if tres is not None and "gpu" in (tres.value or "").lower():
        issues.append(
            error(
                "unsupported-gpu-option",
                f"{tres.show()}: use --gpus-per-task for GPUs per task",
                tres.line,
                tres.directive,
            )
        )
    return issues
