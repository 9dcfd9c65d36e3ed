"""`gryvia sharing create|list|get|delete` through CliRunner with the fake access layer; the
body they apply is checked against the model (the operator's handling of a policy is proved
in tests/integration/operator/test_gpu_sharing.py)."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from gryvia_cli.cli.session import Session
from gryvia_cli.core.gpusharing import build_sharing_policy
from gryvia_cli.kube import resources as r
from tests.unit.cli.fakes import FakeAccess

NOW = dt.datetime(2026, 12, 3, 12, 0, tzinfo=dt.UTC)


def run(args: list[str], fake: FakeAccess, **kw: Any) -> Result:
    from gryvia_cli.main import app

    state = Session(access_factory=lambda _s: fake, clock=lambda: NOW)
    return CliRunner().invoke(app, args, obj=state, **kw)


def test_time_slicing_and_mig_bodies() -> None:
    body = build_sharing_policy("pool", "time-slicing", ["pool=serve"], replicas=4)
    assert body["spec"] == {
        "strategy": "time-slicing",
        "nodeSelector": {"matchLabels": {"pool": "serve"}},
        "timeSlicing": {
            "replicas": 4,
            "renameByDefault": False,
            "failRequestsGreaterThanOne": False,
        },
    }
    mig = build_sharing_policy("m", "mig", [], mig_config="all-balanced")
    assert mig["spec"] == {
        "strategy": "mig",
        "nodeSelector": {"matchLabels": {}},
        "mig": {"config": "all-balanced"},
    }


@pytest.mark.parametrize(
    ("args", "kwargs", "says"),
    [
        (("time-slicing", []), {}, "--replicas: time-slicing needs"),
        (("time-slicing", []), {"replicas": 1}, "spec.timeSlicing.replicas"),
        (("time-slicing", []), {"replicas": 65}, "spec.timeSlicing.replicas"),
        (("mig", []), {"replicas": 4}, "--replicas: only with --strategy time-slicing"),
        (("mig", []), {"mig_config": "All 1g"}, "spec.mig.config"),
        (("mps", []), {}, "--strategy mps: use time-slicing or mig"),
        (("mig", ["pool"]), {}, "--node-selector 'pool': use KEY=VALUE"),
    ],
)
def test_bad_options_name_the_option_or_field(
    args: tuple[str, list[str]], kwargs: dict[str, Any], says: str
) -> None:
    with pytest.raises(ValueError) as info:
        build_sharing_policy("x", *args, **kwargs)
    assert says in str(info.value)


def test_create_list_get_delete() -> None:
    fake = FakeAccess()
    made = run(
        ["sharing", "create", "pool", "--strategy", "time-slicing", "--replicas", "4",
         "-l", "pool=serve", "-o", "json"],
        fake,
    )  # fmt: skip
    assert made.exit_code == 0, made.output
    assert json.loads(made.stdout)["spec"]["timeSlicing"]["replicas"] == 4
    for stored in fake._of(r.GPU_SHARING_POLICY):  # what the operator writes
        stored["status"] = {
            "configName": "pool",
            "nodes": ["gpu-h100-0"],
            "conditions": [{"type": "Ready", "status": "True", "reason": "Applied"}],
        }
    listed = run(["sharing", "list"], fake)
    assert listed.exit_code == 0, listed.output
    header, row = listed.stdout.splitlines()[:2]
    assert header.split()[:3] == ["NAME", "STRATEGY", "SHARING"]
    assert row.split()[:4] == ["pool", "time-slicing", "4", "replicas"]
    assert "gpu-h100-0" in row and "Applied" in row
    shown = run(["sharing", "get", "pool"], fake)
    assert shown.exit_code == 0, shown.output
    assert "4 nvidia.com/gpu units per physical GPU" in shown.stdout
    gone = run(["sharing", "get", "nope"], fake)
    assert gone.exit_code != 0 and "see 'gryvia sharing list'" in gone.output
    deleted = run(["sharing", "delete", "pool", "--yes"], fake)
    assert deleted.exit_code == 0, deleted.output
    assert f"{r.GPU_SHARING_POLICY.qualified}/pool" in deleted.stdout
    assert run(["sharing", "list"], fake).stdout.strip() == ""


def test_a_bad_option_exits_2_and_writes_nothing() -> None:
    fake = FakeAccess()
    done = run(["sharing", "create", "pool", "--strategy", "time-slicing"], fake)
    assert done.exit_code == 2
    assert "--replicas" in done.output
    assert run(["gpusharing", "list", "-o", "json"], fake).stdout.count('"items": []') == 1
