"""The top bar's connection states and the quiet "not allowed" of cluster-wide kinds, over the
fake cluster (the sandbox tests in test_faults_sandbox.py do the same through a real relay)."""

from __future__ import annotations

from typing import Any

from gryvia_cli.core.health import Health
from gryvia_cli.tui import make_app
from gryvia_cli.tui.app import GryviaApp
from gryvia_cli.tui.widgets.rowtable import RowTable
from gryvia_cli.tui.widgets.topbar import TopBar
from tests.tui.builders import NOW
from tests.tui.fake import FakeSource
from tests.tui.waits import settle, wait_until


def recorded(app: GryviaApp) -> list[tuple[str, str, str]]:
    """Every notification the app shows from now on: (severity, title, message)."""
    told: list[tuple[str, str, str]] = []
    notify = app.notify

    def record(message: str, *, title: str = "", severity: Any = "information", **kw: Any) -> None:
        told.append((str(severity), title, message))
        notify(message, title=title, severity=severity, **kw)

    app.notify = record  # type: ignore[method-assign]
    return told


def bar(app: GryviaApp) -> str:
    return str(app.screen.query_one(TopBar).render())


async def test_slow_reconnecting_unreachable_and_live_again(fake_source: FakeSource) -> None:
    app = make_app(fake_source, clock=lambda: NOW)
    told = recorded(app)
    async with app.run_test(size=(140, 30)) as pilot:
        await settle(pilot)
        await wait_until(pilot, lambda: fake_source.probers, what="the prober running")
        assert "● live" in bar(app)
        fake_source.set_health(Health("slow", seconds=3.14))
        await wait_until(pilot, lambda: "◐ slow 3.1s" in bar(app), what="slow")
        assert fake_source.kicks == 0  # slow is not an outage: watches stay open
        fake_source.set_health(Health("reconnecting", 1, "Read timed out", 0.0, 10.0))
        await wait_until(
            pilot,
            lambda: "⟳ reconnecting (attempt 1, Read timed out)" in bar(app),
            what="reconnecting",
        )
        kinds = len(app.feed.runners()) if app.feed else 0
        assert fake_source.kicks == kinds  # every stale stream dropped
        fake_source.set_health(Health("reconnecting", 2, "Read timed out", 0.0, 10.0))
        await wait_until(pilot, lambda: "(attempt 2," in bar(app), what="attempt 2")
        fake_source.set_health(Health("unreachable", 9, "Connection refused", 0.0, 10.0))
        await wait_until(pilot, lambda: "✗ unreachable (attempt 9" in bar(app), what="unreachable")
        assert fake_source.kicks == kinds
        fake_source.set_health(Health())
        await wait_until(pilot, lambda: "● live" in bar(app), what="live again")
        assert fake_source.kicks == 2 * kinds  # and reconnected at once, skipping back-off
    titles = [t for _, t, _ in told]
    assert titles.count("Lost the API server") == 1 and titles.count("Reconnected") == 1


async def test_cluster_wide_kinds_refused_by_rbac_say_not_allowed_quietly(
    fake_source: FakeSource,
) -> None:
    fake_source.forbidden = {"gpunodes", "nodes", "skus", "tenants", "quotas", "pods"}
    app = make_app(fake_source, clock=lambda: NOW)
    told = recorded(app)
    async with app.run_test(size=(140, 30)) as pilot:
        await wait_until(pilot, lambda: "jobs" in app.store.loaded, what="jobs")
        await wait_until(pilot, lambda: app.connection == "live", what="live despite RBAC")
        await wait_until(  # the other kinds list once the jobs are drawn: refusals come later
            pilot, lambda: fake_source.forbidden <= app.store.forbidden, what="the refusals"
        )
        await pilot.press("5")
        await wait_until(
            pilot,
            lambda: (
                "not allowed: gpunodes, nodes"
                in str(app.screen.query_one("#nodes-status").render())
            ),
            what="the nodes view saying not allowed",
        )
        assert app.screen.query_one(RowTable).empty_text.startswith("Not allowed: gpunodes")
        await pilot.press("3")
        await wait_until(
            pilot,
            lambda: "not allowed" in str(app.screen.query_one("#capacity-status").render()),
            what="the capacity view saying not allowed",
        )
    assert [t for t in told if t[0] in ("error", "warning")] == []


async def test_a_refused_required_kind_is_told_once_not_at_every_retry(
    fake_source: FakeSource,
) -> None:
    app = make_app(fake_source, clock=lambda: NOW)
    told = recorded(app)
    async with app.run_test(size=(140, 30)) as pilot:
        await settle(pilot)
        for attempt in range(3):
            app._on_watch_state("jobs", "failed", f"forbidden; retry in {attempt}.0s")
        await wait_until(pilot, lambda: "jobs" in app.store.failed, what="jobs failed")
        await pilot.pause()  # every posted state change handled
    assert [t for _, t, _ in told].count("Cannot watch jobs") == 1
