"""Job records and their roll-up (`gryvia_operator.reconcile.jobrecords`): what the operator
writes when a job ends, and what a roll-up pass folds and deletes."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

from gryvia_operator.api.jobrecord import ROLLUP_FOLD_LIMIT, GryviaJobRecord
from gryvia_operator.reconcile.jobrecords import build_job_record, plan_rollup
from gryvia_operator.reconcile.views import PodView
from tests.builders import make_job

NOW = datetime(2026, 12, 1, 12, 0, 0, tzinfo=UTC)


def _pod(replica: int, code: int | None, node: str) -> PodView:
    return PodView("tenant-nlp", f"p{replica}", node_name=node, replica=replica, exit_code=code,
                   started_at="2026-12-01T09:00:00Z")  # fmt: skip


def _usage(cost: str, hours: float, final: bool = True) -> dict[str, Any]:
    return {"spec": {"cost": cost, "gpuHours": hours, "final": final, "currency": "USD"}}


def test_a_failed_job_becomes_a_compact_record_with_exit_code_cost_and_nodes() -> None:
    job = (
        make_job("train", "tenant-nlp").uid("u-1").gpus(4).gpu_type("H100").distributed(nodes=2)
        .timeout("2h").annotate("gryvia.io/submitted-by", "alice")
        .annotate("gryvia.io/sbatch-job-name", "llama")
        .meta(creationTimestamp="2026-12-01T08:59:00Z")
        .status(phase="Failed", message="pod 1 failed", startTime="2026-12-01T09:00:00Z",
                completionTime="2026-12-01T10:30:00Z",
                metrics={"samples": 3, "meanActivityPercent": 61.5})
    ).obj()  # fmt: skip
    pods = [_pod(1, 0, "n2"), _pod(0, 3, "n1")]
    body = build_job_record(job, tenant="nlp", pods=pods, usage=[_usage("12.50", 12.0)], now=NOW)
    assert body["metadata"] == {"name": "job-u-1", "namespace": "tenant-nlp"}
    assert body["spec"] == {
        "tenant": "nlp", "job": "train", "jobUID": "u-1", "jobName": "llama", "user": "alice",
        "phase": "Failed", "exitCode": 3, "submitted": "2026-12-01T08:59:00Z",
        "started": "2026-12-01T09:00:00Z", "ended": "2026-12-01T10:30:00Z", "gpuType": "H100",
        "gpus": 8, "pods": 2, "nodes": ["n1", "n2"], "limitSeconds": 7200, "gpuHours": 12.0,
        "cost": "12.5000", "gpuEff": 61.5,
    }  # fmt: skip
    GryviaJobRecord.model_validate(body)  # what the CRD holds
    assert len(json.dumps(body["spec"], separators=(",", ":"))) < 450


def test_a_job_deleted_before_it_ended_is_recorded_cancelled_at_the_deletion() -> None:
    pending = make_job("waits", "tenant-nlp").uid("u-2").gpus(1).phase("Pending").obj()
    spec = build_job_record(pending, tenant="nlp", pods=[], usage=[], now=NOW, deleted=True)["spec"]
    assert spec["phase"] == "Cancelled" and spec["ended"] == "2026-12-01T12:00:00Z"
    assert "started" not in spec and "exitCode" not in spec and "cost" not in spec
    timed = (
        make_job("slow", "tenant-nlp").uid("u-3").gpus(2)
        .status(phase="Failed", message="DeadlineExceeded: time limit reached",
                startTime="2026-12-01T10:00:00Z", completionTime="2026-12-01T11:00:00Z")
    ).obj()  # fmt: skip
    spec = build_job_record(timed, tenant="nlp", pods=[], usage=[], now=NOW)["spec"]
    assert spec["timedOut"] is True and spec["gpuHours"] == 2.0  # no usage: GPUs x elapsed


def _record(uid: str, ended: datetime, phase: str = "Succeeded", cost: str = "1.25") -> dict:
    stamp = ended.strftime("%Y-%m-%dT%H:%M:%SZ")
    spec = {"tenant": "nlp", "job": uid, "jobUID": uid, "phase": phase, "ended": stamp,
            "gpuHours": 0.5, "cost": cost}  # fmt: skip
    return {"metadata": {"name": f"job-{uid}", "namespace": "tenant-nlp"}, "spec": spec}


def test_records_older_than_the_retention_fold_into_their_month_and_go() -> None:
    cutoff = NOW - timedelta(days=90)
    old = [
        _record("a", datetime(2026, 8, 3, tzinfo=UTC)),
        _record("b", datetime(2026, 8, 20, tzinfo=UTC), "Failed", "2.10"),
        _record("c", datetime(2026, 7, 31, 23, tzinfo=UTC)),
    ]
    young = _record("d", NOW - timedelta(days=3))
    plan = plan_rollup([*old, young], cutoff)
    assert sorted(plan.deletes) == [("tenant-nlp", f"job-{u}") for u in "abc"]
    by_name = {w["metadata"]["name"]: w for w in plan.writes}
    assert set(by_name) == {"rollup-nlp-2026-07", "rollup-nlp-2026-08"}
    august = by_name["rollup-nlp-2026-08"]
    assert august["spec"] == {
        "tenant": "nlp", "gpuHours": 1.0, "cost": "3.3500",
        "rollup": {"month": "2026-08", "jobs": 2, "states": {"Succeeded": 1, "Failed": 1},
                   "through": "2026-08-20T00:00:00Z", "folded": ["a", "b"]},
    }  # fmt: skip
    GryviaJobRecord.model_validate(august)
    # a pass cut short after writing the roll-up: the records it counted are only deleted
    stored = {**august, "metadata": {**august["metadata"], "resourceVersion": "7"}}
    again = plan_rollup([stored, old[0], old[1]], cutoff)
    assert again.writes == [] and len(again.deletes) == 2
    # a later record of the same month adds to the stored roll-up, guarded by its version
    late = _record("e", datetime(2026, 8, 25, tzinfo=UTC))
    more = plan_rollup([stored, late], cutoff)
    assert more.writes[0]["metadata"]["resourceVersion"] == "7"
    assert more.writes[0]["spec"]["rollup"]["jobs"] == 3
    assert more.writes[0]["spec"]["cost"] == "4.6000"
    assert more.writes[0]["spec"]["rollup"]["folded"] == ["e"]


def test_a_record_written_after_its_month_was_rolled_up_is_still_counted() -> None:
    """A record that ended before the roll-up's `through` but was listed only after the pass
    that wrote it (written late, or by a pass between two writes) adds to it."""
    cutoff = NOW - timedelta(days=90)
    first = plan_rollup([_record("a", datetime(2026, 8, 20, tzinfo=UTC))], cutoff).writes[0]
    stored = {**first, "metadata": {**first["metadata"], "resourceVersion": "7"}}
    earlier = _record("b", datetime(2026, 8, 3, tzinfo=UTC), "Failed", "2.10")
    plan = plan_rollup([stored, earlier], cutoff)
    assert plan.deletes == [("tenant-nlp", "job-b")]
    roll = plan.writes[0]["spec"]["rollup"]
    assert roll["jobs"] == 2 and roll["states"] == {"Succeeded": 1, "Failed": 1}
    assert roll["through"] == "2026-08-20T00:00:00Z" and roll["folded"] == ["b"]
    assert plan.writes[0]["spec"]["cost"] == "3.3500"


def test_a_pass_takes_at_most_the_fold_limit_into_one_roll_up() -> None:
    cutoff = NOW - timedelta(days=90)
    many = [_record(f"u{i:04d}", datetime(2026, 8, 3, tzinfo=UTC)) for i in range(1005)]
    plan = plan_rollup(many, cutoff)
    assert len(plan.deletes) == ROLLUP_FOLD_LIMIT
    assert plan.writes[0]["spec"]["rollup"]["jobs"] == ROLLUP_FOLD_LIMIT
