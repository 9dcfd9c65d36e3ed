"""Log following and waiting end with the job; `logs` replicas and prefixes (fake access)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gryvia_cli.errors import EXIT_TIMEOUT, WaitTimeoutError
from gryvia_cli.views import streams
from tests.unit.cli.fakes import FakeAccess
from tests.unit.cli.helpers import make_job, make_pod, run


class OpenStream:
    """A follow stream that, like kwok's, stays open after its lines until shut down."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.closed = threading.Event()

    def stream(self, amt: int = 4096, decode_content: bool = True) -> Iterator[bytes]:
        for line in self.lines:
            yield (line + "\n").encode()
        self.closed.wait(30)

    def release_conn(self) -> None:
        self.closed.set()

    def shutdown(self) -> None:
        self.closed.set()


def replica_pod(job: str, index: int, *, state: str = "running") -> dict[str, Any]:
    pod = make_pod(f"{job}-{index}-x").job(job).on("h0").obj()
    pod["metadata"]["annotations"] = {"batch.kubernetes.io/job-completion-index": str(index)}
    pod["spec"]["restartPolicy"] = "Never"
    pod["status"]["containerStatuses"] = [{"name": "c", "state": {state: {}}}]
    return pod


@pytest.fixture(autouse=True)
def fast_polls(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(streams, "POLL_SECONDS", 0.01)
    monkeypatch.setattr(streams, "DRAIN_SECONDS", 0.01)


def follow_in_thread(fake: FakeAccess, **kw: Any) -> tuple[threading.Thread, list[str]]:
    lines: list[str] = []
    thread = threading.Thread(
        target=streams.follow_logs,
        args=(fake, "ml", [streams.LogTarget("a-0-x", "c")], lines.append),
        kwargs=kw,
        daemon=True,
    )
    thread.start()
    return thread, lines


def test_follow_ends_when_the_job_fails_while_the_pod_still_runs() -> None:
    fake = FakeAccess(make_job("a").phase("Running").obj(), replica_pod("a", 0))
    fake.pod_log = lambda *a, **k: OpenStream(["rank 0 waiting"])  # type: ignore[method-assign]
    thread, lines = follow_in_thread(fake, done=streams.job_done(fake, "ml", "a"))
    thread.join(0.5)
    assert thread.is_alive(), "the follow must go on while the job runs"
    job = next(o for o in fake.objects if o["kind"] == "GryviaAIJob")
    job["status"] = {"phase": "Failed", "message": "BackoffLimitExceeded"}
    thread.join(5)
    assert not thread.is_alive(), "the follow did not end when the job Failed"
    assert lines == ["rank 0 waiting"]


def test_follow_gives_up_at_the_deadline_with_exit_124() -> None:
    fake = FakeAccess(make_job("a").phase("Running").obj(), replica_pod("a", 0))
    fake.pod_log = lambda *a, **k: OpenStream(["x"])  # type: ignore[method-assign]
    with pytest.raises(WaitTimeoutError) as caught:
        streams.follow_logs(
            fake,
            "ml",
            [streams.LogTarget("a-0-x", "c")],
            lambda _: None,
            deadline=streams.deadline_after(0.1),
            job="a",
        )
    assert caught.value.exit_code == EXIT_TIMEOUT == 124
    assert caught.value.message == (
        "job a did not end before the wait timeout; stopped following its log "
        "(the job keeps running)"
    )


def test_submit_wait_timeout_exits_124(tmp_path: Path) -> None:
    path = tmp_path / "a.yaml"
    path.write_text(
        "apiVersion: gryvia.io/v1alpha1\nkind: GryviaAIJob\nmetadata:\n  name: a\n"
        "spec:\n  type: training\n  gpus: 0\n  image: busybox\n  command: [sleep, '60']\n"
    )
    result = run(["submit", "-f", str(path), "--wait", "--wait-timeout", "1s"], FakeAccess())
    assert result.exit_code == 124, result.output
    assert "error: job a is still Pending at the wait timeout" in result.output
    assert "hint: keep following it with: gryvia status a --watch" in result.output


def test_logs_all_replicas_prefixes_every_line() -> None:
    fake = FakeAccess(make_job("a").phase("Failed").obj())
    for index in (1, 0):
        fake.add(replica_pod("a", index, state="terminated"))
        fake.logs[f"a-{index}-x"] = [f"rank {index} step 1", f"rank {index} done"]
    result = run(["logs", "a", "--all-replicas"], fake)
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [
        "[0] rank 0 step 1",
        "[0] rank 0 done",
        "[1] rank 1 step 1",
        "[1] rank 1 done",
    ]
    both = run(["logs", "a", "--all-replicas", "--replica", "1"], fake)
    assert both.exit_code == 2 and "pass --replica N or --all-replicas, not both" in both.output


def test_logs_says_which_replica_it_shows_and_refuses_an_absent_one() -> None:
    job = make_job("a").phase("Failed").distributed(nodes=2).obj()
    fake = FakeAccess(job, replica_pod("a", 1, state="terminated"))
    fake.logs["a-1-x"] = ["rank 1 crashed"]
    shown = run(["logs", "a"], fake)
    assert shown.exit_code == 0, shown.output
    assert shown.stdout == "rank 1 crashed\n"
    assert "replica 0 of job a has no pod (Kubernetes deletes the replicas" in shown.stderr
    assert "showing replica 1 (pod a-1-x)" in shown.stderr
    absent = run(["logs", "a", "--replica", "5"], fake)
    assert absent.exit_code == 1 and absent.stdout == ""
    assert "error: job a has 2 replica(s), 0 to 1; there is no replica 5" in absent.stderr
    assert "hint: replicas with pods: 1; or pass --all-replicas" in absent.stderr
    gone = run(["logs", "a", "--replica", "0"], fake)
    assert gone.exit_code == 1 and "error: replica 0 of job a has no pod (" in gone.stderr
    every = run(["logs", "a", "--all-replicas"], fake)
    assert every.stdout == "[1] rank 1 crashed\n"
    assert "replica 0 of job a has no pod (Kubernetes deletes" in every.stderr
