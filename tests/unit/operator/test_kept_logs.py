"""A failed job keeps its failed pods (and their logs) until the GryviaAIJob is deleted."""

from __future__ import annotations

from datetime import UTC, datetime

from gryvia_operator.reconcile.aijob import Observed, reconcile_job
from gryvia_operator.reconcile.children import build_batch_job
from gryvia_operator.reconcile.config import ReconcileConfig
from gryvia_operator.reconcile.views import ChildView
from tests.builders import make_job

NOW = datetime(2025, 3, 1, 12, 0, 0, tzinfo=UTC)


def test_the_batch_job_is_never_cleaned_up_after_it_finishes() -> None:
    spec = build_batch_job(make_job("t").gpus(0).distributed(nodes=2).model())["spec"]
    assert "ttlSecondsAfterFinished" not in spec
    rules = spec["podFailurePolicy"]["rules"]
    assert [r["action"] for r in rules] == ["Ignore"]  # only disruptions; failures count


def test_a_failed_job_keeps_its_workload_so_kubernetes_keeps_its_failed_pods() -> None:
    job = make_job("t").gpus(0).distributed(nodes=2).phase("Failed")
    workload = build_batch_job(job.model())
    workload["metadata"]["uid"] = "u-job"
    observed = Observed(workloads=(ChildView.from_object(workload),))
    result = reconcile_job(job.model(), observed, ReconcileConfig(), NOW)
    assert result.actions == ()
