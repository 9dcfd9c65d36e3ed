"""Resolve the core directives into one pod's resources, as Slurm would size a node.

Rules (sbatch(1) sections named per step; README of the shared examples §5-§10):
nodes (-N, range uses the minimum), tasks per node (`layout.task_layout`: --ntasks-per-node,
else --ntasks in Slurm's block layout, else --ntasks-per-gpu x GPUs, else 1; a pod is sized for
the largest share), GPUs per node (--gres, --gpus-per-node, --gpus-per-task x tasks,
--gpus / nodes), CPUs per node (--cpus-per-gpu x GPUs, else --cpus-per-task x tasks,
at least --mincpus), memory per node in bytes (--mem, --mem-per-cpu x CPUs, --mem-per-gpu x
GPUs; --mem=0 is the whole node), time limit in seconds rounded up to whole minutes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from gryvia_cli.sbatch.exclusive import GpuChoice, take_whole_nodes, untranslatable_gpus
from gryvia_cli.sbatch.layout import is_uneven, task_layout, tasks_per_node_text
from gryvia_cli.sbatch.model import (
    Directive,
    ImportSettings,
    Issue,
    ParsedScript,
    Severity,
    error,
    warning,
)
from gryvia_cli.sbatch.values import (
    ArraySpec,
    BadValue,
    GpuRequest,
    constraint_gpu_type,
    normalise_gpu_type,
    parse_array,
    parse_gpu_spec,
    parse_gres,
    parse_int,
    parse_memory_mb,
    parse_node_count,
    parse_time_limit,
)

MIB = 1024 * 1024
T = TypeVar("T")


@dataclass(frozen=True)
class Resources:
    """One pod's share, in Slurm's terms: per node = per pod; memory in bytes, time in seconds."""

    nodes: int
    tasks_per_node: int
    gpus_per_node: int
    gpu_type: str | None
    gpu_type_source: str | None
    cpus_per_node: int
    memory_bytes: int | None
    memory_whole_node: bool
    time_limit_seconds: int | None
    array: ArraySpec | None
    task_counts: tuple[int, ...] = ()
    """Tasks per pod, pod 0 first (`layout.task_layout`); `tasks_per_node` is the largest."""

    @property
    def layout(self) -> tuple[int, ...]:
        """Tasks per pod, pod 0 first (every pod `tasks_per_node` when not given)."""
        return self.task_counts or (self.tasks_per_node,) * self.nodes

    @property
    def total_gpus(self) -> int:
        """GPUs of one job (one array element): nodes x GPUs per node."""
        return self.nodes * self.gpus_per_node

    @property
    def gryvia_gpu_type(self) -> str | None:
        """The GPU type in Gryvia's vocabulary (H100, A100-80G, ...), unknown ones kept."""
        return normalise_gpu_type(self.gpu_type) if self.gpu_type else None


class _Reader:
    """Reads the last value of each option, collecting findings instead of raising."""

    def __init__(self, parsed: ParsedScript) -> None:
        self.parsed = parsed
        self.issues: list[Issue] = []

    def get(
        self, key: str, parse: Callable[[str], T], code: str
    ) -> tuple[T | None, Directive | None]:
        """The last value of `key`; every occurrence is checked, as sbatch sets each in turn."""
        value: T | None = None
        last: Directive | None = None
        for directive in self.parsed.directives:
            if directive.key != key:
                continue
            last = directive
            try:
                value = parse(directive.value or "")
            except BadValue as exc:
                value = None
                self.fail(code, f"{directive.show()}: {exc}", directive)
        return value, last

    def conflict(self, code: str, message: str, *directives: Directive | None) -> None:
        """One error per directive involved, so each conflicting line is named."""
        found = {(d.line, d.directive): d for d in directives if d is not None}
        for key in sorted(found):
            self.fail(code, message, found[key])

    def fail(self, code: str, message: str, directive: Directive | None) -> None:
        """Record an error at `directive`'s line."""
        line = directive.line if directive else None
        self.issues.append(error(code, message, line, directive.directive if directive else None))

    def warn(self, code: str, message: str, directive: Directive | None) -> None:
        """Record a warning at `directive`'s line."""
        line = directive.line if directive else None
        self.issues.append(warning(code, message, line, directive.directive if directive else None))


