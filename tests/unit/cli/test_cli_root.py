"""The root command: help sections, lazy registry, aliases, global options, exit codes."""

from __future__ import annotations

import subprocess
import sys

import pytest
import typer

from gryvia_cli.cli.group import GryviaGroup, hoist_global_options
from gryvia_cli.errors import EXIT_CODES, GryviaError
from gryvia_cli.main import COMMANDS, app
from tests.unit.cli.fakes import FakeAccess
from tests.unit.cli.helpers import make_job, run


def test_help_groups_commands_by_section() -> None:
    result = run(["--help"])
    assert result.exit_code == 0
    out = result.output
    assert out.index("Workloads:") < out.index("Cluster:") < out.index("Utilities:")
    for name in ("submit", "queue", "capacity", "catalog", "config", "completion", "sandbox"):
        assert f"  {name}" in out
    assert "  ls " not in out and "  rm " not in out


@pytest.mark.parametrize(("entry", "aliases"), COMMANDS, ids=lambda e: getattr(e, "name", ""))
def test_registry_short_help_matches_the_command(entry, aliases) -> None:  # type: ignore[no-untyped-def]
    root = typer.main.get_command(app)
    command = root.get_command(typer.Context(root), entry.name)
    assert command is not None
    assert command.get_short_help_str(200) == entry.short_help
    for alias in aliases:
        assert root.get_command(typer.Context(root), alias) is not None


def test_aliases_and_singular_nouns() -> None:
    fake = FakeAccess(make_job("a").obj())
    assert run(["ls", "jobs", "-o", "name"], fake).output == "gryviaaijob.gryvia.io/a\n"
    assert run(["list", "job", "-o", "name"], fake).output == "gryviaaijob.gryvia.io/a\n"


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["status", "--context", "prod"], ["--context", "prod", "status"]),
        (["logs", "j", "-v", "--kubeconfig=/k"], ["-v", "--kubeconfig=/k", "logs", "j"]),
        (["-n", "x", "list", "jobs", "--no-color"], ["--no-color", "-n", "x", "list", "jobs"]),
        (["sandbox", "up", "--kubeconfig", "k"], ["sandbox", "up", "--kubeconfig", "k"]),
        (["logs", "j", "--", "-v"], ["logs", "j", "--", "-v"]),
        (["--help"], ["--help"]),
    ],
)
def test_global_options_after_the_command_are_hoisted(args: list[str], expected: list[str]) -> None:
    assert hoist_global_options(args) == expected


def test_namespace_and_output_work_before_and_after_the_command() -> None:
    fake = FakeAccess(make_job("a", "team").obj(), make_job("b", "ml").obj())
    assert (
        run(["-n", "team", "-o", "name", "list", "jobs"], fake).output
        == "gryviaaijob.gryvia.io/a\n"
    )
    assert (
        run(["list", "jobs", "-n", "team", "-o", "name"], fake).output
        == "gryviaaijob.gryvia.io/a\n"
    )
    assert (
        run(["list", "jobs", "-o", "name"], fake, GRYVIA_NAMESPACE="team").output
        == "gryviaaijob.gryvia.io/a\n"
    )
    assert run(["list", "jobs"], fake, GRYVIA_OUTPUT="name").output == "gryviaaijob.gryvia.io/b\n"


def test_usage_errors_exit_2_and_expected_errors_exit_1() -> None:
    assert run(["list", "jobs", "--bogus"]).exit_code == 2
    assert run(["frobnicate"]).exit_code == 2
    assert run(["list", "jobs"], GRYVIA_OUTPUT="xml").exit_code == 2
    result = run(["get", "widget", "x"], FakeAccess())
    assert result.exit_code == 2 and 'unknown resource type "widget"' in result.output
    missing = run(["get", "job", "nope"], FakeAccess())
    assert missing.exit_code == 1
    assert 'error: job "nope" not found in namespace "ml"' in missing.output
    assert "hint: gryvia list jobs -n ml" in missing.output
    assert "Traceback" not in missing.output


def test_no_kubeconfig_is_one_line_and_a_hint() -> None:
    result = run(["list", "jobs"])
    assert result.exit_code == 1
    assert result.output.splitlines()[0].startswith("error: no kubeconfig found")
    assert "hint: point KUBECONFIG at your cluster, or pass --context <name>" in result.output


def test_verbose_shows_details_and_ctrl_c_exits_130(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeAccess()

    def boom(*_a: object, **_k: object) -> None:
        raise GryviaError("bad", details=("raw status body",))

    monkeypatch.setattr(fake, "list_objects", boom)
    assert "detail: raw status body" not in run(["list", "jobs", "-o", "table"], fake).output
    assert "detail: raw status body" in run(["-v", "list", "jobs", "-o", "table"], fake).output

    def interrupt(*_a: object, **_k: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(fake, "list_objects", interrupt)
    assert run(["list", "jobs", "-o", "table"], fake).exit_code == 130


def test_exit_code_table_is_complete() -> None:
    assert [code for code, _ in EXIT_CODES] == [0, 1, 2, 3, 4, 5, 124, 130]  # 3 never, 4 wait


def test_version_flag_and_completion_scripts() -> None:
    assert run(["--version"]).output.startswith("gryvia ")
    for shell, marker in (
        ("bash", "complete"),
        ("zsh", "compdef"),
        ("fish", "complete --command gryvia"),
    ):
        result = run(["completion", shell])
        assert (
            result.exit_code == 0
            and marker in result.output
            and "_GRYVIA_COMPLETE" in result.output
        )
    assert run(["completion", "tcsh"]).exit_code == 2


def test_shell_completion_lists_commands() -> None:
    env = {"_GRYVIA_COMPLETE": "complete_bash", "COMP_WORDS": "gryvia ca", "COMP_CWORD": "1"}
    proc = subprocess.run(
        [sys.executable, "-c", "from gryvia_cli.main import main; main()"],
        env={**__import__("os").environ, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "cancel" in proc.stdout and "capacity" in proc.stdout and "catalog" in proc.stdout


def test_lazy_registry_loads_modules_on_demand() -> None:
    assert "sandbox" in GryviaGroup.lazy and GryviaGroup.aliases["ls"] == "list"
