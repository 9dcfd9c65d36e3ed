"""The migration report: its JSON shape, its human form, and the summary over many scripts."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from gryvia_cli.sbatch.body import CommandUse
from gryvia_cli.sbatch.launcher import BATCH_VARIABLES, STEP_VARIABLES
from gryvia_cli.sbatch.mapping import ImportPlan, job_name
from gryvia_cli.sbatch.model import Issue, ParsedScript, Severity
from gryvia_cli.sbatch.resources import Resources
from gryvia_cli.sbatch.values import format_timeout

INFO = "\N{INFORMATION SOURCE}"  # the CLI's info glyph


def _resources(res: Resources) -> dict[str, Any]:
    return {
        "nodes": res.nodes,
        "gpusPerNode": res.gpus_per_node,
        "totalGpus": res.total_gpus,
        "gpuType": res.gpu_type,
        "gryviaGpuType": res.gryvia_gpu_type,
        "gpuTypeSource": res.gpu_type_source,
        "cpusPerPod": res.cpus_per_node,
        "memoryPerPodBytes": res.memory_bytes,
        "memoryWholeNode": res.memory_whole_node,
        "tasksPerPod": res.tasks_per_node,
        "taskLayout": list(res.layout),
        "timeLimitSeconds": res.time_limit_seconds,
    }


def _env(jobs: Sequence[dict[str, Any]]) -> dict[str, str]:
    if not jobs:
        return {}
    entries = jobs[0]["spec"]["env"]
    return {
        entry["name"]: entry["value"]
        for entry in entries
        if "value" in entry and not entry["name"].startswith("GRYVIA_")
    }


def build_report(
    parsed: ParsedScript,
    resources: Resources | None,
    plan: ImportPlan | None,
    commands: Iterable[CommandUse],
    issues: Iterable[Issue],
    jobs: Sequence[dict[str, Any]],
) -> dict[str, Any]:
    """The report as JSON data: `jobName`, `resources`, `array`, `env`, `warnings`,
    `unsupported`, `errors` (items `{code, line, directive, message}`) and more."""
    found = list(issues)
    by = {severity: [i.to_dict() for i in found if i.severity is severity] for severity in Severity}
    array = resources.array if resources else None
    return {
        "script": parsed.filename,
        "outcome": "import" if jobs else "reject",
        "jobName": job_name(parsed) if parsed.text else None,
        "kubernetesName": plan.base_name if plan else None,
        "interpreter": parsed.shebang[2:].strip() or None if parsed.text else None,
        "resources": _resources(resources) if resources else None,
        "array": (
            {"indices": list(array.indices), "maxParallel": array.max_parallel} if array else None
        ),
        "env": _env(jobs),
        "runtimeEnv": sorted(BATCH_VARIABLES + STEP_VARIABLES) if jobs else [],
        "image": plan.image if plan else None,
        "slurmCommands": [use.to_dict() for use in commands],
        "mapped": list(plan.mapped) if plan else [],
        "jobs": [job["metadata"]["name"] for job in jobs],
        "warnings": by[Severity.WARNING],
        "unsupported": by[Severity.UNSUPPORTED],
        "errors": by[Severity.ERROR],
    }


def _line(item: dict[str, Any]) -> str:
    where = f"line {item['line']}: " if item.get("line") is not None else ""
    return f"{where}{item['message']}"


def summary_line(report: dict[str, Any]) -> str:
    """One line describing the imported job (or the refusal)."""
    res = report.get("resources")
    if report["outcome"] != "import" or not res:
        return f"✗ {report['script']}: not imported ({len(report['errors'])} error(s))"
    gpus = "no GPU"
    if res["gpusPerNode"]:
        gpus = f"{res['gpusPerNode']} GPU" + (f" {res['gryviaGpuType']}" if res["gpuType"] else "")
    memory = "memory: whole node" if res["memoryWholeNode"] else "memory: default"
    size = res["memoryPerPodBytes"]
    if size:
        memory = f"{size // 2**30} GiB" if size % 2**30 == 0 else f"{size // 2**20} MiB"
    limit = res["timeLimitSeconds"]
    parts = [
        f"{res['nodes']} pod(s)",
        gpus,
        f"{res['cpusPerPod']} CPU",
        memory,
        f"{res['tasksPerPod']} task(s)/pod",
        format_timeout(limit) if limit else "no time limit",
    ]
    count = len(report["jobs"])
    jobs = f"{count} jobs" if count > 1 else report["jobs"][0]
    return f"✓ {report['script']} → {jobs} ({', '.join(parts)})"


def render_text(report: dict[str, Any]) -> list[str]:
    """The report for people: a summary line, then errors, unsupported items and warnings."""
    lines = [summary_line(report)]
    lines += [f"✗ error: {_line(item)}" for item in report["errors"]]
    lines += [f"⚠ unsupported: {_line(item)}" for item in report["unsupported"]]
    lines += [f"⚠ {_line(item)}" for item in report["warnings"]]
    array = report.get("array")
    if array and array["maxParallel"] is not None and report["outcome"] == "import":
        lines.append(
            f"{INFO} array throttle %{array['maxParallel']}: elements after the first "
            f"{array['maxParallel']} are created suspended; the operator releases them "
            "as others finish"
        )
    return lines


def status(report: dict[str, Any]) -> str:
    """`clean`, `warnings` (imports, with findings) or `refused`."""
    if report["outcome"] != "import":
        return "refused"
    return "warnings" if report["warnings"] or report["unsupported"] else "clean"


def summarize(reports: Sequence[dict[str, Any]], top: int = 10) -> dict[str, Any]:
    """Counts over many reports: clean / with warnings / refused, and the most common
    unsupported directives, warnings and errors (by number of scripts)."""
    statuses = Counter(status(report) for report in reports)

    def common(key: str, field: str) -> list[dict[str, Any]]:
        counter: Counter[str] = Counter()
        for report in reports:
            counter.update({str(item.get(field) or item["code"]) for item in report[key]})
        return [{"name": name, "scripts": n} for name, n in counter.most_common(top)]

    return {
        "total": len(reports),
        "clean": statuses["clean"],
        "warnings": statuses["warnings"],
        "refused": statuses["refused"],
        "topUnsupported": common("unsupported", "directive"),
        "topWarnings": common("warnings", "code"),
        "topErrors": common("errors", "code"),
        "files": [
            {
                "script": report["script"],
                "status": status(report),
                "jobName": report["jobName"],
                "errors": [item["code"] for item in report["errors"]],
                "unsupported": [item["directive"] for item in report["unsupported"]],
                "warnings": [item["code"] for item in report["warnings"]],
            }
            for report in reports
        ],
    }
