"""How another shell reaches the demo: the merged context and the exact export line."""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

import yaml

from gryvia_cli.sandbox.demo import reach_lines
from gryvia_cli.sandbox.kubeconfig import (
    export_line,
    merge,
    remove,
    server_of,
    write_sandbox_kubeconfig,
)
from tests.unit.cli.helpers import run
from tests.unit.sandbox.test_kubeconfig import _kwok_file


def test_reach_lines_name_the_context_and_end_with_the_export_line(tmp_path: Path) -> None:
    own = tmp_path / "demo home" / "kubeconfig"
    merged = reach_lines("gryvia-demo", own, Path("/root/.kube/config"), current=True)
    assert merged == [
        "context gryvia-demo is in /root/.kube/config (its current context): gryvia queue -A",
        "or point a shell at the demo alone:",
        f"  export KUBECONFIG='{own}'",
    ]
    other = reach_lines("gryvia-d2", own, Path("/k"), current=False)
    assert other[0] == "context gryvia-d2 is in /k (use --context gryvia-d2): gryvia queue -A"
    alone = reach_lines("gryvia-demo", own, None, current=False)
    assert alone == ["point a shell at the demo:", f"  export KUBECONFIG='{own}'"]


def test_the_export_line_is_exact_shell(tmp_path: Path) -> None:
    own = tmp_path / "a b" / "kube'config"
    line = export_line(own)
    assert line == f"export KUBECONFIG={shlex.quote(str(own))}"
    echoed = subprocess.run(
        ["sh", "-c", f'{line}; printf %s "$KUBECONFIG"'], capture_output=True, text=True, check=True
    )
    assert echoed.stdout == str(own)


def test_down_removes_only_the_context_of_its_own_server(tmp_path: Path) -> None:
    own = tmp_path / "demo.kubeconfig"
    write_sandbox_kubeconfig(_kwok_file(tmp_path / "kwok.yaml"), own, "gryvia-demo")
    user = tmp_path / "config"
    merge(own, user)
    server = server_of(own)
    assert server == "https://127.0.0.1:1"
    assert remove("gryvia-demo", user, server="https://127.0.0.1:2") == []
    assert [c["name"] for c in yaml.safe_load(user.read_text())["contexts"]] == ["gryvia-demo"]
    assert "removed context 'gryvia-demo' from " + str(user) in remove(
        "gryvia-demo", user, server=server
    )
    assert server_of(tmp_path / "missing") is None


def test_demo_commands_take_a_name(tmp_path: Path) -> None:
    env = {"GRYVIA_SANDBOX_HOME": str(tmp_path / "home")}
    down = run(["demo", "down", "--name", "demo2", "--yes"], **env)
    assert down.exit_code == 0 and "no demo named 'demo2' is running" in down.output
    bad = run(["demo", "up", "--name", "Bad_Name", "--no-tui"], **env)
    assert bad.exit_code == 1 and "--name 'Bad_Name' is not valid" in bad.output
