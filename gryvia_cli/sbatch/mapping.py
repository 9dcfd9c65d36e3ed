"""Turn a resolved batch script into GryviaAIJob manifests (plain dicts, camelCase spec fields).

Mapping (sbatch(1) options; README of the shared examples for the judgment calls):
one pod per Slurm node (a distributed job when nodes > 1, an Indexed Job on the operator side),
`gpus`/`gpuType` per pod, CPU and memory requests per pod, `timeout` from --time, `workingDir`
from --chdir (or pyxis --container-workdir), `queueName` from --partition (with Kueue: the
LocalQueue of that name when it exists in the namespace, `partition.partition_queue`),
`image` from --image or pyxis --container-image, env from --export plus the SLURM_*
variables Slurm sets for a batch job.
The Slurm job name stays in SLURM_JOB_NAME; metadata.name is its RFC 1123 form.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from gryvia_cli.sbatch import arrays
from gryvia_cli.sbatch.directives import Extra, map_directives
from gryvia_cli.sbatch.export import export_spec
from gryvia_cli.sbatch.launcher import (
    MAX_SCRIPT_BYTES,
    build_launch,
    build_runtime_config,
    runtime_config_name,
)
from gryvia_cli.sbatch.model import (
    ImportSettings,
    Issue,
    ParsedScript,
    error,
    unsupported,
    warning,
)
from gryvia_cli.sbatch.partition import partition_queue
from gryvia_cli.sbatch.resources import Resources
from gryvia_cli.sbatch.slurmenv import array_job_id, slurm_env
from gryvia_cli.sbatch.values import (
    ExportSpec,
    constraint_gpu_type,
    format_timeout,
    kubernetes_name,
    render_memory,
)
from gryvia_operator.api.names import (
    AIJOB_KIND_NAME,
    ANNOTATION_ARRAY_MAX_PARALLEL,
    ANNOTATION_SBATCH_COMMENT,
    ANNOTATION_SBATCH_JOB_NAME,
    ANNOTATION_SBATCH_SCRIPT,
    API_VERSION,
    LABEL_ARRAY_INDEX,
    LABEL_ARRAY_NAME,
    LABEL_IMPORTED_FROM,
    job_name_limit,
)


@dataclass(frozen=True)
class ImportPlan:
    """Everything decided about the job apart from per-element details."""

    job_name: str
    base_name: str
    resources: Resources
    image: str | None
    working_dir: str | None = None
    queue_name: str | None = None
    comment: str | None = None
    export: ExportSpec | None = None
    mapped: tuple[dict[str, Any], ...] = field(default_factory=tuple)
    extra: Extra = field(default_factory=Extra)


def job_name(parsed: ParsedScript) -> str:
    """The Slurm job name: --job-name, else the script's base file name (sbatch(1) -J)."""
    directive = parsed.last("job-name")
    if directive is not None and directive.value is not None:
        return directive.value
    return PurePosixPath(parsed.filename).name


def pyxis_image(text: str) -> str:
    """An image reference from pyxis/enroot syntax `[USER@][REGISTRY#]IMAGE[:TAG]`."""
    image = text.removeprefix("docker://")
    if "#" in image:
        registry, _, rest = image.partition("#")
        image = f"{registry.rpartition('@')[2]}/{rest}"
    return image


