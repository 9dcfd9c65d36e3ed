"""`status --watch`, `queue -w`, `submit --wait` and `logs -f --all-replicas` wait out a lost
connection (fake access layer; the sandbox tests in tests/integration/cli/test_network_faults.py
do it through a real relay)."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import pytest

from gryvia_cli.errors import ForbiddenError
from gryvia_cli.kube.errors import ConnectionLostError
from gryvia_cli.kube.retry import Link
from gryvia_cli.kube.watch import Backoff
from gryvia_cli.views import streams
from tests.unit.cli.fakes import FakeAccess
from tests.unit.cli.helpers import make_job, run
from tests.unit.cli.test_log_resume import LogServer

FAST = Backoff(initial=0.01, maximum=0.02)


@pytest.fixture(autouse=True)
def fast(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(streams, "POLL_SECONDS", 0.01)
    monkeypatch.setattr(streams, "DRAIN_SECONDS", 0.2)
    monkeypatch.setattr(streams, "Link", functools.partial(Link, backoff=FAST))


def failing(fake: FakeAccess, method: str, errors: list[Exception], after: int = 0) -> None:
    """Make `fake.<method>` raise `errors` (one per call) after `after` calls that work."""
    real, calls = getattr(fake, method), [0]

    def wrapped(*args: Any, **kw: Any) -> Any:
        calls[0] += 1
        if calls[0] > after and errors:
            raise errors.pop(0)
        return real(*args, **kw)

    setattr(fake, method, wrapped)


def lost() -> ConnectionLostError:
    return ConnectionLostError("cannot reach the API server", causes=("Read timed out.",))


def test_status_watch_reconnects_and_goes_on(monkeypatch: pytest.MonkeyPatch) -> None:
    from gryvia_cli.views import job as job_view

    fake = FakeAccess(make_job("run").phase("Running").obj())
    failing(fake, "get", [lost(), lost()], after=1)

    def tick(_seconds: float) -> None:
        job = next(o for o in fake.objects if o["metadata"]["name"] == "run")
        job["status"]["phase"] = "Succeeded"

    monkeypatch.setattr(job_view.time, "sleep", tick)
    result = run(["status", "run", "--watch"], fake)
    assert result.exit_code == 0, result.output
    assert "reconnecting to the API server (attempt 2, last error: Read timed out.)" in (
        result.stderr
    )
    assert "reconnected to the API server after 2 failed attempt(s)" in result.stderr
    assert "Phase:       Succeeded" in result.stdout


def test_queue_watch_reconnects_between_refreshes(monkeypatch: pytest.MonkeyPatch) -> None:
    from gryvia_cli.views import watching

    fake = FakeAccess(make_job("wait").gpus(8).gpu_type("B200").obj())
    failing(fake, "list_objects", [lost()], after=3)
    ticks = iter([None, None])

    def tick(_seconds: float) -> None:
        if next(ticks, "stop") == "stop":
            raise SystemExit(0)

    monkeypatch.setattr(watching.time, "sleep", tick)
    result = run(["queue", "-w", "2"], fake)
    assert result.stdout.count("wait") >= 3, result.output
    assert "reconnecting to the API server (attempt 1" in result.stderr
    assert "reconnected to the API server" in result.stderr


def test_submit_wait_reconnects_but_a_refusal_ends_it(tmp_path: Path) -> None:
    path = tmp_path / "a.yaml"
    path.write_text(
        "apiVersion: gryvia.io/v1alpha1\nkind: GryviaAIJob\nmetadata:\n  name: a\n"
        "spec:\n  type: training\n  gpus: 0\n  image: busybox\n  command: [sleep, '60']\n"
    )
    fake = FakeAccess()
    failing(fake, "get", [lost(), lost(), lost(), ForbiddenError("forbidden: cannot get a")])
    result = run(["submit", "-f", str(path), "--wait", "--wait-timeout", "1m"], fake)
    assert result.exit_code == 1, result.output
    assert result.stderr.count("reconnecting to the API server") == 3
    assert "error: forbidden: cannot get a" in result.stderr
    timed = FakeAccess()
    failing(timed, "get", [lost()] * 10_000)
    result = run(["submit", "-f", str(path), "--wait", "--wait-timeout", "1s"], timed)
    assert result.exit_code == 124, result.output
    assert "error: job a did not end before the wait timeout: the API server has not" in (
        result.stderr
    )


def test_all_replicas_resume_each_log_after_every_connection_was_cut() -> None:
    from tests.unit.cli.test_logs_follow import replica_pod

    fake = FakeAccess(make_job("a").phase("Succeeded").obj())
    servers = {}
    for index in (0, 1):
        pod = replica_pod("a", index, state="terminated")
        fake.add(pod)
        servers[pod["metadata"]["name"]] = LogServer(lines=20, cuts=3, every=6 + index)
    fake.pod_log = lambda pod, ns, **kw: servers[pod].pod_log(pod, ns, **kw)  # type: ignore[method-assign]
    said: list[str] = []
    out: list[str] = []
    targets = [streams.LogTarget(f"a-{n}-x", "c", f"[{n}] ") for n in (0, 1)]
    streams.follow_logs(fake, "ml", targets, out.append, link=Link(said.append, backoff=FAST))
    for n in (0, 1):
        assert [x for x in out if x.startswith(f"[{n}] ")] == [f"[{n}] line {i}" for i in range(20)]
    assert all(len(s.opens) >= 4 for s in servers.values())  # 3 cuts each, maybe a restart
    assert said[-1].startswith("reconnected to the API server")
    assert len([s for s in said if s.startswith("reconnecting")]) <= 6