def resolve(
    parsed: ParsedScript, settings: ImportSettings | None = None
) -> tuple[Resources | None, list[Issue]]:
    """Size one pod from the script's directives; None (and errors) when Slurm would refuse.

    `settings` carries the site's MaxArraySize and GPUs per node (for `--exclusive`)."""
    settings = settings or ImportSettings()
    read = _Reader(parsed)
    node_range, nodes_dir = read.get("nodes", parse_node_count, "invalid-node-count")
    ntasks, ntasks_dir = read.get("ntasks", parse_int, "invalid-number")
    per_node, per_node_dir = read.get("ntasks-per-node", parse_int, "invalid-number")
    per_gpu, per_gpu_dir = read.get("ntasks-per-gpu", parse_int, "invalid-number")
    cpt, cpt_dir = read.get("cpus-per-task", parse_int, "invalid-number")
    cpg, cpg_dir = read.get("cpus-per-gpu", parse_int, "invalid-number")
    mincpus, _ = read.get("mincpus", parse_int, "invalid-number")
    time_limit, _ = read.get("time", parse_time_limit, "invalid-time")
    array, _ = read.get(
        "array", lambda text: parse_array(text, settings.max_array_size), "invalid-array-spec"
    )
    gres, gres_dir = read.get("gres", parse_gres, "invalid-gres")
    gpn, gpn_dir = read.get("gpus-per-node", parse_gpu_spec, "invalid-gpus")
    gpus_total, gpus_dir = read.get("gpus", parse_gpu_spec, "invalid-gpus")
    gpt, gpt_dir = read.get("gpus-per-task", parse_gpu_spec, "invalid-gpus")
    memory = _memory_options(read)
    _exclusive_options(read, cpt_dir, cpg_dir, per_gpu_dir, per_node_dir, gpt_dir)
    read.issues += untranslatable_gpus(parsed)
    if gres is not None and gres.others:
        read.warn(
            "non-gpu-gres",
            f"generic resources other than GPUs are not translated: {', '.join(gres.others)}",
            gres_dir,
        )

    nodes = 1
    if node_range is not None:
        low, high = node_range
        if low == 0:
            read.fail("invalid-node-count", "--nodes=0: a job needs at least one node", nodes_dir)
        nodes = max(low, 1)
        if high != low:
            shown = f"{low}-{high}" if high is not None else f"{low}-"
            read.warn(
                "node-count-range",
                f"--nodes={shown}: Slurm would start with as many nodes as are free in the range; "
                f"Gryvia uses the minimum, {nodes}",
                nodes_dir,
            )
    elif ntasks is not None and per_node is not None:
        nodes = -(-ntasks // per_node)
    elif ntasks != 1 and ((ntasks or 1) > 1 or (gpus_total and (gpus_total.count or 0) > 1)):
        # one task runs on one node whatever its GPUs (issue 39, 6: --ntasks=1 warned)
        read.warn(
            "node-count-unspecified",
            "no --nodes: Slurm may spread the tasks or GPUs over several nodes depending on the "
            "cluster; Gryvia runs them in one pod (add --nodes to choose)",
            ntasks_dir or gpus_dir,
        )
    if ntasks is not None and ntasks < nodes:
        read.warn(
            "nodes-reduced",
            f"can't run {ntasks} processes on {nodes} nodes; using {ntasks} nodes, as Slurm does",
            ntasks_dir,
        )
        nodes = ntasks

    try:
        counts = task_layout(nodes, ntasks, per_node)
    except ValueError as exc:
        read.fail("too-many-tasks", str(exc), ntasks_dir)
        counts = (1,) * nodes
    if is_uneven(counts):
        read.warn("uneven-task-layout", _uneven_message(counts), ntasks_dir)
    tasks = max(counts)

    gpus, gpu_type, source = _gpus(read, nodes, tasks, gres, gres_dir, gpn, gpn_dir, gpus_total,
                                   gpus_dir, gpt, gpt_dir)  # fmt: skip
    if per_gpu is not None and ntasks is None and per_node is None:
        if gpus == 0:
            read.fail("invalid-number", "--ntasks-per-gpu needs GPUs", per_gpu_dir)
        tasks = max(per_gpu * gpus, 1)
        counts = (tasks,) * nodes

    constraint = parsed.last("constraint")
    if constraint is not None and constraint.value:
        model = constraint_gpu_type(constraint.value)
        if model is not None and gpu_type is None:
            gpu_type, source = model, "constraint"
        elif (
            model is not None
            and gpu_type
            and normalise_gpu_type(model) != normalise_gpu_type(gpu_type)
        ):
            read.warn(
                "gpu-type-mismatch",
                f"--constraint names {model} but the GPU request names {gpu_type}; "
                f"using {gpu_type}",
                constraint,
            )
    choice, found = take_whole_nodes(parsed, GpuChoice(gpus, gpu_type, source), settings.node_gpus)
    read.issues += found
    gpus, gpu_type, source = choice.gpus, choice.gpu_type, choice.source

    if cpg is not None and gpus > 0:
        cpus = cpg * gpus
    else:
        if cpg is not None:
            read.warn(
                "cpus-per-gpu-without-gpus", "--cpus-per-gpu without GPUs is ignored", cpg_dir
            )
        cpus = (cpt or 1) * max(tasks, per_node or 0)  # Slurm: MinCPUsNode, per-node max
    cpus = max(cpus, mincpus or 0)

    memory_bytes, whole = _memory_bytes(read, memory, cpus, gpus)
    if any(issue.severity is Severity.ERROR for issue in read.issues):
        return None, read.issues
    resources = Resources(
        nodes=nodes,
        tasks_per_node=tasks,
        task_counts=counts,
        gpus_per_node=gpus,
        gpu_type=gpu_type,
        gpu_type_source=source,
        cpus_per_node=cpus,
        memory_bytes=memory_bytes,
        memory_whole_node=whole,
        time_limit_seconds=time_limit,
        array=array,
    )
    return resources, read.issues


def _uneven_message(counts: tuple[int, ...]) -> str:
    return (
        f"tasks per pod {tasks_per_node_text(counts)} (Slurm's block layout; on nodes with more "
        "CPUs Slurm 22.05 may pack the first node); every pod requests the CPUs, GPUs and memory "
        f"of the largest share ({max(counts)} tasks)"
    )


def _memory_options(read: _Reader) -> dict[str, tuple[int | None, Directive | None]]:
    given = [read.parsed.last(key) for key in ("mem", "mem-per-cpu", "mem-per-gpu")]
    if sum(d is not None for d in given) > 1:
        read.conflict(
            "conflicting-memory-options",
            "--mem, --mem-per-cpu, and --mem-per-gpu are mutually exclusive",
            *given,
        )
    return {
        key: read.get(key, parse_memory_mb, "invalid-memory")
        for key in ("mem", "mem-per-cpu", "mem-per-gpu")
    }


def _memory_bytes(
    read: _Reader, memory: dict[str, tuple[int | None, Directive | None]], cpus: int, gpus: int
) -> tuple[int | None, bool]:
    mem, mem_dir = memory["mem"]
    if mem is not None:
        if mem == 0:
            read.warn(
                "mem-whole-node",
                "--mem=0 asks for all memory of each node; the pod gets no memory request, so "
                "it may land on a busy node (set an explicit --mem to reserve memory)",
                mem_dir,
            )
            return None, True
        return mem * MIB, False
    per_cpu, _ = memory["mem-per-cpu"]
    if per_cpu is not None:
        return per_cpu * cpus * MIB, False
    per_gpu, per_gpu_dir = memory["mem-per-gpu"]
    if per_gpu is not None:
        if gpus == 0:
            read.warn(
                "mem-per-gpu-without-gpus", "--mem-per-gpu without GPUs is ignored", per_gpu_dir
            )
            return None, False
        return per_gpu * gpus * MIB, False
    return None, False


def _exclusive_options(
    read: _Reader,
    cpt: Directive | None,
    cpg: Directive | None,
    per_gpu: Directive | None,
    per_node: Directive | None,
    gpt: Directive | None,
) -> None:
    if cpt is not None and cpg is not None:
        read.conflict(
            "conflicting-cpu-options",
            "--cpus-per-task and --cpus-per-gpu are mutually exclusive",
            cpt,
            cpg,
        )
    for other in (per_node, gpt):
        if per_gpu is not None and other is not None:
            read.conflict(
                "conflicting-task-options",
                f"--ntasks-per-gpu is not compatible with {other.directive}",
                per_gpu,
                other,
            )


def _gpus(
    read: _Reader,
    nodes: int,
    tasks: int,
    gres: GpuRequest | None,
    gres_dir: Directive | None,
    gpn: GpuRequest | None,
    gpn_dir: Directive | None,
    total: GpuRequest | None,
    total_dir: Directive | None,
    gpt: GpuRequest | None,
    gpt_dir: Directive | None,
) -> tuple[int, str | None, str | None]:
    """GPUs per node, the model and where it came from; conflicts are errors."""
    if gres is not None and gres.count and gpn is not None and gpn.count:
        shown = f"{gpn_dir.show() if gpn_dir else ''} vs {gres_dir.show() if gres_dir else ''}"
        if gres.count != gpn.count:
            read.conflict(
                "conflicting-gpu-options",
                f"--gpus-per-node and --gres=gpu are mutually exclusive ({shown})",
                gres_dir,
                gpn_dir,
            )
            return 0, None, None
        read.warn(
            "gpu-options-overlap",
            f"--gpus-per-node and --gres=gpu both ask for {gpn.count} GPUs per node ({shown}): "
            "Slurm 26.05 refuses the pair, earlier versions accept it; keep one of them",
            gpn_dir,
        )
    claims: list[tuple[int, str | None, str, Directive | None]] = []
    if gres is not None and gres.count:
        claims.append((gres.count, gres.gpu_type, "gres", gres_dir))
    if gpn is not None and gpn.count:
        claims.append((gpn.count, gpn.gpu_type, "gpus-per-node", gpn_dir))
    if gpt is not None and gpt.count:
        claims.append((gpt.count * tasks, gpt.gpu_type, "gpus-per-task", gpt_dir))
    if total is not None and total.count:
        if total.count % nodes:
            read.fail(
                "uneven-gpu-split",
                f"--gpus={total.count} does not split evenly over {nodes} nodes; use "
                "--gpus-per-node",
                total_dir,
            )
        elif nodes > 1:
            read.warn(
                "gpus-total-split",
                f"--gpus={total.count} is a job total; Slurm only guarantees one GPU per node, "
                f"Gryvia gives each of the {nodes} pods {total.count // nodes}",
                total_dir,
            )
        claims.append((max(total.count // nodes, 1), total.gpu_type, "gpus", total_dir))
    if not claims:
        return 0, None, None
    counts = {count for count, _, _, _ in claims}
    if len(counts) > 1:
        shown = ", ".join(d.show() for _, _, _, d in claims if d is not None)
        read.conflict(
            "conflicting-gpu-options",
            f"GPU options disagree on the GPUs per node: {shown}",
            *(d for _, _, _, d in claims),
        )
    typed = [(gpu_type, source) for _, gpu_type, source, _ in claims if gpu_type]
    models = {normalise_gpu_type(gpu_type) for gpu_type, _ in typed}
    if len(models) > 1:
        read.conflict(
            "conflicting-gpu-options",
            f"GPU options name different models: {', '.join(t for t, _ in typed)}",
            *(d for _, gpu_type, _, d in claims if gpu_type),
        )
    gpu_type, source = typed[0] if typed else (None, None)
    return claims[0][0], gpu_type, source