def plan_import(
    parsed: ParsedScript,
    resources: Resources,
    *,
    image: str | None,
    require_image: bool = True,
    base_name: str | None = None,
    name_suffix: str = "",
    settings: ImportSettings | None = None,
    namespace: str | None = None,
) -> tuple[ImportPlan, list[Issue]]:
    """Decide the non-resource fields and report how mapped directives were translated.

    The Kubernetes base name is the RFC 1123 form of `base_name` (`submit --name`), else of
    the Slurm job name, with `name_suffix` (`-3f2a`, when the name is taken) kept whole."""
    issues: list[Issue] = []
    mapped: list[dict[str, Any]] = []

    def note(key: str, target: str, value: str | None) -> None:
        directive = parsed.last(key)
        if directive is not None:
            mapped.append(
                {"directive": directive.directive, "line": directive.line, "field": target,
                 "value": value}
            )  # fmt: skip

    name = job_name(parsed)
    suffix = arrays.suffix_length(resources.array.indices) if resources.array else 0
    room = job_name_limit("job")[0] - suffix - len(name_suffix)
    base = kubernetes_name(base_name or name, room) + name_suffix

    container = parsed.last("container-image")
    chosen = image
    if container is not None and container.value:
        converted = pyxis_image(container.value)
        if image:
            note("container-image", "spec.image (overridden by --image)", image)
        elif converted.startswith(("/", "./", "../")) or converted.endswith(".sqsh"):
            issues.append(
                error(
                    "local-image",
                    f"{container.show()}: a local squashfs file cannot be pulled by Kubernetes; "
                    "push the image to a registry and pass --image",
                    container.line,
                    container.directive,
                )
            )
        else:
            chosen = converted
            note("container-image", "spec.image", converted)
            if "/" not in converted and "." in converted.partition(":")[0]:
                issues.append(
                    warning(
                        "image-without-repository",
                        f"{container.show()} names a registry but no image: an unquoted '#' "
                        "starts a comment in a directive; quote the value",
                        container.line,
                        container.directive,
                    )
                )
    if not chosen and require_image and not issues:
        issues.append(
            error(
                "missing-image",
                "no container image: pass --image IMAGE (or add #SBATCH --container-image)",
            )
        )

    working_dir = None
    for key in ("chdir", "container-workdir"):
        directive = parsed.last(key)
        if directive is not None and directive.value and working_dir is None:
            working_dir = directive.value
            note(key, "spec.workingDir", working_dir)
            if not working_dir.startswith("/"):
                issues.append(
                    warning(
                        "relative-chdir",
                        f"{directive.show()}: a relative directory is taken from the image's "
                        "working directory, not from where you ran sbatch",
                        directive.line,
                        directive.directive,
                    )
                )

    queue, found = partition_queue(parsed, settings or ImportSettings(), note)
    issues += found

    export, found = export_spec(parsed, (settings or ImportSettings()).submit_env)
    issues += found
    if export is not None:
        note("export", "spec.env", ",".join(export.values) or None)
    issues += _constraint(parsed, resources, note)
    comment = parsed.last("comment")
    note(
        "comment",
        f"metadata.annotations['{ANNOTATION_SBATCH_COMMENT}']",
        comment.value if comment is not None else None,
    )
    extra = map_directives(
        parsed, settings or ImportSettings(), namespace, resources.time_limit_seconds, note
    )
    issues += extra.issues
    for key in ("output", "error", "open-mode"):
        note(key, "the batch script's output, also in the pod log (in-pod runtime)", None)
    if len(parsed.text.encode("utf-8")) > MAX_SCRIPT_BYTES:
        issues.append(
            error(
                "script-too-large",
                f"the script is larger than {MAX_SCRIPT_BYTES // 1024} KiB, the most one "
                "environment variable can carry; move the bulk into a file in the image",
            )
        )
    plan = ImportPlan(
        job_name=name,
        base_name=base,
        resources=resources,
        image=chosen,
        working_dir=working_dir,
        queue_name=queue,
        comment=comment.value if comment is not None else None,
        export=export,
        mapped=tuple(mapped),
        extra=extra,
    )
    return plan, issues


def _constraint(parsed: ParsedScript, resources: Resources, note: Any) -> list[Issue]:
    directive = parsed.last("constraint")
    if directive is None or not directive.value:
        return []
    if resources.gpu_type_source == "constraint":
        note("constraint", "spec.gpuType", resources.gryvia_gpu_type)
        return []
    model = constraint_gpu_type(directive.value)
    reason = (
        "node features are not translated; pin nodes with spec.nodeSelector"
        if model is None
        else "the GPU model comes from the GPU request"
    )
    return [
        unsupported(
            "unsupported-directive",
            f"{directive.show()}: {reason}",
            directive.line,
            directive.directive,
        )
    ]


def _pod_resources(res: Resources) -> dict[str, Any]:
    requests: dict[str, str] = {"cpu": str(res.cpus_per_node)}
    limits: dict[str, str] = {}
    if res.memory_bytes:
        requests["memory"] = limits["memory"] = render_memory(res.memory_bytes)
    return {"requests": requests, "limits": limits} if limits else {"requests": requests}


