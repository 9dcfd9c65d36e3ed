"""The demo's Kueue mode: which mode it runs in and the ClusterQueue table of `demo check`."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gryvia_cli.errors import GryviaError
from gryvia_cli.sandbox import demokueue, kueue
from gryvia_cli.sandbox.demo import clause_with
from gryvia_cli.sandbox.sandboxes import Sandbox


@pytest.fixture
def box(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Sandbox:
    monkeypatch.setenv("GRYVIA_SANDBOX_HOME", str(tmp_path))
    return Sandbox("demo")


def _running(box: Sandbox, *, with_kueue: bool) -> None:
    """Pid files of live processes (this test's own pid) for a running demo."""
    pids = box.workdir / "pids"
    pids.mkdir(parents=True)
    (pids / "kube-apiserver.pid").write_text(str(os.getpid()))
    if with_kueue:
        (pids / f"{kueue.KUEUE}.pid").write_text(str(os.getpid()))


def test_default_is_on_when_kueue_can_run_else_off_saying_why_and_how(
    box: Sandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    said: list[str] = []
    monkeypatch.setattr(kueue, "missing", lambda: "")
    assert demokueue.choose(None, box, said.append) is True
    assert demokueue.choose(False, box, said.append) is False
    assert said == []
    monkeypatch.setattr(kueue, "missing", lambda: "--kueue needs root and 'unshare'")
    assert demokueue.choose(None, box, said.append) is False
    assert said == [
        "Kueue off: --kueue needs root and 'unshare'; for the demo with Kueue build it "
        "('make kueue-bin') and run as root"
    ]
    with pytest.raises(GryviaError, match="--kueue: --kueue needs root"):
        demokueue.choose(True, box, said.append)


@pytest.mark.parametrize("with_kueue", [True, False])
def test_a_running_demo_keeps_its_mode_and_refuses_the_other(
    box: Sandbox, monkeypatch: pytest.MonkeyPatch, with_kueue: bool
) -> None:
    monkeypatch.setattr(kueue, "missing", lambda: "")
    _running(box, with_kueue=with_kueue)
    assert demokueue.running(box) is with_kueue
    assert demokueue.choose(None, box, print) is with_kueue
    assert demokueue.choose(with_kueue, box, print) is with_kueue
    now = "with" if with_kueue else "without"
    with pytest.raises(GryviaError, match=f"runs {now} Kueue"):
        demokueue.choose(not with_kueue, box, print)


def _flavor(name: str, gpus: int) -> dict[str, object]:
    return {
        "name": name,
        "resources": [
            {"name": "nvidia.com/gpu", "nominalQuota": gpus},
            {"name": "cpu", "nominalQuota": "100000"},
        ],
    }


def test_rows_show_workloads_and_gpus_used_over_nominal_per_flavor() -> None:
    vision = {
        "metadata": {"name": "gryvia-vision"},
        "spec": {
            "cohortName": "gryvia",
            "resourceGroups": [
                {
                    "flavors": [
                        _flavor("gryvia-a100-80g", 8),
                        _flavor("gryvia-l40", 8),
                        _flavor("gryvia-default", 0),
                    ]
                }
            ],
        },
        "status": {
            "admittedWorkloads": 1,
            "pendingWorkloads": 1,
            "flavorsReservation": [
                {
                    "name": "gryvia-a100-80g",
                    "resources": [
                        {"name": "cpu", "total": "2"},
                        {"name": "nvidia.com/gpu", "total": "8"},
                    ],
                }
            ],
        },
    }
    bare = {"metadata": {"name": "gryvia-new"}, "spec": {}}
    assert demokueue.rows_of([vision, bare]) == [
        ["gryvia-new", "-", "0", "0", "-"],
        ["gryvia-vision", "gryvia", "1", "1", "gryvia-a100-80g 8/8, gryvia-l40 0/8"],
    ]


def test_a_long_message_shows_the_clause_with_the_checked_word() -> None:
    kueue_reason = (
        "Queued by Kueue: couldn't assign flavors to pod set main: flavor gryvia-default "
        "doesn't match node affinity, insufficient unused quota for nvidia.com/gpu in flavor "
        "gryvia-a100-80g, 8 more needed"
    )
    assert clause_with(kueue_reason, "quota") == (
        "...insufficient unused quota for nvidia.com/gpu in flavor gryvia-a100-80g, 8 more needed"
    )
    short = "waiting for quota: team vision uses 8 of 8 GPUs, this job needs 8"
    assert clause_with(short, "quota") == short
    assert clause_with(kueue_reason, "absent") == kueue_reason
