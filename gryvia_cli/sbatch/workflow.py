"""Several batch scripts imported together: `#SBATCH --dependency` between them becomes one
GryviaWorkflow whose steps are the converted jobs (pure, no cluster access).

The rule (docs/workflows.md, "Slurm scripts as a workflow"): a Slurm job id is only known
when sbatch runs, so a script names another by what is known before: its `--job-name`, its
file name or its file name without the extension (`afterok:prep`). `afterok`, `afterany` and
`afternotok` map to the step's `dependsOn` and `condition`; several names of one type
(`afterok:a:b`, `afterok:a,afterok:b`) all go into `dependsOn`. Refused, with the fix: a name
that is none of the scripts (numeric ids, `$JOBID`), a mix of types (a step has one
condition), `?` (any-of), `after`, `aftercorr`, `afterburstbuffer`, and array scripts (a step
is one job). `singleton` is dropped with a warning.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from gryvia_cli.sbatch.convert import Conversion, convert_script
from gryvia_cli.sbatch.mapping import job_name
from gryvia_cli.sbatch.model import (
    Directive,
    ImportSettings,
    Issue,
    ParsedScript,
    Severity,
    error,
    warning,
)
from gryvia_cli.sbatch.parser import parse_script
from gryvia_cli.sbatch.values import kubernetes_name
from gryvia_operator.api import API_VERSION
from gryvia_operator.api.names import LABEL_IMPORTED_FROM, service_name, statefulset_name
from gryvia_operator.api.workflow import LABEL_WORKFLOW, step_job_name

CONDITIONS = ("afterok", "afterany", "afternotok")
STEP_NAME_LENGTH = 24
"""Step names are cut to this, so that a default workflow name keeps room (63 characters
for `<workflow>-<run>-<step>-training`, runs up to 9999)."""
NAME_ROOM = 63 - len(statefulset_name(step_job_name("", 9999, "")))
STEP_HOST_NAME = "$(workflow.name)-$(workflow.run)-$(workflow.step)"
"""A step job's name as workflow placeholders: its pods' host names depend on the run."""
NODELIST_VARIABLES = ("SLURM_JOB_NODELIST", "SLURM_NODELIST")
_NO_MAP = {
    "after": "it waits for the other job to start, not end",
    "aftercorr": "array-element pairing has no workflow equivalent",
    "afterburstbuffer": "burst buffers have no equivalent",
}


@dataclass(frozen=True)
class Dependency:
    """What one `--dependency` value says: the condition (None when nothing is mapped), the
    names it waits for, and findings (errors refuse the import)."""

    condition: str | None
    names: tuple[str, ...]
    issues: tuple[Issue, ...] = ()


def parse_dependency(directive: Directive, script: str) -> Dependency:
    """Parse `--dependency=<type:name[:name]>[,<type:name>...]` (sbatch(1)) for a workflow
    step. Findings name the directive, its line and `script`, and say what to write instead."""
    value = directive.value or ""
    where = f"{script}: {directive.show()}"

    def refuse(code: str, text: str) -> Dependency:
        return Dependency(
            None, (), (error(code, f"{where}: {text}", directive.line, "--dependency"),)
        )

    if "?" in value:
        return refuse(
            "dependency-any-of",
            "'?' (any one of) has no workflow equivalent; a step waits for all its "
            "dependencies: use ',' or ':' between names",
        )
    conditions: list[str] = []
    names: list[str] = []
    issues: list[Issue] = []
    for group in filter(None, (part.strip() for part in value.split(","))):
        kind, _, rest = group.partition(":")
        kind = kind.lower()
        if kind == "singleton":
            issues.append(
                warning(
                    "dependency-singleton",
                    f"{where}: singleton (one job of this name at a time) is not translated "
                    "and is dropped",
                    directive.line,
                    "--dependency",
                )
            )
            continue
        if kind in _NO_MAP:
            return refuse(
                "dependency-type",
                f"{kind}: {_NO_MAP[kind]}; write afterok, afterany or afternotok",
            )
        if kind not in CONDITIONS:
            return refuse(
                "dependency-type",
                f"{kind!r} is not a dependency type; write afterok:<name>, afterany:<name> "
                "or afternotok:<name>",
            )
        found = [n.strip() for n in rest.split(":") if n.strip()]
        if not found:
            return refuse("dependency-name", f"{kind} names no job; write {kind}:<name>")
        conditions.append(kind)
        names += [n for n in dict.fromkeys(found) if n not in names]
    if len(set(conditions)) > 1:
        return refuse(
            "dependency-mixed",
            f"mixes {', '.join(sorted(set(conditions)))}; a workflow step has one condition: "
            "use one type for all the names",
        )
    return Dependency(conditions[0] if conditions else None, tuple(names), tuple(issues))


@dataclass(frozen=True)
class WorkflowImport:
    """The result of importing scripts together: the workflow and the runtime ConfigMaps
    (None and empty on any error), each script's conversion and report (its `--dependency`
    findings in place of the single-script "not supported" one), and the errors about the
    workflow as a whole (`issues`: namespaces, name, cycles)."""

    name: str
    namespace: str | None
    conversions: tuple[Conversion, ...]
    reports: tuple[dict[str, Any], ...]
    issues: tuple[Issue, ...] = ()
    workflow: dict[str, Any] | None = None
    runtimes: tuple[dict[str, Any], ...] = field(default_factory=tuple)

    @property
    def ok(self) -> bool:
        """True when every script imports and the workflow is valid."""
        return self.workflow is not None

    @property
    def documents(self) -> list[dict[str, Any]]:
        """Every object to create, in order: the runtime ConfigMaps, then the workflow."""
        return [*self.runtimes, *([self.workflow] if self.workflow else [])]


def step_names(parsed: Sequence[ParsedScript]) -> list[str]:
    """Each script's step name: the RFC 1123 form of its `--job-name`, else of its file name
    without the extension, cut to STEP_NAME_LENGTH; repeats get `-2`, `-3`."""
    out: list[str] = []
    for script in parsed:
        given = script.last("job-name")
        base = given.value if given is not None and given.value else _stem(script.filename)
        name = kubernetes_name(base, STEP_NAME_LENGTH)
        candidate, n = name, 1
        while candidate in out:
            n += 1
            candidate = f"{name[: STEP_NAME_LENGTH - len(str(n)) - 1].rstrip('-')}-{n}"
        out.append(candidate)
    return out


def _stem(filename: str) -> str:
    return PurePosixPath(filename).stem or PurePosixPath(filename).name


def references(parsed: Sequence[ParsedScript]) -> dict[str, list[int]]:
    """What a `--dependency` may name -> the indexes of the scripts it names: each script's
    Slurm job name, file name and file name without the extension."""
    out: dict[str, list[int]] = {}
    for i, script in enumerate(parsed):
        name = PurePosixPath(script.filename).name
        for key in {job_name(script), name, _stem(script.filename)}:
            out.setdefault(key, [])
            if i not in out[key]:
                out[key].append(i)
    return out


def default_workflow_name(parsed: Sequence[ParsedScript], steps: Sequence[str]) -> str:
    """The first script's file name without extension, cut so that every step job's
    children fit in 63 characters."""
    room = max(NAME_ROOM - max((len(s) for s in steps), default=0), 8)
    return kubernetes_name(_stem(parsed[0].filename) if parsed else "sbatch", room)


def convert_workflow(
    scripts: Sequence[tuple[bytes | str, str]],
    *,
    name: str | None = None,
    image: str | None = None,
    namespace: str | None = None,
    submission_id: str | None = None,
    settings: ImportSettings | None = None,
    step_names_given: Sequence[str] | None = None,
) -> WorkflowImport:
    """Import `scripts` (data, filename) together as one GryviaWorkflow named `name` (default:
    `default_workflow_name`). Each script is converted as `convert_script` does, with the
    Kubernetes base name `<workflow>-<step>` (its runtime ConfigMap is
    `<workflow>-<step>-slurm-runtime`, labelled gryvia.io/workflow); its job spec becomes the
    step's template, with the host names of SLURM_JOB_NODELIST as workflow placeholders.
    `step_names_given` replaces the step names (a heterogeneous job's `launcher`, `workers`).
    Never raises for bad input: findings go into the reports and `issues`."""
    parsed = [parse_script(data, filename) for data, filename in scripts]
    steps = list(step_names_given) if step_names_given else step_names(parsed)
    wf = name or default_workflow_name(parsed, steps)
    conversions = [
        convert_script(
            data, filename, image=image, namespace=namespace, submission_id=submission_id,
            settings=settings, base_name=f"{wf}-{step}",
        )
        for (data, filename), step in zip(scripts, steps, strict=True)
    ]  # fmt: skip
    refs = references(parsed)
    issues: list[Issue] = []
    reports: list[dict[str, Any]] = []
    built: list[dict[str, Any]] = []
    for i, (conversion, step) in enumerate(zip(conversions, steps, strict=True)):
        found = _step_issues(conversion, i, parsed, steps, refs)
        reports.append(_report(conversion.report, found))
        dep = _dependency(parsed[i])
        if conversion.ok and not any(f.severity is Severity.ERROR for f in found):
            built.append(_step(conversion, step, dep, refs, steps))
    spaces = {
        str((c.jobs[0].get("metadata") or {}).get("namespace") or "") for c in conversions if c.jobs
    }
    if len(spaces) > 1:
        issues.append(
            error(
                "workflow-namespaces",
                f"the scripts' jobs go to different namespaces ({', '.join(sorted(spaces))}, "
                "from --account); a workflow lives in one: use one --account or pass -n",
            )
        )
    target = namespace or (spaces.pop() if len(spaces) == 1 else None) or None
    failed = bool(issues) or len(built) != len(steps)
    if failed:
        return WorkflowImport(wf, target, tuple(conversions), tuple(reports), tuple(issues))
    workflow, problem = _workflow(wf, target, built)
    if problem:
        issue = error("workflow-invalid", problem)
        return WorkflowImport(wf, target, tuple(conversions), tuple(reports), (issue,))
    runtimes = tuple(_runtime(c, wf, target) for c in conversions if c.runtime)
    return WorkflowImport(wf, target, tuple(conversions), tuple(reports), (), workflow, runtimes)


def _dependency(parsed: ParsedScript) -> Dependency:
    directive = parsed.last("dependency")
    if directive is None:
        return Dependency(None, ())
    return parse_dependency(directive, PurePosixPath(parsed.filename).name)


def _step_issues(
    conversion: Conversion,
    index: int,
    parsed: Sequence[ParsedScript],
    steps: Sequence[str],
    refs: dict[str, list[int]],
) -> list[Issue]:
    script = PurePosixPath(parsed[index].filename).name
    found: list[Issue] = []
    res = conversion.resources
    if res is not None and res.array is not None:
        directive = parsed[index].last("array")
        found.append(
            error(
                "workflow-array",
                f"{script}: an array (--array) cannot be a workflow step (a step is one job); "
                "import it alone with `gryvia submit --sbatch`",
                directive.line if directive else None,
                "--array",
            )
        )
    dep = _dependency(parsed[index])
    found += dep.issues
    directive = parsed[index].last("dependency")
    line = directive.line if directive else None
    known = ", ".join(sorted(k for k, v in refs.items() if v != [index]))
    for ref in dep.names:
        hits = refs.get(ref, [])
        if not hits:
            found.append(
                error(
                    "dependency-unknown",
                    f"{script}: --dependency={dep.condition}:{ref} names none of the scripts "
                    f"imported together (they are known as: {known}); a Slurm job id is only "
                    "known at submit time, so write "
                    f"--dependency={dep.condition}:<the other script's --job-name or file "
                    "name>, and import both scripts in one command",
                    line,
                    "--dependency",
                )
            )
        elif hits == [index]:
            found.append(
                error(
                    "dependency-self",
                    f"{script}: --dependency={dep.condition}:{ref} names this script itself; "
                    "name another one",
                    line,
                    "--dependency",
                )
            )
        elif len(hits) > 1:
            names = ", ".join(PurePosixPath(parsed[i].filename).name for i in hits)
            found.append(
                error(
                    "dependency-ambiguous",
                    f"{script}: --dependency={dep.condition}:{ref} names several scripts "
                    f"({names}); give them distinct --job-name values",
                    line,
                    "--dependency",
                )
            )
    return found


def _report(report: dict[str, Any], found: list[Issue]) -> dict[str, Any]:
    out = dict(report)
    out["unsupported"] = [u for u in report["unsupported"] if u.get("directive") != "--dependency"]
    for severity in (Severity.ERROR, Severity.WARNING):
        extra = [f.to_dict() for f in found if f.severity is severity]
        out[severity.value] = [*report[severity.value], *extra]
    if any(f.severity is Severity.ERROR for f in found):
        out["outcome"] = "reject"
    return out


def _step(
    conversion: Conversion,
    step: str,
    dep: Dependency,
    refs: dict[str, list[int]],
    steps: Sequence[str],
) -> dict[str, Any]:
    spec = dict(conversion.jobs[0]["spec"])
    res = conversion.resources
    nodes = res.nodes if res is not None else 1
    hosts = ",".join(f"{STEP_HOST_NAME}-{i}.{service_name(STEP_HOST_NAME)}" for i in range(nodes))
    spec["env"] = [
        {**e, "value": hosts} if e.get("name") in NODELIST_VARIABLES else e
        for e in spec.get("env") or []
    ]
    out: dict[str, Any] = {"name": step}
    if dep.condition and dep.names:
        out["dependsOn"] = list(dict.fromkeys(steps[refs[n][0]] for n in dep.names))
        out["condition"] = dep.condition
    out["template"] = spec
    return out


def _workflow(
    name: str, namespace: str | None, steps: list[dict[str, Any]]
) -> tuple[dict[str, Any], str | None]:
    from pydantic import ValidationError

    from gryvia_operator.api.workflow import GryviaWorkflow, name_problem

    metadata: dict[str, Any] = {"name": name, "labels": {LABEL_IMPORTED_FROM: "sbatch"}}
    if namespace:
        metadata["namespace"] = namespace
    body = {
        "apiVersion": API_VERSION,
        "kind": "GryviaWorkflow",
        "metadata": metadata,
        "spec": {"steps": steps},
    }
    problem = name_problem(name, [s["name"] for s in steps])
    if problem:
        return body, problem.replace("metadata.name", "--name")
    try:
        GryviaWorkflow.model_validate(body)
    except ValidationError as exc:
        first = exc.errors()[0]
        return body, str(first["msg"]).removeprefix("Value error, ")
    return body, None


def _runtime(conversion: Conversion, workflow: str, namespace: str | None) -> dict[str, Any]:
    runtime = dict(conversion.runtime or {})
    metadata = dict(runtime.get("metadata") or {})
    metadata["labels"] = {**(metadata.get("labels") or {}), LABEL_WORKFLOW: workflow}
    if namespace:
        metadata["namespace"] = namespace
    runtime["metadata"] = metadata
    return runtime
