"""--qos, --requeue/--no-requeue, --signal and --account become GryviaAIJob fields."""

from __future__ import annotations

import pytest

from gryvia_cli.sbatch.directives import QOS_PRIORITY
from gryvia_cli.sbatch.model import ImportSettings
from tests.unit.sbatch.helpers import codes, convert, env_of, sbatch


@pytest.mark.parametrize(("qos", "priority"), [("normal", 50), ("HIGH", 80), ("scavenger", 0)])
def test_qos_maps_to_priority_by_the_table(qos: str, priority: int) -> None:
    conversion = convert(sbatch(f"--qos={qos}"))
    assert conversion.jobs[0]["spec"]["priority"] == priority == QOS_PRIORITY[qos.lower()]
    assert {"directive": "--qos", "field": "spec.priority"}.items() <= next(
        m for m in conversion.report["mapped"] if m["directive"] == "--qos"
    ).items()


def test_an_unknown_qos_is_reported() -> None:
    conversion = convert(sbatch("--qos=gpu_premium_2"))
    assert "priority" not in conversion.jobs[0]["spec"]
    assert "not a QOS name Gryvia knows" in conversion.report["unsupported"][0]["message"]


def test_requeue_and_no_requeue_keep_the_retry_limit_at_zero() -> None:
    for directive in ("--requeue", "--no-requeue"):
        conversion = convert(sbatch(directive))
        assert conversion.jobs[0]["spec"]["retryLimit"] == 0
        assert conversion.report["unsupported"] == []
        (mapped,) = [m for m in conversion.report["mapped"] if m["directive"] == directive]
        assert "disruptions" in mapped["field"]


def test_signal_becomes_the_runtime_timer() -> None:
    conversion = convert(sbatch("--time=30", "--signal=B:USR1@120"))
    assert env_of(conversion.jobs[0])["GRYVIA_SLURM_SIGNAL"] == "USR1@120@batch"
    steps = convert(sbatch("--time=30", "--signal=SIGTERM"))
    assert env_of(steps.jobs[0])["GRYVIA_SLURM_SIGNAL"] == "TERM@60@all"
    never = convert(sbatch("--signal=USR1@60"))
    assert "signal-without-time-limit" in codes(never.issues)
    assert "GRYVIA_SLURM_SIGNAL" not in env_of(never.jobs[0])


def test_account_goes_to_the_tenant_namespace_when_it_exists() -> None:
    text = sbatch("--account=nlp")
    found = convert(text, settings=ImportSettings(tenants=frozenset({"nlp"})))
    assert found.jobs[0]["metadata"]["namespace"] == "tenant-nlp"
    assert found.runtime is not None and found.runtime["metadata"]["namespace"] == "tenant-nlp"
    missing = convert(text, settings=ImportSettings(tenants=frozenset({"vision"})))
    assert "namespace" not in missing.jobs[0]["metadata"]
    assert "there is no tenant nlp" in missing.report["unsupported"][0]["message"]
    offline = convert(text)
    assert "no cluster was read" in offline.report["unsupported"][0]["message"]
    given = convert(text, namespace="team-a", settings=ImportSettings(tenants=frozenset({"nlp"})))
    assert given.jobs[0]["metadata"]["namespace"] == "team-a"
