"""`gryvia model register|list|get|promote|rollback` through CliRunner with the fake access
layer (tests/integration/operator/test_model_registry.py runs them against the API server)."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from gryvia_cli.cli.session import Session
from gryvia_cli.core.modelregistries import build_version, parse_metrics
from gryvia_cli.kube import resources as r
from tests.unit.cli.fakes import FakeAccess

NOW = dt.datetime(2026, 12, 1, 21, 0, tzinfo=dt.UTC)


def run(args: list[str], fake: FakeAccess) -> Result:
    from gryvia_cli.main import app

    state = Session(access_factory=lambda _s: fake, clock=lambda: NOW)
    return CliRunner().invoke(app, args, obj=state)


def stored(fake: FakeAccess, name: str = "llm") -> dict[str, Any]:
    return fake.get(r.MODEL_REGISTRY, name, "ml")


def stages(fake: FakeAccess) -> dict[str, str]:
    return {v["version"]: v["stage"] for v in stored(fake)["spec"]["versions"]}


def test_build_version_and_flag_errors() -> None:
    body = build_version(
        "3",
        uri=None,
        pvc="ckpt:/llm/3",
        job=None,
        tuner="sweep",
        trial="sweep-t2",
        metrics=["accuracy=0.93"],
        stage="Staging",
        now=NOW,
    )
    assert body == {
        "version": "3",
        "artifacts": {"pvc": {"claimName": "ckpt", "path": "/llm/3"}},
        "stage": "Staging",
        "registeredAt": "2026-12-01T21:00:00Z",
        "source": {"kind": "GryviaAutoTuner", "name": "sweep", "trial": "sweep-t2"},
        "metrics": {"accuracy": 0.93},
    }
    base: dict[str, Any] = dict(
        uri="s3://x", pvc=None, job=None, tuner=None, trial=None, metrics=[], stage="None", now=NOW
    )
    with pytest.raises(ValueError, match="--uri or --pvc"):
        build_version("1", **(base | {"pvc": "c:/p"}))
    with pytest.raises(ValueError, match="--stage Production: register as None or Staging"):
        build_version("1", **(base | {"stage": "Production"}))
    with pytest.raises(ValueError, match="VERSION '-bad'"):
        build_version("-bad", **base)
    with pytest.raises(ValueError, match="--trial needs --tuner"):
        build_version("1", **(base | {"trial": "t"}))
    with pytest.raises(ValueError, match="NAME=NUMBER"):
        parse_metrics(["accuracy=high"])
    assert parse_metrics(["a=1", "b=2.5e-1"]) == {"a": 1.0, "b": 0.25}


def test_register_promote_rollback_and_policy_refusal() -> None:
    fake = FakeAccess()
    done = run(["model", "register", "llm", "1", "--uri", "s3://m/1", "--job", "ft-1"], fake)
    assert done.exit_code == 0, done.output
    assert stored(fake)["spec"]["modelName"] == "llm"
    done = run(
        ["model", "register", "llm", "2", "--uri", "s3://m/2", "--metric", "accuracy=0.8"], fake
    )
    assert done.exit_code == 0, done.output
    again = run(["model", "register", "llm", "2", "--uri", "s3://m/2"], fake)
    assert again.exit_code != 0 and "already registered" in again.output

    assert run(["model", "promote", "llm", "1", "--to", "Production", "--yes"], fake).exit_code == 0
    assert stages(fake) == {"1": "Production", "2": "None"}

    obj = stored(fake)
    obj["spec"]["promotionPolicy"] = {
        "fromStages": ["Staging"],
        "metrics": [{"metric": "accuracy", "min": 0.9}],
    }
    fake.objects = [obj]
    refused = run(["model", "promote", "llm", "2", "--yes"], fake)
    assert refused.exit_code != 0
    assert "spec.promotionPolicy.fromStages" in refused.output
    assert "promote it to Staging first" in refused.output
    assert run(["model", "promote", "llm", "2", "--to", "Staging"], fake).exit_code == 0
    low = run(["model", "promote", "llm", "2", "--yes"], fake)
    assert low.exit_code != 0 and "accuracy=0.8, below the minimum 0.9" in low.output
    assert stages(fake) == {"1": "Production", "2": "Staging"}  # nothing written

    obj = stored(fake)
    obj["spec"]["versions"][1]["metrics"] = {"accuracy": 0.95}
    fake.objects = [obj]
    assert run(["model", "promote", "llm", "2", "--yes"], fake).exit_code == 0
    assert stages(fake) == {"1": "Archived", "2": "Production"}
    assert stored(fake)["spec"]["productionHistory"] == ["1", "2"]

    back = run(["model", "rollback", "llm", "--yes"], fake)
    assert back.exit_code == 0, back.output
    assert stages(fake) == {"1": "Production", "2": "Archived"}
    nothing = run(["model", "rollback", "llm", "--yes"], fake)
    assert nothing.exit_code != 0 and "spec.productionHistory: no earlier" in nothing.output


def test_list_get_and_machine_output() -> None:
    fake = FakeAccess()
    run(["model", "register", "llm", "1", "--uri", "s3://m/1", "--metric", "acc=0.9"], fake)
    run(["model", "promote", "llm", "1", "--yes"], fake)
    listing = run(["model", "list"], fake)
    assert listing.exit_code == 0
    header, row = listing.stdout.splitlines()[:2]
    assert header.split() == ["NAME", "MODEL", "PRODUCTION", "SERVING", "PHASE", "VERSIONS", "AGE"]
    assert row.split()[:3] == ["llm", "llm", "1"]
    wide = run(["model", "list", "-A", "-o", "wide"], fake).stdout
    assert "NAMESPACE" in wide and "PREVIOUS" in wide
    names = run(["model", "list", "-o", "name"], fake).stdout.split()
    assert names == ["gryviamodelregistry.gryvia.io/llm"]
    data = json.loads(run(["model", "get", "llm", "-o", "json"], fake).stdout)
    assert data["spec"]["versions"][0]["stage"] == "Production"
    details = run(["model", "get", "llm"], fake).stdout
    assert "Version 1:" in details and "Production  s3://m/1  acc=0.9" in details
    missing = run(["model", "get", "nope"], fake)
    assert missing.exit_code != 0 and "gryvia model list" in missing.output
