"""`gryvia reservation create|list|get|delete` through CliRunner with the fake access layer
(tests/integration/operator/test_reservations.py runs them against the real API server)."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from gryvia_cli.cli.session import Session
from gryvia_cli.core.reservations import build_reservation
from gryvia_cli.kube import resources as r
from tests.builders import make_node
from tests.unit.cli.fakes import FakeAccess

NOW = dt.datetime(2026, 12, 1, 21, 0, tzinfo=dt.UTC)


def run(args: list[str], fake: FakeAccess, **kw: Any) -> Result:
    from gryvia_cli.main import app

    state = Session(access_factory=lambda _s: fake, clock=lambda: NOW)
    return CliRunner().invoke(app, args, obj=state, **kw)


def test_build_immediate_scheduled_and_recurring() -> None:
    body = build_reservation("a", owner="team:ml", now=NOW, gpu_type="H100", gpus=8, duration="2h")
    assert body["spec"] == {
        "owner": {"type": "team", "name": "ml"},
        "resources": {"gpuType": "H100", "gpuCount": 8},
        "schedule": {"type": "immediate", "endTime": "2026-12-01T23:00:00Z"},
    }
    sched = build_reservation(
        "b",
        owner="tenant:acme",
        now=NOW,
        nodes=["n2", "n1", "n2"],
        start="2026-12-02T08:00:00Z",
        end="2026-12-02T20:00:00Z",
        exclusive=True,
    )
    assert sched["spec"]["resources"] == {"nodes": ["n2", "n1"]}
    assert sched["spec"]["schedule"] == {
        "type": "scheduled",
        "startTime": "2026-12-02T08:00:00Z",
        "endTime": "2026-12-02T20:00:00Z",
    }
    assert sched["spec"]["guarantees"] == {"exclusive": True}
    rec = build_reservation(
        "c",
        owner="namespace:r",
        now=NOW,
        gpu_type="L40",
        gpus=4,
        cron="0 22 * * 1-5",
        duration="8h",
    )
    assert rec["spec"]["schedule"] == {
        "type": "recurring",
        "recurrence": {"cron": "0 22 * * 1-5", "duration": "8h"},
    }


@pytest.mark.parametrize(
    ("kwargs", "says"),
    [
        ({"owner": "user:bob", "gpu_type": "H100", "gpus": 8, "duration": "1h"}, "--owner"),
        ({"owner": "team:ml", "duration": "1h"}, "--gpu-type and --gpus"),
        ({"owner": "team:ml", "gpu_type": "H100", "gpus": 8}, "--end TIME or --duration"),
        ({"owner": "team:ml", "gpu_type": "H100", "gpus": 8, "cron": "0 22 * * MON"}, "--cron"),
        ({"owner": "team:ml", "gpu_type": "H100", "gpus": 8, "cron": "0 22 * * *"}, "--duration"),
        ({"owner": "team:ml", "gpu_type": "H100", "gpus": 8, "duration": "soon"}, "--duration"),
        (
            {"owner": "team:ml", "gpu_type": "H100", "gpus": 8, "end": "2026-12-01T20:00:00Z"},
            "must be after",
        ),
        (
            {
                "owner": "team:ml",
                "gpu_type": "H100",
                "gpus": 8,
                "node": ["gpu-7"],
                "duration": "1h",
            },
            "leave out --gpu-type and --gpus",
        ),
        ({"owner": "team:ml", "gpus": 8, "node": ["gpu-7"], "duration": "1h"}, "--node holds"),
        (
            {
                "owner": "team:ml",
                "gpu_type": "H100",
                "gpus": 8,
                "end": "2026-12-02T08:00:00Z",
                "duration": "1h",
            },
            "not both",
        ),
        (
            {
                "owner": "team:ml",
                "gpu_type": "H100",
                "gpus": 8,
                "start": "2026-12-01T10:00:00Z",
                "end": "2026-12-01T11:00:00Z",
            },
            "before now",
        ),
        (
            {
                "owner": "team:ml",
                "node": ["gpu-7"],
                "cron": "0 22 * * *",
                "duration": "8h",
                "end": "2026-11-30T00:00:00Z",
            },
            "before now",
        ),
    ],
)
def test_bad_options_name_the_option(kwargs: dict[str, Any], says: str) -> None:
    with pytest.raises(ValueError, match=None) as info:
        node = kwargs.pop("node", ())
        build_reservation("x", now=NOW, nodes=node, **kwargs)
    assert says in str(info.value)


def test_create_list_get_delete() -> None:
    fake = FakeAccess(make_node("gpu-h100-0").gpus(8).gpu_type("H100").obj())
    args = ["reservation", "create", "night", "--owner", "team:ml", "--gpu-type", "H100"]
    done = run([*args, "--gpus", "8", "--duration", "1h", "-o", "json"], fake)
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["spec"]["schedule"]["endTime"] == "2026-12-01T22:00:00Z"
    stored = fake.get(r.RESERVATION, "night")
    stored["status"] = {
        "state": "active",
        "allocatedNodes": ["gpu-h100-0"],
        "allocatedGPUs": 8,
        "actualStartTime": "2026-12-01T21:00:05Z",
    }
    for obj in fake._of(r.RESERVATION):
        obj["status"] = stored["status"]
    listed = run(["reservation", "list"], fake)
    assert listed.exit_code == 0, listed.output
    assert "night" in listed.stdout and "team:ml" in listed.stdout and "gpu-h100-0" in listed.stdout
    shown = run(["reservation", "get", "night"], fake)
    assert "annotate jobs gryvia.io/reservation: night" in shown.stdout
    assert "Owner:" in shown.stdout and "team:ml" in shown.stdout  # written as list writes it
    assert "Nodes held:" in shown.stdout and "gpu-h100-0" in shown.stdout
    missing = run(["reservation", "get", "nope"], fake)
    assert missing.exit_code != 0 and "gryvia reservation list" in missing.output
    gone = run(["reservation", "delete", "night", "--yes"], fake)
    assert gone.exit_code == 0, gone.output
    assert "No reservations found." in run(["reservation", "list"], fake).output
    bad = run([*args, "--gpus", "8"], fake)
    assert bad.exit_code == 2 and "--duration" in bad.output


def test_create_refuses_a_gpu_type_no_node_carries() -> None:
    fake = FakeAccess(make_node("gpu-a100-0").gpus(8).gpu_type("A100-80G").obj())
    args = ["reservation", "create", "x", "--owner", "team:ml", "--gpus", "8", "--duration", "1h"]
    for wanted in ("A100-40G", "L40"):
        refused = run([*args, "--gpu-type", wanted], fake)
        assert refused.exit_code == 2, refused.output
        assert f"--gpu-type {wanted}: no node carries this GPU type" in refused.output
        assert "GPU types of the cluster's nodes: A100-80G" in refused.output
    assert not fake._of(r.RESERVATION)
    assert run([*args, "--gpu-type", "a100-80g"], fake).exit_code == 0
    # the family names every variant (issue 39): an A100-80G node holds an `a100` reservation
    assert run(["reservation", "create", "y", *args[3:], "--gpu-type", "a100"], fake).exit_code == 0
