"""Quota status and admission count from one view of the jobs: the watch's copies with this
operator's own newer writes laid over them (issue 13: a status said "1 queued, 0 GPUs
allocated" while the job it had just admitted already held 8)."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from typing import Any, cast

from gryvia_operator.api import GryviaQuota
from gryvia_operator.api.jobfacts import job_facts
from gryvia_operator.controller import policies
from gryvia_operator.controller.runtime import Runtime
from gryvia_operator.controller.store import AIJOBS, JOB_FACTS, USAGE
from gryvia_operator.handlers import aijob
from tests.builders import make_job

NOW = datetime(2026, 12, 1, tzinfo=UTC)
QUOTA = GryviaQuota.model_validate(
    {
        "apiVersion": "gryvia.io/v1alpha1",
        "kind": "GryviaQuota",
        "metadata": {"name": "vision"},
        "spec": {"team": "vision", "namespaces": ["ml"], "gpuQuota": {"maxGPUs": 8}},
    }
)


def _runtime(*bodies: dict[str, Any]) -> Runtime:
    rt = Runtime(api=cast(Any, None), clock=lambda: NOW)
    jobs = {(b["metadata"]["namespace"], b["metadata"]["name"]): [b] for b in bodies}
    rt.indices.attach({AIJOBS: jobs, USAGE: {}})
    return rt


def test_a_job_just_admitted_counts_as_holding_before_its_watch_event() -> None:
    # what the watch holds: created, not yet admitted
    watched = make_job("first").gpus(8).gpu_type("H100").meta(resourceVersion="10").obj()
    rt = _runtime(watched)
    [before] = policies.quota_states(rt, [QUOTA])
    assert (before.allocated_gpus, before.queued_jobs) == (0, 1)

    admitted = make_job("first").gpus(8).gpu_type("H100").phase("Scheduling")
    admitted = admitted.condition("Admitted", "True", "QuotaReserved").obj()
    admitted["metadata"].update(namespace="ml", resourceVersion="11")
    rt.recent_jobs.note(("ml", "first"), "11", admitted)  # the operator's own status write
    [after] = policies.quota_states(rt, [QUOTA])
    assert (after.allocated_gpus, after.running_jobs, after.queued_jobs) == (8, 1, 0)

    rt.recent_jobs.seen(("ml", "first"), "11")  # the watch caught up: its copy is used again
    assert policies.known_jobs(rt) == [watched]


def test_job_facts_come_from_the_informer_projection_of_the_same_version() -> None:
    watched = make_job("first").gpus(8).gpu_type("H100").meta(resourceVersion="10").obj()
    rt = _runtime(watched)
    projected = aijob.facts_index(watched)
    marker = replace(projected[("ml", "first")][1], name="from-the-index")
    rt.indices.attach({JOB_FACTS: {("ml", "first"): [("10", marker)]}})
    assert policies.known_job_facts(rt) == [marker]  # no projection per call

    admitted = make_job("first").gpus(8).gpu_type("H100").phase("Scheduling").obj()
    admitted["metadata"].update(namespace="ml", resourceVersion="11")
    rt.recent_jobs.note(("ml", "first"), "11", admitted)  # newer than the index: projected here
    [facts] = policies.known_job_facts(rt)
    assert (facts.name, facts.phase) == ("first", "Scheduling")

    rt.indices.attach({JOB_FACTS: {}})  # no projection held (e.g. not indexed yet): projected
    rt.recent_jobs.forget(("ml", "first"))
    [facts] = policies.known_job_facts(rt)
    assert facts == job_facts(watched)
