"""The Job view's Logs tab when the pods are gone (issue 22: after a cancel the log vanished,
"no pods yet"): the lines read stay, the saved-logs ConfigMap's lines are shown and the status
line says so. Over the fake cluster."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from textual.widgets import Static

from gryvia_cli.tui import make_app
from gryvia_cli.tui.screens.job import JobScreen
from gryvia_cli.tui.widgets.logview import LogView
from gryvia_operator.api.savedlogs import SavedLog
from tests.tui.builders import NOW
from tests.tui.fake import FakeSource
from tests.tui.fixed import LOG_LINES, fixed_cluster
from tests.tui.waits import settle, wait_until

pytestmark = [pytest.mark.tui]

ACME = "tenant-acme"


def saved(pod: str, replica: int, count: int, *, cut: bool = False) -> SavedLog:
    """A saved log of `count` lines `saved <pod> <i>` (after a cut marker when `cut`)."""
    lines = [f"saved {pod} {i}" for i in range(count)]
    if cut:
        lines.insert(0, "[... earlier lines were not kept ...]")
    return SavedLog(
        replica=replica,
        pod=pod,
        container="trainer",
        pod_created="2026-11-20T09:00:00Z",
        saved_at="2026-11-20T11:59:00Z",
        cut=cut,
        text="\n".join(lines),
        lines=count,
    )


def status(screen: Any) -> str:
    """The Logs tab's status line as shown."""
    return str(screen.query_one("#log-status", Static).render())


def pod_obj(name: str) -> dict[str, Any]:
    return copy.deepcopy(next(p for p in fixed_cluster()["pods"] if p["metadata"]["name"] == name))


async def open_logs(pilot: Any, app: Any, key: str) -> tuple[Any, LogView]:
    await settle(pilot)
    app.open_job(key, "logs")
    screen = await wait_until(
        pilot, lambda: isinstance(app.screen, JobScreen) and app.screen, what="job view"
    )
    log = await wait_until(pilot, lambda: screen.query_one(LogView), what="the log view")
    return screen, log


async def test_a_deleted_pod_keeps_its_lines_then_shows_the_saved_ones(
    fake_source: FakeSource,
) -> None:
    app = make_app(fake_source, clock=lambda: NOW)
    async with app.run_test(size=(140, 30)) as pilot:
        screen, log = await open_logs(pilot, app, f"{ACME}/llama-pretrain")
        await wait_until(pilot, lambda: len(log.lines) == 40, what="40 lines")
        # the cancel deletes the pods; the operator has not saved their lines yet
        fake_source.emit("pods", "DELETED", pod_obj("llama-pretrain-0"))
        await wait_until(pilot, lambda: screen.log_state == "gone", what="the pod gone")
        assert screen.log_pod == "llama-pretrain-0"  # no jump to the other pod's log
        assert [t for _, t in log.lines] == [line.split(" ", 1)[1] for line in LOG_LINES]
        await wait_until(
            pilot, lambda: "showing the 40 lines read before" in status(screen), what="status"
        )
        assert "]: next pod" in status(screen)
        fake_source.emit("pods", "DELETED", pod_obj("llama-pretrain-1"))
        await pilot.pause(0.2)
        assert len(log.lines) == 40 and "no pods yet" not in status(screen)
        # the operator saves the last lines a little later: the events poll finds them
        fake_source.saved[(ACME, "llama-pretrain")] = {
            0: saved("llama-pretrain-0", 0, 45),
            1: saved("llama-pretrain-1", 1, 3),
        }
        await wait_until(
            pilot, lambda: screen.log_state == "saved", timeout=20, what="the saved lines"
        )
        assert [t for _, t in log.lines] == [f"saved llama-pretrain-0 {i}" for i in range(45)]
        text = status(screen)
        assert "llama-pretrain-0 · deleted: showing saved lines" in text
        assert "45 kept by the operator at 2026-11-20T11:59:00Z" in text


async def test_saved_lines_shorter_than_what_was_read_leave_the_view_as_it_was(
    fake_source: FakeSource,
) -> None:
    fake_source.saved[(ACME, "llama-pretrain")] = {0: saved("llama-pretrain-0", 0, 10)}
    app = make_app(fake_source, clock=lambda: NOW)
    async with app.run_test(size=(140, 30)) as pilot:
        screen, log = await open_logs(pilot, app, f"{ACME}/llama-pretrain")
        await wait_until(pilot, lambda: len(log.lines) == 40, what="40 lines")
        fake_source.emit("pods", "DELETED", pod_obj("llama-pretrain-0"))
        await wait_until(pilot, lambda: screen.log_state == "saved", what="the saved log")
        assert log.lines[0][1] == LOG_LINES[0].split(" ", 1)[1]
        assert len(log.lines) == 40
        assert "deleted: showing the lines read (10 kept by the operator" in status(screen)


async def test_a_job_without_pods_shows_its_saved_logs_at_once_and_p_changes_replica() -> None:
    cluster = fixed_cluster()
    cluster["pods"] = [p for p in cluster["pods"] if not p["metadata"]["name"].startswith("llama")]
    source = FakeSource(cluster)
    source.saved[(ACME, "llama-pretrain")] = {
        0: saved("llama-pretrain-0", 0, 5, cut=True),
        1: saved("llama-pretrain-1", 1, 3),
    }
    app = make_app(source, clock=lambda: NOW)
    async with app.run_test(size=(160, 30)) as pilot:
        screen, log = await open_logs(pilot, app, f"{ACME}/llama-pretrain")
        await wait_until(pilot, lambda: screen.log_state == "saved", what="the saved log")
        assert [t for _, t in log.lines][1:] == [f"saved llama-pretrain-0 {i}" for i in range(5)]
        text = status(screen)
        assert "llama-pretrain-0 · deleted: showing saved lines (5 kept" in text
        assert "cut: earlier lines were not kept" in text
        await pilot.press("right_square_bracket")
        await wait_until(pilot, lambda: len(log.lines) == 3, what="replica 1's saved log")
        assert screen.log_pod == "llama-pretrain-1"
        assert "llama-pretrain-1 · deleted" in status(screen)
