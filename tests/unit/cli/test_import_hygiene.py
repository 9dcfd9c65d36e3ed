"""Start-up stays light: `gryvia --help` imports no kubernetes, textual, kopf or pydantic,
and gryvia_cli/core imports no edge libraries at all."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import gryvia_cli

HEAVY = ("kubernetes", "textual", "kopf", "pydantic", "gryvia_operator", "urllib3")
PROBE = """
import json, sys
sys.argv = ["gryvia", "--help"]
from gryvia_cli.main import main
try:
    main()
except SystemExit:
    pass
print(json.dumps(sorted({m.split(".")[0] for m in sys.modules})), file=sys.stderr)
"""


def test_help_imports_nothing_heavy() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=60, check=True
    )
    loaded = set(json.loads(proc.stderr.strip().splitlines()[-1]))
    assert "Workloads:" in proc.stdout
    assert not loaded & set(HEAVY), loaded & set(HEAVY)


def test_help_via_module_entry_point() -> None:
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "gryvia_cli", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0
    imported = {
        line.split("|")[-1].strip().split(".")[0]
        for line in proc.stderr.splitlines()
        if "|" in line
    }
    assert not imported & {"kubernetes", "textual", "kopf"}


def test_core_imports_no_edge_libraries() -> None:
    core = Path(gryvia_cli.__file__).parent / "core"
    forbidden = ("kubernetes", "typer", "textual", "kopf", "rich", "click", "urllib3")
    for path in sorted(core.glob("*.py")):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            for name in names:
                assert name.split(".")[0] not in forbidden, f"{path.name} imports {name}"
                assert not name.startswith("gryvia_cli.") or name.startswith(
                    ("gryvia_cli.core", "gryvia_cli.errors")
                ), f"{path.name} imports {name}"


def test_every_command_module_is_in_the_independence_contract() -> None:
    import tomllib

    root = Path(gryvia_cli.__file__).parents[1]
    contracts = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["importlinter"][
        "contracts"
    ]
    independent = next(
        c["modules"]
        for c in contracts
        if c["type"] == "independence" and c["modules"][0].startswith("gryvia_cli.commands.")
    )
    commands = root / "gryvia_cli" / "commands"
    on_disk = sorted(f"gryvia_cli.commands.{p.stem}" for p in commands.glob("[!_]*.py"))
    assert sorted(independent) == on_disk
    assert not [p for p in commands.iterdir() if p.is_dir() and p.name != "__pycache__"]


READ_PROBE = """
import json, sys
sys.argv = ["gryvia", *sys.argv[1:], "list", "jobs", "-A", "-o", "json"]
from gryvia_cli.main import main
try:
    main()
except SystemExit:
    pass
print(json.dumps(sorted({m.split(".")[0] for m in sys.modules})), file=sys.stderr)
"""


@pytest.mark.parametrize("flag", [False, True], ids=["KUBECONFIG", "--kubeconfig"])
def test_a_read_with_static_credentials_imports_neither_the_client_nor_pydantic(
    tmp_path: Path, flag: bool
) -> None:
    """A token kubeconfig takes the light client (`kube.transport`); `list jobs` runs without
    Typer (`cli.fastpath`), settings are plain."""
    from tests.support.ports import free_port

    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        json.dumps(
            {
                "clusters": [
                    {"name": "c", "cluster": {"server": f"https://127.0.0.1:{free_port()}"}}
                ],
                "users": [{"name": "u", "user": {"token": "t"}}],
                "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
                "current-context": "x",
            }
        )
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRYVIA_")}
    env.update(GRYVIA_CONFIG_HOME=str(tmp_path / "config"), KUBECONFIG=str(kubeconfig))
    proc = subprocess.run(
        [sys.executable, "-c", READ_PROBE, *(["--kubeconfig", str(kubeconfig)] if flag else [])],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert "cannot reach the API server" in proc.stderr, proc.stderr
    loaded = set(json.loads(proc.stderr.strip().splitlines()[-1]))
    assert not loaded & {"kubernetes", "pydantic", "pydantic_settings", "rich"}, loaded
    # the start-up fast path (`cli.fastpath`) on `http.client` (`kube.lighthttp`), and a JSON
    # kubeconfig read with `json`
    assert not loaded & {"typer", "click", "urllib3", "yaml"}, loaded
