"""`up` starts again only when a component lost its port to another process."""

from __future__ import annotations

from pathlib import Path

import pytest

from gryvia_cli.sandbox import cluster
from gryvia_cli.sandbox.sandboxes import Sandbox


@pytest.fixture
def box(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Sandbox:
    monkeypatch.setenv("GRYVIA_SANDBOX_HOME", str(tmp_path))
    found = Sandbox("race")
    (found.workdir / "logs").mkdir(parents=True)
    return found


def test_a_taken_port_in_any_component_log_is_a_lost_race(box: Sandbox) -> None:
    logs = box.workdir / "logs"
    (logs / "etcd.log").write_text('{"level":"info","msg":"ready"}\n')
    assert not cluster._lost_port_race(box)
    (logs / "kwok-controller.log").write_text(
        '{"level":"ERROR","msg":"Failed to run server",'
        '"err":"listen tcp 127.0.0.1:32757: bind: address already in use"}\n'
    )
    assert cluster._lost_port_race(box)


def test_no_logs_is_no_race(box: Sandbox) -> None:
    assert not cluster._lost_port_race(box)
