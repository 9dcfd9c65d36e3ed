"""The output module (tables, colour rules, error lines) and the generated CLI reference."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest

from gryvia_cli import output
from gryvia_cli.core.cells import Marked
from gryvia_cli.errors import GryviaError

ROOT = Path(__file__).resolve().parents[3]


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_table_is_kubectl_like_and_never_markup(capsys: pytest.CaptureFixture[str]) -> None:
    output.render_table(
        ["name", "status"], [["[bold]x[/bold]", Marked("Running", "ok")], ["longer-name", None]]
    )
    lines = capsys.readouterr().out.splitlines()
    assert lines == [
        "NAME             STATUS",
        "[bold]x[/bold]   Running",
        "longer-name      <none>",
    ]


def test_colour_rules(monkeypatch: pytest.MonkeyPatch) -> None:
    assert not output.color_enabled(io.StringIO())
    assert output.color_enabled(Tty())
    monkeypatch.setenv("NO_COLOR", "1")
    assert not output.color_enabled(Tty())
    monkeypatch.delenv("NO_COLOR")
    monkeypatch.setenv("CLICOLOR_FORCE", "1")
    assert output.color_enabled(io.StringIO())
    output.configure(no_color=True)
    assert not output.color_enabled(io.StringIO())


def test_error_lines_causes_hint_and_details(capsys: pytest.CaptureFixture[str]) -> None:
    exc = GryviaError("top", hint="do this", causes=("a", "a", "b" * 300, "c"), details=("raw",))
    output.report_error(exc, verbose=False)
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == "error: top" and lines[1] == "caused by: a"
    assert lines[2].startswith("caused by: bbb") and len(lines[2]) == len("caused by: ") + 220
    assert lines[3] == "hint: do this" and len(lines) == 4
    output.report_error(exc, verbose=True)
    assert "detail: raw" in capsys.readouterr().err


def test_json_bytes_pass_through_when_piped(capsys: pytest.CaptureFixture[str]) -> None:
    output.render_json_bytes(b'{"a":1}')
    assert capsys.readouterr().out == '{"a":1}\n'


def test_cli_reference_is_up_to_date() -> None:
    from gryvia_cli.docgen import render
    from gryvia_cli.main import app

    committed = (ROOT / "docs" / "cli.md").read_text()
    assert render(app) == committed, "regenerate: python -m gryvia_cli.docgen > docs/cli.md"


def test_docgen_runs_as_a_module() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "gryvia_cli.docgen"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    for title in ("## `gryvia submit`", "## `gryvia list jobs`", "## Exit codes", "| 130 |"):
        assert title in proc.stdout
