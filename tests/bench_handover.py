"""Two operator replicas with leader election at the chart's timings (lease 15 s, renew
deadline 10 s, retry 2 s): how long a hand-over takes after the leader is SIGKILLed (5 kills,
each in the middle of a burst of jobs) and after a graceful stop (3 stops), and whether the
bursts lost or duplicated anything (every job exactly one child Job); then one burst of 500
jobs that run, through 5 more SIGKILLs: every job exactly one child Job and one usage record.

Per hand-over it prints the seconds until the other replica held the Lease and until it had
reconciled a job created right after the stop (its child Job exists). Targets (issue 40):
reconciling again within 20 s of a kill, the Lease taken within 3 s of a graceful stop.
`python -m tests.bench_handover` (about three minutes).
"""

from __future__ import annotations

import functools
import json
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

from tests.bench_operator import _job, start_operator
from tests.support.benchbox import BenchBox, kubectl_run, operator_sandbox

NS = "bench"
LEASE = "gryvia-operator"
ELECTION = ("--leader-election", f"--leader-election-namespace={NS}", "--webhook-port=0")
KILLS, STOPS, BURST = 5, 3, 40
LONG_BURST = 500
"""Jobs of the one long burst that runs through all five kills (issue 40's acceptance)."""


def _kubectl_json(box: BenchBox, *args: str) -> dict[str, Any]:
    out = subprocess.run(
        [*box.kubectl, *args, "-o", "json"], capture_output=True, text=True, check=True
    )
    found: dict[str, Any] = json.loads(out.stdout)
    return found


def _holder_pid(box: BenchBox) -> int | None:
    """The pid in the Lease holder's identity (`host_pid_suffix`), None while nobody holds it."""
    try:
        spec = _kubectl_json(box, "get", "lease", LEASE, "-n", NS)["spec"]
    except subprocess.CalledProcessError:
        return None
    holder = str(spec.get("holderIdentity") or "")
    return int(holder.split("_")[1]) if holder else None


def _create(box: BenchBox, *names: str) -> None:
    body = {"apiVersion": "v1", "kind": "List", "items": [_job(n) for n in names]}
    kubectl_run(box.kubectl, "create", "-f", "-", body=body)


def _children(box: BenchBox) -> Counter[str]:
    items = _kubectl_json(box, "get", "jobs.batch", "-n", NS, "-l", "gryvia.io/job")["items"]
    return Counter(i["metadata"]["labels"]["gryvia.io/job"] for i in items)


def _replica(box: BenchBox, name: str) -> subprocess.Popen[bytes]:
    """Start one replica in the election (its log in `<workdir>/replica-NAME/`); it is ready
    as a leader or a standby."""
    workdir = box.workdir / f"replica-{name}"
    workdir.mkdir()
    proc, _, _ = start_operator(box.kubeconfig, workdir, ELECTION, ready_within=120)
    return proc


def _until(check: Callable[[], bool], timeout: float = 60) -> float:
    """Seconds until `check()` is true (RuntimeError after `timeout`)."""
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        if check():
            return time.monotonic() - start
        time.sleep(0.05)
    raise RuntimeError(f"not within {timeout} s")


def _feed(box: BenchBox, names: list[str], created: list[str]) -> None:
    """Create the jobs one by one, about 20 a second, appending each name to `created`."""
    for name in names:
        _create(box, name)
        created.append(name)
        time.sleep(0.05)  # the burst's pace, not a wait for a condition


