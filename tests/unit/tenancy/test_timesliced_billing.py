"""Time-sliced GPUs are billed as the physical GPUs they stand for (issue 18 part 5): the rule
(`api.timeslicing`), the usage record it writes (`reconcile.metering`, the accounting
handler), and everything that reads the record (billing windows, ledger, usage, cost)."""

from __future__ import annotations

import datetime as dt
from fractions import Fraction
from typing import Any, cast

import pytest

from gryvia_cli.core.billing import aggregate, invoices
from gryvia_cli.core.cost import TeamScope, team_costs
from gryvia_operator.api import GryviaAIJob, GryviaUsageRecord
from gryvia_operator.api.ledger import build_entry, entry_hash
from gryvia_operator.api.periods import MeteredRun, spend_in_window
from gryvia_operator.api.pricing import Rate, default_catalog
from gryvia_operator.api.timeslicing import (
    LABEL_REPLICAS,
    billed_gpus,
    gpu_figure,
    physical_gpus,
    physical_share,
    replicas_of,
)
from gryvia_operator.controller.runtime import Runtime
from gryvia_operator.controller.store import NODES, PODS_BY_JOB, SKUS, USAGE
from gryvia_operator.handlers.accounting import Accounting
from gryvia_operator.reconcile.metering import (
    billed_physical_gpus,
    build_usage_record,
    needs_update,
    run_window,
    sealed_previous_run,
    spec_patch,
)
from gryvia_operator.reconcile.views import NodeView, PodView
from tests.unit.operator.fakeapi import FakeApi

T0 = dt.datetime(2026, 11, 29, 12, 0, tzinfo=dt.UTC)
H100 = Rate("h100-80g", "H100", 8.0)


