"""`#SBATCH --partition=X` with Kueue (issue 19): LocalQueue X when it exists in the jobs'
namespace, else no queue, and the importer says which."""

from __future__ import annotations

from typing import Any

from gryvia_cli.sbatch.model import ImportSettings
from tests.unit.sbatch.helpers import codes, convert, sbatch


def _with_queues(*names: str) -> ImportSettings:
    return ImportSettings(local_queues=frozenset(names), queue_namespace="tenant-vision")


def _warning(conversion: Any) -> dict[str, Any]:
    (item,) = conversion.report["warnings"]
    return dict(item)


def test_an_existing_local_queue_takes_the_job() -> None:
    conversion = convert(sbatch("-p h100q,a100q", "--gres=gpu:1"), settings=_with_queues("h100q"))
    (job,) = conversion.jobs
    assert job["spec"]["queueName"] == "h100q"
    assert codes(conversion.report["warnings"]) == ["partition-to-local-queue"]
    assert (
        "sent to Kueue LocalQueue h100q in namespace tenant-vision"
        in (_warning(conversion)["message"])
    )


def test_a_missing_local_queue_leaves_the_queue_unset_and_says_so() -> None:
    conversion = convert(sbatch("--partition=gpu", "--gres=gpu:1"), settings=_with_queues("gryvia"))
    (job,) = conversion.jobs
    assert "queueName" not in job["spec"]
    assert codes(conversion.report["warnings"]) == ["partition-no-local-queue"]
    message = _warning(conversion)["message"]
    assert "no Kueue LocalQueue gpu in namespace tenant-vision (LocalQueues: gryvia)" in message
    assert "default queue" in message
    env = {e["name"]: e.get("value") for e in job["spec"].get("env") or []}
    assert env.get("SLURM_JOB_PARTITION") == "gpu"


def test_without_kueue_the_partition_is_kept_as_before() -> None:
    conversion = convert(sbatch("-p gpu", "--gres=gpu:1"))
    (job,) = conversion.jobs
    assert job["spec"]["queueName"] == "gpu"
    assert codes(conversion.report["warnings"]) == ["partition-as-queue"]
