"""`#SBATCH --partition=X` with Kueue (issue 19): LocalQueue X when it exists in the jobs'
namespace, else no queue, and the importer says which."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from gryvia_cli.sbatch.model import ImportSettings
from tests.unit.cli.fakes import FakeAccess
from tests.unit.cli.helpers import run
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


def test_submit_reads_the_namespaces_local_queues(tmp_path: Path) -> None:
    script = tmp_path / "train.sh"
    script.write_text("#!/bin/bash\n#SBATCH --partition=h100q\n#SBATCH --gres=gpu:1\necho hi\n")
    queue = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "LocalQueue",
        "metadata": {"name": "h100q", "namespace": "tenant-vision"},
        "spec": {"clusterQueue": "gryvia-vision"},
    }
    args = ["submit", "--sbatch", str(script), "--image", "busybox", "--dry-run"]
    found = run([*args, "-n", "tenant-vision"], FakeAccess(queue))
    assert found.exit_code == 0, found.output
    job = next(d for d in yaml.safe_load_all(found.stdout) if d)
    assert job["spec"]["queueName"] == "h100q"
    assert "sent to Kueue LocalQueue h100q in namespace tenant-vision" in found.output
    other = run([*args, "-n", "tenant-nlp"], FakeAccess(queue))
    assert other.exit_code == 0, other.output
    assert "queueName" not in next(d for d in yaml.safe_load_all(other.stdout) if d)["spec"]
    assert "no Kueue LocalQueue h100q in namespace tenant-nlp" in other.output
    fake = FakeAccess()
    fake.missing = {"LocalQueue"}
    kept = run([*args, "-n", "tenant-nlp"], fake)
    assert next(d for d in yaml.safe_load_all(kept.stdout) if d)["spec"]["queueName"] == "h100q"