def _hand_over(
    box: BenchBox, replicas: list[subprocess.Popen[bytes]], label: str, *, kill: bool
) -> tuple[float, float]:
    """Stop the leader (SIGKILL or SIGTERM) in the middle of a burst; (seconds until the
    other replica holds the Lease, seconds until a job created right after the stop has its
    child Job). A new standby replaces the stopped replica."""
    leader = next(p for p in replicas if p.pid == _holder_pid(box))
    other = next(p for p in replicas if p is not leader)
    created: list[str] = []
    names = [f"{label}-b{i:03d}" for i in range(BURST)]
    feeder = threading.Thread(target=_feed, args=(box, names, created))
    feeder.start()
    _until(lambda: len(created) >= BURST // 2)  # the leader stops mid-burst
    stopped = time.monotonic()
    if kill:
        leader.kill()
    else:
        leader.terminate()
    leader.wait()
    probe = f"{label}-probe"
    _create(box, probe)
    _until(lambda: _holder_pid(box) == other.pid)
    lease = time.monotonic() - stopped
    _until(lambda: _children(box)[probe] == 1)
    reconciled = time.monotonic() - stopped
    feeder.join()
    replicas.remove(leader)
    replicas.append(_replica(box, f"{label}-next"))
    return lease, reconciled


def _running_job(name: str) -> dict[str, Any]:
    """A job that runs (a pod that exits at once), so that it is metered: one usage record."""
    job = _job(name)
    job["spec"]["suspend"] = False
    return job


def _records(box: BenchBox) -> Counter[str]:
    items = _kubectl_json(box, "get", "gryviausagerecords", "-n", NS)["items"]
    return Counter(i["spec"]["job"] for i in items if i["spec"]["job"].startswith("long-"))


def _finished(box: BenchBox) -> int:
    items = _kubectl_json(box, "get", "gryviaaijobs", "-n", NS)["items"]
    done = ("Succeeded", "Failed")
    return sum(
        1
        for i in items
        if i["metadata"]["name"].startswith("long-")
        and (i.get("status") or {}).get("phase") in done
    )


def _at_least(created: list[str], count: int) -> bool:
    return len(created) >= count


def _has_child(box: BenchBox, name: str) -> bool:
    return _children(box)[name] == 1


def _long_burst(box: BenchBox, replicas: list[subprocess.Popen[bytes]]) -> list[float]:
    """One burst of LONG_BURST running jobs, created about 5 a second, through KILLS SIGKILLs
    of the leader (one each 100 jobs, a new standby started after each); the seconds until a
    job created right after each kill had its child Job."""
    names = [f"long-{i:04d}" for i in range(LONG_BURST)]
    created: list[str] = []

    def feed() -> None:
        for name in names:
            kubectl_run(box.kubectl, "create", "-f", "-", body=_running_job(name))
            created.append(name)
            time.sleep(0.1)  # the burst's pace, not a wait for a condition

    feeder = threading.Thread(target=feed)
    feeder.start()
    times: list[float] = []
    for k in range(KILLS):
        _until(functools.partial(_at_least, created, 50 + 100 * k), 300)
        leader = next(p for p in replicas if p.pid == _holder_pid(box))
        leader.kill()
        stopped = time.monotonic()
        leader.wait()
        probe = f"long-probe{k}"
        kubectl_run(box.kubectl, "create", "-f", "-", body=_running_job(probe))
        _until(functools.partial(_has_child, box, probe))
        times.append(time.monotonic() - stopped)
        replicas.remove(leader)
        replicas.append(_replica(box, f"long-{k}"))
    feeder.join()
    return times


def _long_burst_report(box: BenchBox, times: list[float]) -> None:
    """Wait for every job of the long burst to finish, then print the hand-over times and
    the jobs lost or doubled: children (Jobs) and usage records."""
    total = LONG_BURST + KILLS
    _until(lambda: sum(1 for n in _children(box) if n.startswith("long-")) >= total, 300)
    _until(lambda: _finished(box) >= total, 600)
    _until(lambda: len(_records(box)) >= total, 120)
    children = {n: c for n, c in _children(box).items() if n.startswith("long-")}
    records = _records(box)
    print(f"one burst of {LONG_BURST} running jobs (+{KILLS} probes) through {KILLS} SIGKILLs")
    print("  reconciling again after each kill (s): " + " ".join(f"{t:.1f}" for t in times))
    print(
        f"  jobs {total}: without a child Job {total - len(children)}, with more than one "
        f"{sum(1 for c in children.values() if c > 1)}; without a usage record "
        f"{total - len(records)}, with more than one {sum(1 for c in records.values() if c > 1)}"
    )


def main() -> int:
    """Run the kills and stops on a fresh sandbox and print the hand-over times."""
    rows: list[tuple[str, float, float]] = []
    with operator_sandbox("ho", "1xcpu", [NS]) as box:
        box.operator.kill()
        box.operator.wait()
        replicas = [_replica(box, "a")]
        replicas.append(_replica(box, "b"))
        try:
            for i in range(KILLS):
                rows.append(("SIGKILL", *_hand_over(box, replicas, f"k{i}", kill=True)))
            for i in range(STOPS):
                rows.append(("SIGTERM", *_hand_over(box, replicas, f"s{i}", kill=False)))
            _until(lambda: sum(_children(box).values()) >= (KILLS + STOPS) * (BURST + 1), 120)
            children = _children(box)
            long_times = _long_burst(box, replicas)
            _long_burst_report(box, long_times)
        finally:
            for proc in replicas:
                proc.kill()
    jobs = (KILLS + STOPS) * (BURST + 1)
    lost = jobs - len(children)
    doubled = sum(1 for n in children.values() if n > 1)
    print("leader hand-over, two replicas, lease 15 s / renew 10 s / retry 2 s (seconds)")
    print(f"{'stop':>8} {'lease':>7} {'reconciling':>12}")
    for how, lease, reconciled in rows:
        print(f"{how:>8} {lease:7.2f} {reconciled:12.2f}")
    kills = [r for h, _, r in rows if h == "SIGKILL"]
    stops = [lease for h, lease, _ in rows if h == "SIGTERM"]
    print(f"after SIGKILL: reconciling again within {max(kills):.1f} s (target 20 s)")
    print(f"after SIGTERM: Lease taken within {max(stops):.2f} s (target 3 s)")
    print(f"burst jobs: {jobs}, lost {lost}, with more than one child Job {doubled}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
