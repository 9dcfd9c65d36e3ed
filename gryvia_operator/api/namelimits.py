"""The longest metadata.name of each Gryvia kind that derives named children, so every child
keeps its name and label values within Kubernetes' 63-character limits. Pure.

GryviaAIJob: `names.job_name_limit` (the Service `<job>-headless`, or the StatefulSet's revision
label). The others derive from it or from their own children:

- GryviaAutoTuner: trial jobs `<tuner>-t<index>` (index up to maxTrials - 1), each a
  GryviaAIJob of the template's workload kind;
- GryviaWorkflow: step jobs `<workflow>-<run>-<step>` (runs up to WORKFLOW_MAX_RUN), each a
  GryviaAIJob of its step template's workload kind;
- GryviaWorkspace: the pod `<workspace>-0`, whose name is its hostname (a DNS label);
- GryviaInferenceService: the Service `<service>` (a DNS label; the canary Deployment
  `<service>-canary` may be longer: Deployment names are subdomains).

The rules read the raw object, so `gryvia validate`, `apply` and the operator agree even
before the spec parses.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gryvia_operator.api.autotuner import trial_name
from gryvia_operator.api.names import job_name_limit
from gryvia_operator.api.workflow import step_job_name
from gryvia_operator.api.workspace import pod_name as workspace_pod_name

DNS_LABEL = 63
NAME_LIMITED_KINDS = (
    "GryviaAutoTuner",
    "GryviaWorkflow",
    "GryviaWorkspace",
    "GryviaInferenceService",
)
"""The kinds besides GryviaAIJob whose children set a name limit (`name_limit`): the
admission webhook checks their names on CREATE."""
WORKFLOW_MAX_RUN = 9999
"""Runs a workflow's step job names are sized for (`<workflow>-9999-<step>`)."""


def template_workload(template: Any) -> str:
    """The workload kind a GryviaAIJob spec template runs as (`workloadKind`, else
    statefulset for type inference, else job), as `GryviaAIJobSpec.effective_workload_kind`."""
    spec = template if isinstance(template, Mapping) else {}
    kind = spec.get("workloadKind")
    if kind in ("job", "statefulset"):
        return str(kind)
    return "statefulset" if spec.get("type") == "inference" else "job"


def _tuner_limit(spec: Mapping[str, Any]) -> tuple[int, str]:
    trials = spec.get("maxTrials")
    last = max(trials - 1, 0) if isinstance(trials, int) and not isinstance(trials, bool) else 0
    job_limit, child = job_name_limit(template_workload(spec.get("jobTemplate")))
    suffix = trial_name("", last)
    return job_limit - len(suffix), (
        f"trial job {trial_name('<tuner>', last)} (maxTrials {last + 1}) may have at most "
        f"{job_limit} characters: its {child.replace('<job>', '<trial>')} must fit in 63"
    )


def _workflow_limit(spec: Mapping[str, Any]) -> tuple[int, str] | None:
    found: tuple[int, str] | None = None
    for step in spec.get("steps") or []:
        if not isinstance(step, Mapping) or not isinstance(step.get("name"), str):
            continue
        job_limit, child = job_name_limit(template_workload(step.get("template")))
        suffix = step_job_name("", WORKFLOW_MAX_RUN, step["name"])
        limit = job_limit - len(suffix)
        if found is None or limit < found[0]:
            why = (
                f"step job {step_job_name('<workflow>', WORKFLOW_MAX_RUN, step['name'])} "
                f"(runs up to {WORKFLOW_MAX_RUN}) may have at most {job_limit} characters: its "
                f"{child.replace('<job>', '<step job>')} must fit in 63"
            )
            found = (limit, why)
    return found


def name_limit(kind: str, obj: Mapping[str, Any]) -> tuple[int, str] | None:
    """(the longest metadata.name `obj` of `kind` may have, the child that sets it), or None
    when the kind derives no child whose name is longer than its own (or, for a workflow,
    it has no steps yet)."""
    raw = obj.get("spec")
    spec: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
    if kind == "GryviaAutoTuner":
        return _tuner_limit(spec)
    if kind == "GryviaWorkflow":
        return _workflow_limit(spec)
    if kind == "GryviaWorkspace":
        pod = workspace_pod_name("<workspace>")
        return DNS_LABEL - len(workspace_pod_name("")), (
            f"its pod {pod} is also its hostname, a DNS label of at most 63 characters"
        )
    if kind == "GryviaInferenceService":
        return DNS_LABEL, "its Service <service> is a DNS label of at most 63 characters"
    return None


def name_length_problem(kind: str, obj: Mapping[str, Any]) -> str:
    """Why `obj`'s metadata.name is too long for the children of its `kind` ("" when it
    fits), naming the limit, the child and the fix."""
    meta = obj.get("metadata")
    name = meta.get("name") if isinstance(meta, Mapping) else None
    found = name_limit(kind, obj)
    if not isinstance(name, str) or found is None or len(name) <= found[0]:
        return ""
    limit, why = found
    return (
        f"metadata.name is {len(name)} characters; this {kind} allows at most {limit} "
        f"({why}): shorten the name"
    )