def _at(seconds: float) -> str:
    return (T0 + dt.timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")


def _pod(node: str, gpus: int = 1, *, name: str = "p", end: float | None = None) -> PodView:
    state: dict[str, Any] = (
        {"running": {"startedAt": _at(0)}}
        if end is None
        else {"terminated": {"exitCode": 0, "startedAt": _at(0), "finishedAt": _at(end)}}
    )
    return PodView.from_pod(
        {
            "metadata": {"name": name, "namespace": "ns", "labels": {"gryvia.io/job": "j"}},
            "spec": {
                "nodeName": node,
                "containers": [{"name": "c", "resources": {"limits": {"nvidia.com/gpu": gpus}}}],
            },
            "status": {
                "phase": "Running" if end is None else "Succeeded",
                "containerStatuses": [{"name": "c", "state": state}],
            },
        }
    )


def _job(gpus: int = 1, phase: str = "Running", completed: float | None = None) -> GryviaAIJob:
    status: dict[str, Any] = {"phase": phase, "startTime": _at(0)}
    if completed is not None:
        status["completionTime"] = _at(completed)
    return GryviaAIJob.model_validate(
        {
            "metadata": {"name": "j", "namespace": "ns", "uid": "u-1"},
            "spec": {"type": "training", "gpus": gpus, "gpuType": "H100", "image": "img"},
            "status": status,
        }
    )


# -- the rule -----------------------------------------------------------------------------


def test_replicas_come_from_the_gpu_feature_discovery_label() -> None:
    assert replicas_of({LABEL_REPLICAS: "4"}) == 4
    assert LABEL_REPLICAS == "nvidia.com/gpu.replicas"
    for labels in (None, {}, {LABEL_REPLICAS: "0"}, {LABEL_REPLICAS: "x"}, {"other": "4"}):
        assert replicas_of(labels) == 1  # not time-sliced


def test_units_on_a_time_sliced_node_are_units_over_replicas_physical_gpus() -> None:
    assert physical_share(1, 4) == Fraction(1, 4)
    assert physical_share(8, 4) == 2  # 2 physical GPUs advertised as 8 units
    assert physical_share(3, 1) == 3 and physical_share(3, 0) == 3
    assert physical_gpus(1, [(1, 4)]) == Fraction(1, 4)
    assert physical_gpus(8, [(4, 4), (4, 4)]) == 2  # two pods of 4 units each
    assert physical_gpus(2, [(1, 1), (1, 1)]) == 2  # unshared nodes: the units
    # pods on a shared and an unshared node: the units-weighted share, exactly
    assert physical_gpus(2, [(1, 4), (1, 1)]) == Fraction(5, 4)
    assert physical_gpus(1, []) is None and physical_gpus(1, [(0, 4)]) is None


def test_gpu_figures_have_six_places_rounded_half_up() -> None:
    assert gpu_figure(Fraction(1, 4)) == 0.25
    assert gpu_figure(Fraction(1, 3)) == 0.333333
    assert gpu_figure(Fraction(2, 3)) == 0.666667
    assert gpu_figure(Fraction(1, 64)) == 0.015625


def test_a_record_bills_its_physical_gpus_else_its_units() -> None:
    assert billed_gpus({"gpus": 2}) == 2.0
    assert billed_gpus({"gpus": 1, "physicalGPUs": 0.25}) == 0.25
    assert billed_gpus({}) == 0.0


# -- metering -----------------------------------------------------------------------------


def test_metering_takes_the_share_from_the_nodes_the_pods_ran_on() -> None:
    assert billed_physical_gpus(1, [_pod("ts")], {"ts": 4}) == 0.25
    assert billed_physical_gpus(3, [_pod("ts", 3)], {"ts": 4}) == 0.75
    assert billed_physical_gpus(1, [_pod("whole")], {"whole": 1}) is None
    # the pods are gone (or on nodes no longer known): the recorded figure is kept
    assert billed_physical_gpus(1, [], {}, recorded=0.25) == 0.25
    assert billed_physical_gpus(1, [_pod("gone")], {}, recorded=0.25) == 0.25
    assert billed_physical_gpus(1, [], {}) is None


def test_one_shared_unit_of_four_is_billed_a_quarter_gpu() -> None:
    """Rate x 0.25 x hours: 1 unit on a node with replicas 4, 2 hours at 8.00 per GPU-hour."""
    pod = _pod("ts", end=7200)
    physical = billed_physical_gpus(1, [pod], {"ts": 4})
    record = build_usage_record(
        _job(phase="Succeeded", completed=7201),
        tenant="a",
        rate=H100,
        gpu_type="H100",
        now=T0 + dt.timedelta(hours=3),
        window=run_window([pod]),
        physical_gpus=physical,
    )
    assert record is not None
    spec = record["spec"]
    assert spec["gpus"] == 1 and spec["physicalGPUs"] == 0.25
    assert spec["gpuHours"] == 0.5 and spec["cost"] == 4.0 and spec["rate"] == 8.0
    assert spec["final"] is True
    GryviaUsageRecord.model_validate(record)  # the CRD model takes it


def test_an_unshared_job_gets_the_record_it_always_got() -> None:
    record = build_usage_record(
        _job(gpus=2), tenant="a", rate=H100, gpu_type="H100", now=T0 + dt.timedelta(hours=1)
    )
    assert record is not None
    assert "physicalGPUs" not in record["spec"]
    assert record["spec"]["gpuHours"] == 2.0 and record["spec"]["cost"] == 16.0


def _open(hours: float, **spec: Any) -> dict[str, Any]:
    record = build_usage_record(
        _job(), tenant="a", rate=H100, gpu_type="H100", now=T0 + dt.timedelta(hours=hours), **spec
    )
    assert record is not None
    return record


def test_an_old_record_is_not_rewritten_for_the_new_field_but_a_new_share_is_at_once() -> None:
    stored, later = _open(1), _open(1.01)
    # no time-sliced unit on either side: only the running hours differ, so not due yet
    assert not needs_update(stored, later, age_seconds=5, refresh_seconds=30)
    shared = _open(1.01, physical_gpus=0.25)
    assert needs_update(stored, shared, age_seconds=5, refresh_seconds=30)  # identity changed
    assert not needs_update(_open(1, physical_gpus=0.25), shared, age_seconds=5, refresh_seconds=30)


def test_a_preempted_run_is_sealed_at_its_physical_gpus() -> None:
    from gryvia_operator.reconcile import priority as rules

    stored = _open(1, physical_gpus=0.25)
    running = {"phase": "Running", "startTime": _at(0)}
    stopping = rules.preempted_status(running, "preempted by ml/high", T0 + dt.timedelta(hours=2))
    back = rules.requeued_status(stopping, T0 + dt.timedelta(hours=2, seconds=5))
    job = GryviaAIJob.model_validate(
        {**_job().model_dump(by_alias=True, exclude_none=True), "status": back}
    )
    sealed = sealed_previous_run(job, stored)
    assert sealed is not None and sealed["spec"]["physicalGPUs"] == 0.25
    assert sealed["spec"]["gpuHours"] == 0.5 and sealed["spec"]["cost"] == 4.0  # 2 h x 0.25


def test_an_open_shared_run_spans_its_real_running_time_in_billing_windows() -> None:
    """An open record's interval is GPU-hours / billed GPUs: 0.5 GPU-hours at 0.25 GPU is 2
    hours, so half of them fall in a window over its second hour (not 0.5 h at 1 GPU)."""
    raw = _open(2, physical_gpus=0.25)
    run = MeteredRun.of_raw(raw)
    assert run is not None and run.gpus == 0.25
    assert run.interval() == (T0, T0 + dt.timedelta(hours=2))
    model = MeteredRun.of_record(GryviaUsageRecord.model_validate(raw))
    assert model.interval() == run.interval()
    hours, cost = spend_in_window([run], T0 + dt.timedelta(hours=1), T0 + dt.timedelta(hours=3))
    assert hours == pytest.approx(0.25) and cost == pytest.approx(2.0)


# -- the handler reads pods and nodes ------------------------------------------------------


def _runtime(
    pods: list[PodView], nodes: list[NodeView], usage: dict[Any, Any], api: Any = None
) -> Runtime:
    rt = Runtime(api=cast(Any, api), clock=lambda: T0 + dt.timedelta(hours=1))
    skus = {
        s.name: [s.model_dump(mode="json", by_alias=True, exclude_none=True)]
        for s in default_catalog()
    }
    rt.indices.attach(
        {
            PODS_BY_JOB: {("ns", "j"): pods},
            NODES: {n.name: [n] for n in nodes},
            SKUS: skus,
            USAGE: usage,
        }
    )
    return rt


def test_the_accounting_handler_bills_a_time_sliced_unit_as_a_quarter_gpu() -> None:
    shared = NodeView("ts", labels={"gryvia.io/gpu": "H100", LABEL_REPLICAS: "4"})
    rt = _runtime([_pod("ts")], [shared], {})
    desired = Accounting(rt).desired_record(_job())
    assert desired is not None
    spec = desired["spec"]
    assert (spec["gpus"], spec["physicalGPUs"], spec["rate"]) == (1, 0.25, 8.0)
    assert spec["gpuHours"] == 0.25 and spec["cost"] == 2.0  # 1 h x 0.25 GPU x 8.00
    whole = NodeView("ts", labels={"gryvia.io/gpu": "H100"})
    desired = Accounting(_runtime([_pod("ts")], [whole], {})).desired_record(_job())
    assert desired is not None and "physicalGPUs" not in desired["spec"]
    # the pods are gone: the stored record's figure is kept
    key = ("ns", desired["metadata"]["name"])
    stored = {**desired, "spec": {**desired["spec"], "physicalGPUs": 0.25}}
    kept = Accounting(_runtime([], [], {key: [stored]})).desired_record(_job())
    assert kept is not None and kept["spec"]["physicalGPUs"] == 0.25


def test_a_figure_that_goes_away_is_removed_from_the_stored_record() -> None:
    stored = _open(1, physical_gpus=0.25)
    assert spec_patch(stored, _open(1))["physicalGPUs"] is None  # merge patch: delete
    assert "physicalGPUs" not in spec_patch(None, _open(1))
    assert spec_patch(stored, stored) == stored["spec"]


async def test_the_handler_writes_the_share_and_takes_it_back_when_the_pod_moves() -> None:
    api = FakeApi()
    shared = NodeView("ts", labels={"gryvia.io/gpu": "H100", LABEL_REPLICAS: "4"})
    whole = NodeView("whole", labels={"gryvia.io/gpu": "H100"})
    acc = Accounting(_runtime([_pod("ts")], [shared, whole], {}, api))
    desired = acc.desired_record(_job())
    assert desired is not None
    await acc.write_record(desired)
    (key,) = [k for k in api.objects if k[0] == "GryviaUsageRecord"]
    assert api.objects[key]["spec"]["physicalGPUs"] == 0.25
    moved = Accounting(_runtime([_pod("whole")], [shared, whole], {}, api))
    moved.records = acc.records  # what the first pass wrote, not indexed yet
    again = moved.desired_record(_job())
    assert again is not None and "physicalGPUs" not in again["spec"]
    await moved.write_record(again)  # an identity change: written at once
    spec = api.objects[key]["spec"]
    assert "physicalGPUs" not in spec and spec["gpuHours"] == 1.0 and spec["cost"] == 8.0


# -- what reads the record ------------------------------------------------------------------


def _sealed(physical: float | None = None) -> dict[str, Any]:
    pod = _pod("ts", end=7200)
    record = build_usage_record(
        _job(phase="Succeeded", completed=7201),
        tenant="a",
        rate=H100,
        gpu_type="H100",
        now=T0 + dt.timedelta(hours=3),
        window=run_window([pod]),
        physical_gpus=physical,
    )
    assert record is not None
    record["metadata"]["uid"] = "r-1"
    return record


def test_the_ledger_hashes_a_shared_record_by_the_v1_rule_unchanged() -> None:
    """physicalGPUs is not a hashed field: the entry carries the GPU-hours and cost it made,
    and a record without it hashes exactly as before."""
    shared, whole = _sealed(0.25), _sealed()
    entry = build_entry(shared, sequence=1, prev_hash="", recorded_at=T0)["spec"]
    assert (entry["gpuHours"], entry["rate"], entry["cost"]) == ("0.500000", "8.000000", "4.000000")
    assert "physicalGPUs" not in entry
    same = {**whole, "spec": {**whole["spec"], "gpuHours": 0.5, "cost": 4.0}}
    assert (
        entry_hash(entry)
        == build_entry(same, sequence=1, prev_hash="", recorded_at=T0)["spec"]["hash"]
    )


def test_usage_invoices_and_cost_follow_the_record() -> None:
    record = GryviaUsageRecord.model_validate(_sealed(0.25))
    rows, total = aggregate([record], "job")
    assert [(r.key, r.gpu_hours, r.cost) for r in rows] == [("ns/j", 0.5, 4.0)]
    assert (total.gpu_hours, total.cost) == (0.5, 4.0)
    (invoice,) = invoices([record], "2026-11", now=T0 + dt.timedelta(days=1))
    assert [(ln["gpuHours"], ln["rate"], ln["amount"]) for ln in invoice["lines"]] == [
        (0.5, 8.0, 4.0)
    ]
    (team,) = team_costs(
        [TeamScope("a", ("ns",), None, quota_namespaces=("ns",))],
        [record],
        "day",
        T0 + dt.timedelta(hours=3),
    )
    assert team.gpu_hours == 0.5 and team.spent == 4.0
