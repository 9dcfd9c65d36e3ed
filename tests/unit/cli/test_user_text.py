"""User data is never markup and never a terminal command (issue 22, point 2): the pure
helpers, and the CLI's tables and lines (`list jobs`, `queue`, `status JOB`, messages) fed
markup, escapes and a 5000-character line, rendered by Rich as the commands do."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from gryvia_cli import output
from gryvia_cli.core.jobs import JOB_COLUMNS, job_row, summarize_job
from gryvia_cli.core.plaintext import log_text, strip_escapes, visible
from gryvia_cli.core.queue import QUEUE_COLUMNS, build_queue, queue_row
from gryvia_cli.errors import GryviaError
from gryvia_cli.usertext import user_text
from gryvia_cli.views.job import JobSnapshot, render_job

MARKUP = ["[bold]x[/bold]", "[/]", "[link=http://x]y[/link]", "[@click=app.quit]z[/]"]
RED, TITLE = "\x1b[31mred\x1b[0m", "\x1b]0;title\x07"
LONG = "long-" + "0123456789" * 500
NOW = dt.datetime(2026, 11, 20, 12, 0, tzinfo=dt.UTC)
COMMAND = "python3 -c 'import time; [print(i) for i in range(30)]'"


def test_visible_shows_controls_as_glyphs_and_keeps_printable_text() -> None:
    for text in [*MARKUP, LONG, "ünïcödé 名前", COMMAND]:
        assert visible(text) is text
    assert visible(RED) == "␛[31mred␛[0m"
    assert visible(TITLE) == "␛]0;title␇"
    assert visible("a\tb\nc\r\x00\x7f") == "a b↵c␍␀␡"
    assert visible("a\tb\nc", multiline=True) == "a\tb\nc"
    assert visible("8-bit \x9b31m csi, bidi \u202eevil") == "8-bit \ufffd31m csi, bidi \ufffdevil"


def test_log_text_drops_escapes_keeps_the_text() -> None:
    assert log_text(RED) == "red"
    assert log_text(TITLE + "after") == "after"
    assert log_text("\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\ text") == "link text"
    assert log_text("10%\r50%\r100%") == "100%"
    assert log_text("a\tb") == "a   b"
    assert log_text("bell\x07 and a lone escape\x1b") == "bell␇ and a lone escape"
    assert log_text("\x1bPq#0;2;0;0;0\x1b\\sixel gone") == "sixel gone"
    assert strip_escapes("plain") == "plain"


def test_user_text_is_plain_text() -> None:
    text = user_text(MARKUP[3] + RED, "bold")
    assert text.plain == MARKUP[3] + "␛[31mred␛[0m"
    assert not text.spans and str(text.style) == "bold"
    assert user_text(None).plain == "" and user_text(42).plain == "42"


def hostile_job(name: str, **status: Any) -> dict[str, Any]:
    return {
        "apiVersion": "gryvia.io/v1alpha1",
        "kind": "GryviaAIJob",
        "metadata": {
            "name": name,
            "namespace": "research",
            "creationTimestamp": "2026-11-20T11:00:00Z",
            "labels": {"gryvia.io/team": MARKUP[3]},
            "annotations": {"note": TITLE},
        },
        "spec": {
            "type": "training",
            "gpus": 1,
            "gpuType": "[bold]G[/bold]",
            "image": "[bold]img[/bold]",
            "command": ["python3", "-c", "import time; [print(i) for i in range(30)]"],
        },
        "status": status,
    }


JOBS = [
    hostile_job(MARKUP[0], phase="Running", message=MARKUP[2] + " " + RED),
    hostile_job(MARKUP[3] + RED, phase="Queued", message=TITLE),
    hostile_job(LONG, phase="Pending"),
]


def check(out: str, *wanted: str) -> None:
    """Every `wanted` text is in `out` as typed (controls as glyphs); no escape from the data
    reached the output (colour codes of the table's own styling are SGR only)."""
    for text in wanted:
        assert visible(text) in out, f"{visible(text)!r} not in:\n{out}"
    assert "\x1b]" not in out and "\x07" not in out
    assert "\x1b[31m" not in out and "\x1b[2J" not in out


@pytest.mark.parametrize("colour", [False, True])
def test_list_jobs_table_shows_names_and_phases_literally(
    colour: bool, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    if colour:
        monkeypatch.setenv("CLICOLOR_FORCE", "1")
    rows = [["research", *job_row(summarize_job(j), NOW)] for j in JOBS]
    output.render_table(["namespace", *JOB_COLUMNS], rows)
    out = capsys.readouterr().out
    check(out, MARKUP[0], MARKUP[3] + RED, LONG)
    assert len(out.splitlines()) == 4  # one line per job, however long (not a terminal)


def test_queue_table_shows_names_and_gpu_types_literally(
    capsys: pytest.CaptureFixture[str],
) -> None:
    entries = build_queue([summarize_job(j) for j in JOBS], [], {}, {}, NOW)
    assert entries
    output.render_table(
        [QUEUE_COLUMNS[0], "namespace", *QUEUE_COLUMNS[1:]],
        [queue_row(e, all_namespaces=True) for e in entries],
    )
    check(capsys.readouterr().out, MARKUP[3] + RED, "[BOLD]G[/BOLD]", LONG)


def test_status_of_a_job_shows_command_messages_and_events_literally(
    capsys: pytest.CaptureFixture[str],
) -> None:
    job = hostile_job(MARKUP[0], phase="Running", message=MARKUP[2] + " " + RED)
    job["status"]["conditions"] = [
        {"type": "Ready", "status": "True", "reason": "[/]", "message": MARKUP[1] + TITLE}
    ]
    event = {
        "type": "Warning",
        "reason": "[/]Odd",
        "message": MARKUP[3] + " " + RED,
        "lastTimestamp": "2026-11-20T11:30:00Z",
        "involvedObject": {"kind": "GryviaAIJob", "name": MARKUP[0]},
    }
    render_job(JobSnapshot(job, [], [event]), NOW)
    out = capsys.readouterr().out
    check(out, f"Job {MARKUP[0]}", "[bold]img[/bold]", MARKUP[2] + " " + RED, MARKUP[1] + TITLE)
    check(out, "[/]Odd", MARKUP[3] + " " + RED)


def test_messages_and_errors_show_user_text_literally(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLICOLOR_FORCE", "1")
    output.info(f"job {MARKUP[0]} {TITLE}")
    output.warn(f"job {MARKUP[3]} {RED}")
    output.emit(f"line {MARKUP[2]} {TITLE}")
    output.report_error(GryviaError(f"job {MARKUP[1]} {RED}", hint=f"try {TITLE}"))
    captured = capsys.readouterr()
    check(captured.err, f"job {MARKUP[0]} {TITLE}", f"job {MARKUP[3]} {RED}")
    check(captured.err, f"error: job {MARKUP[1]} {RED}", f"hint: try {TITLE}")
    check(captured.out, f"line {MARKUP[2]} {TITLE}")
