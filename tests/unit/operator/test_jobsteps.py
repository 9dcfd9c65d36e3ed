"""The job pipeline (`handlers.jobsteps`): a feature is one `Step` in `STEPS`, run by the job
handler without an edit of it; finishing unwinds in reverse; the first retry asked wins."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from typing import Any, cast

import pytest

from gryvia_operator.api import GryviaAIJob
from gryvia_operator.controller.runtime import Runtime
from gryvia_operator.controller.store import AIJOBS, CHILDREN, NODES
from gryvia_operator.handlers import aijob, jobsteps
from gryvia_operator.handlers.jobsteps import JobPass, Step
from gryvia_operator.reconcile.admission import AdmissionDecision
from gryvia_operator.reconcile.aijob import Observed
from gryvia_operator.reconcile.config import ReconcileConfig
from tests.builders import gpu_node, make_job
from tests.unit.operator.fakeapi import FakeApi

NOW = datetime(2026, 12, 1, tzinfo=UTC)


def _runtime(job: dict[str, Any]) -> tuple[Runtime, FakeApi]:
    api = FakeApi()
    rt = Runtime(api=cast(Any, api), config=ReconcileConfig(), clock=lambda: NOW)
    indexes: dict[str, dict[Any, list[Any]]] = {
        AIJOBS: {("ml", job["metadata"]["name"]): [job]},
        NODES: {"n": [gpu_node("n", "L40")]},
    }
    indexes.update({v: {} for v in CHILDREN.values()})
    rt.indices.attach(indexes)
    api.put(job)
    return rt, api


def test_every_step_is_named_once_says_what_it_reads_and_does_something() -> None:
    names = [s.name for s in jobsteps.STEPS]
    assert len(names) == len(set(names))
    for step in jobsteps.STEPS:
        assert step.reads and step.adds, step.name
        assert any((step.prepare, step.finish, step.event, step.retry)), step.name


async def test_a_step_added_to_the_list_runs_in_the_job_reconcile(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    job = make_job("j").gpus(1).gpu_type("L40").obj()
    rt, api = _runtime(job)
    seen: list[str] = []

    async def hold(rt: Runtime, p: JobPass) -> JobPass:
        seen.append(p.job.name)
        held = AdmissionDecision("queue", "ProbeHold", "held by the probe step")
        return replace(p, observed=replace(p.observed, admission=held))

    def finish(rt: Runtime, p: JobPass, status: dict[str, Any]) -> dict[str, Any]:
        return {**status, "message": status.get("message", "") + " (probe)"}

    probe = Step("probe", ("nothing",), "observed.admission", hold, finish, retry=lambda p, s: 7.0)
    # after the built-in steps: the admission it sets is the last word
    monkeypatch.setattr(jobsteps, "STEPS", (*jobsteps.STEPS, probe))

    await aijob.reconcile_key(rt, ("ml", "j"))

    status = api.objects[("GryviaAIJob", "ml", "j")]["status"]
    assert seen == ["j"]
    assert status["phase"] == "Queued"
    assert status["message"] == "held by the probe step (probe)"
    assert [c for c in api.calls if c[0] == "create"] == []  # held: no children
    assert ("ml", "j") in rt.jobs._timers


def test_finish_unwinds_in_reverse_and_the_first_retry_asked_wins(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def mark(tag: str) -> Any:
        return lambda rt, p, status: {**status, "order": [*status.get("order", []), tag]}

    steps = (
        Step("a", ("x",), "order", finish=mark("a"), retry=lambda p, s: None),
        Step("b", ("x",), "order", finish=mark("b"), retry=lambda p, s: 3.0),
        Step("c", ("x",), "order", finish=mark("c"), retry=lambda p, s: 9.0),
    )
    monkeypatch.setattr(jobsteps, "STEPS", steps)
    job = make_job("j").obj()
    rt, _ = _runtime(job)
    p = JobPass(job, GryviaAIJob.model_validate(job), Observed(), rt.config, {})
    assert jobsteps.finish(rt, p, {})["order"] == ["c", "b", "a"]
    assert jobsteps.retry_after(p, {}) == 3.0


def test_every_handler_but_the_pipeline_and_the_wiring_is_in_the_independence_contract() -> None:
    import tomllib
    from pathlib import Path

    import gryvia_operator

    root = Path(gryvia_operator.__file__).parents[1]
    contracts = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["importlinter"]
    independent = next(
        c["modules"]
        for c in contracts["contracts"]
        if c["type"] == "independence" and c["modules"][0].startswith("gryvia_operator.handlers.")
    )
    handlers = root / "gryvia_operator" / "handlers"
    on_disk = sorted(
        f"gryvia_operator.handlers.{p.stem}"
        for p in handlers.glob("[!_]*.py")
        if p.stem not in ("jobsteps", "registry")
    )
    assert sorted(independent) == on_disk