def build_jobs(
    plan: ImportPlan,
    parsed: ParsedScript,
    *,
    namespace: str | None = None,
    submission_id: str | None = None,
) -> list[dict[str, Any]]:
    """The GryviaAIJob manifests: one, or one per array index (throttled ones suspended)."""
    res = plan.resources
    array = res.array
    namespace = namespace or plan.extra.namespace
    elements: list[int | None] = list(array.indices) if array else [None]
    array_id = array_job_id(plan.base_name, submission_id)
    user_env = list(plan.export.values) if plan.export else []
    launch = build_launch(
        parsed.text,
        task_counts=res.layout,
        time_limit_seconds=res.time_limit_seconds,
        user_env=user_env,
        config=runtime_config_name(plan.base_name),
        outputs=output_env(parsed) | plan.extra.env,
    )
    jobs = []
    for position, index in enumerate(elements):
        name = plan.base_name if index is None else arrays.element_name(plan.base_name, index)
        env = slurm_env(plan, parsed, name, index, array_id)
        spec: dict[str, Any] = {
            "type": "training",
            "image": plan.image or "",
            "gpus": res.gpus_per_node,
            "command": launch.command,
            "env": [{"name": k, "value": v} for k, v in env.items()] + launch.env,
            "resources": _pod_resources(res),
            "retryLimit": 0,
            **plan.extra.spec,
        }
        if res.gryvia_gpu_type:
            spec["gpuType"] = res.gryvia_gpu_type
        if res.nodes > 1:
            spec["distributed"] = {
                "enabled": True,
                "nodes": res.nodes,
                "gpusPerNode": res.gpus_per_node,
                "backend": "nccl" if res.gpus_per_node else "gloo",
            }
        if res.time_limit_seconds:
            spec["timeout"] = format_timeout(res.time_limit_seconds)
        if plan.working_dir:
            spec["workingDir"] = plan.working_dir
        if plan.queue_name:
            spec["queueName"] = plan.queue_name
        throttled = array is not None and array.max_parallel is not None
        if throttled and array and array.max_parallel is not None:
            spec["suspend"] = position >= array.max_parallel
        jobs.append(_manifest(plan, parsed, name, index, namespace, spec))
    return jobs


OUTPUT_ENV = {
    "output": "GRYVIA_SLURM_OUTPUT", "error": "GRYVIA_SLURM_ERROR",
    "open-mode": "GRYVIA_SLURM_OPEN_MODE",
}  # fmt: skip


def output_env(parsed: ParsedScript) -> dict[str, str]:
    """--output, --error and --open-mode as the runtime's env (append/truncate spelled out)."""
    out: dict[str, str] = {}
    for key, name in OUTPUT_ENV.items():
        directive = parsed.last(key)
        if directive is not None and directive.value:
            value = directive.value
            if key == "open-mode":
                value = "append" if value[:1].lower() == "a" else "truncate"
            out[name] = value
    return out


def build_runtime(
    plan: ImportPlan, parsed: ParsedScript, *, namespace: str | None = None
) -> dict[str, Any]:
    """The one runtime ConfigMap the jobs of `plan` read their script and runtime from."""
    labels = {LABEL_IMPORTED_FROM: "sbatch"}
    if plan.resources.array is not None:
        labels[LABEL_ARRAY_NAME] = plan.base_name
    name = runtime_config_name(plan.base_name)
    return build_runtime_config(name, parsed.text, labels, namespace or plan.extra.namespace)


def _manifest(
    plan: ImportPlan,
    parsed: ParsedScript,
    name: str,
    index: int | None,
    namespace: str | None,
    spec: Mapping[str, Any],
) -> dict[str, Any]:
    labels = {LABEL_IMPORTED_FROM: "sbatch"}
    annotations = {
        ANNOTATION_SBATCH_JOB_NAME: plan.job_name,
        ANNOTATION_SBATCH_SCRIPT: PurePosixPath(parsed.filename).name,
    }
    if plan.comment is not None:
        annotations[ANNOTATION_SBATCH_COMMENT] = plan.comment
    array = plan.resources.array
    if array is not None and index is not None:
        labels[LABEL_ARRAY_NAME] = plan.base_name
        labels[LABEL_ARRAY_INDEX] = str(index)
        if array.max_parallel is not None:
            annotations[ANNOTATION_ARRAY_MAX_PARALLEL] = str(array.max_parallel)
    metadata: dict[str, Any] = {"name": name, "labels": labels, "annotations": annotations}
    if namespace:
        metadata["namespace"] = namespace
    return {
        "apiVersion": API_VERSION,
        "kind": AIJOB_KIND_NAME,
        "metadata": metadata,
        "spec": dict(spec),
    }
