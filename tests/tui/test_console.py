"""Pilot tests of the console over the fake cluster: keys, filter, sort, marks, writes,
read-only mode, palette, jump, switchers, reconnect marker, batching, submit and logs."""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Input, Select

from gryvia_cli.tui import make_app
from gryvia_cli.tui.app import GryviaApp
from gryvia_cli.tui.commands import GryviaCommands, run_in_view
from gryvia_cli.tui.screens.dialogs import ConfirmDialog
from gryvia_cli.tui.screens.job import JobScreen
from gryvia_cli.tui.widgets.logview import LogView
from gryvia_cli.tui.widgets.rowtable import RowTable
from gryvia_cli.tui.widgets.topbar import TopBar
from tests.tui.builders import NOW, make_job
from tests.tui.fake import FakeSource
from tests.tui.fixed import fixed_cluster
from tests.tui.test_connection import recorded
from tests.tui.waits import settle, wait_until

pytestmark = [pytest.mark.tui]


def app_for(source: FakeSource, **kw: Any) -> GryviaApp:
    """The console over `source` with the frozen clock."""
    return make_app(source, clock=lambda: NOW, **kw)


def name_of(key: str) -> str:
    """`ns/name` -> `name`."""
    return key.split("/", 1)[1]


async def switch_context(pilot: Any, app: Any, context: str) -> None:
    """Press ctrl+x, pick `context` by typing its first word, wait for the switch."""
    await pilot.press("ctrl+x")
    await wait_until(pilot, lambda: context in getattr(app.screen, "names", []), what="contexts")
    await pilot.press(*context.split("-")[0], "enter")
    await wait_until(pilot, lambda: app.target.context == context, what="context switch")


async def test_filter_by_terms_and_words(fake_source: FakeSource) -> None:
    app = app_for(fake_source)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        table = app.screen.query_one(RowTable)
        await pilot.press("slash", *"phase:running", "enter")
        await wait_until(pilot, lambda: len(table.order) == 4, what="4 running jobs")
        assert {name_of(k) for k in table.order} == {
            "llama-pretrain",
            "bert-finetune",
            "sd-inference",
            "stopping-run",
        }
        await pilot.press("slash", "end", "space", *"gpu:a100-80g", "enter")
        await wait_until(pilot, lambda: len(table.order) == 2, what="2 running A100 jobs")
        await pilot.press("escape")
        await wait_until(pilot, lambda: len(table.order) == 13, what="filter cleared")


async def test_sort_cycles_columns_and_reverses(fake_source: FakeSource) -> None:
    app = app_for(fake_source)
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(pilot)
        screen: Any = app.screen
        table = screen.query_one(RowTable)
        assert name_of(table.order[0]) == "l40-batch"  # newest first
        await pilot.press("o")
        assert screen.sort_column == "duration"
        while screen.sort_column != "cost":
            await pilot.press("o")
        await pilot.press("O")
        assert name_of(table.order[0]) == "old-sweep"  # $448, the most expensive


async def test_marks_and_cancel_with_confirmation(fake_source: FakeSource) -> None:
    app = app_for(fake_source)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        table = app.screen.query_one(RowTable)
        first, second = table.order[0], table.order[1]
        await pilot.press("space", "space")
        assert table.marks == {first, second}
        await pilot.press("c")
        await wait_until(
            pilot, lambda: app.screen.__class__.__name__ == "ConfirmDialog", what="confirm"
        )
        await pilot.press("n")
        assert fake_source.writes == []
        await pilot.press("c", "y")
        await wait_until(pilot, lambda: len(fake_source.writes) == 2, what="two cancels")
        assert fake_source.writes == [("cancel", first), ("cancel", second)]
        await wait_until(
            pilot, lambda: table.cells(first)[6][0] == "◌ Cancelling", what="row update"
        )


async def test_cancel_of_a_finished_job_writes_nothing_and_says_so(
    fake_source: FakeSource,
) -> None:
    """As `gryvia cancel`: a job that already ended is not annotated; the console says why."""
    app = app_for(fake_source)
    told = recorded(app)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        table = app.screen.query_one(RowTable)
        done = next(k for k in table.order if app.store.jobs[k].summary.phase == "Succeeded")
        running = next(k for k in table.order if app.store.jobs[k].summary.phase == "Running")
        table.set_marks([done, running])
        await pilot.press("c", "y")
        await wait_until(pilot, lambda: len(told) >= 2, what="both outcomes told")
        assert fake_source.writes == [("cancel", running)]
        assert (
            "error",
            "Could not cancel",
            f"{done}: job {name_of(done)} is already Succeeded; nothing to cancel",
        ) in told


async def test_readonly_hides_every_write(fake_source: FakeSource) -> None:
    app = app_for(fake_source, readonly=True)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        shown = {b.binding.action for b in app.screen.active_bindings.values() if b.enabled}
        assert not shown & {"cancel", "delete", "resubmit", "submit"}
        await pilot.press("c")
        assert app.screen.__class__.__name__ == "JobsScreen"
        provider = GryviaCommands(app.screen)
        titles = {key.palette_title for key, _ in provider._commands()}
        assert "jobs: Cancel" not in titles and "jobs: Filter" in titles
        assert "read-only" in str(app.screen.query_one(TopBar).render())


async def test_palette_lists_actions_as_noun_verb(fake_source: FakeSource) -> None:
    app = app_for(fake_source)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        titles = [key.palette_title for key, _ in GryviaCommands(app.screen)._commands()]
        assert {"jobs: Cancel", "view: Queue", "context: Switch", "namespace: Switch"} <= set(
            titles
        )
        assert all(": " in t for t in titles)
        run_in_view(app, "queue", "filter")
        await wait_until(
            pilot, lambda: app.screen.__class__.__name__ == "QueueScreen", what="queue"
        )


async def test_jump_help_and_number_keys(fake_source: FakeSource) -> None:
    app = app_for(fake_source)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        await pilot.press("colon", *"cap", "enter")
        await wait_until(pilot, lambda: app.current_mode == "capacity", what="capacity view")
        await pilot.press("5")
        await wait_until(pilot, lambda: app.current_mode == "nodes", what="nodes view")
        await pilot.press("question_mark")
        await wait_until(pilot, lambda: app.screen.__class__.__name__ == "HelpScreen", what="help")
        await pilot.press("escape", "1")
        await wait_until(pilot, lambda: app.current_mode == "jobs", what="jobs view")


async def test_context_and_namespace_switchers(fake_source: FakeSource) -> None:
    app = app_for(fake_source)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+n")
        await wait_until(
            pilot, lambda: app.screen.__class__.__name__ == "PickerDialog", what="picker"
        )
        await wait_until(
            pilot, lambda: "tenant-acme" in getattr(app.screen, "names", []), what="names"
        )
        await pilot.press(*"acme", "enter")
        await wait_until(
            pilot, lambda: app.target.namespace == "tenant-acme", what="namespace switch"
        )
        await wait_until(
            pilot, lambda: "jobs" in app.store.loaded and len(app.store.jobs) == 5, what="relist"
        )
        await switch_context(pilot, app, "other-cluster")


@pytest.mark.parametrize(
    ("before", "after"),
    [("tenant-acme", "tenant-b"), (None, None)],  # a namespace: the new context's; all: all
)
async def test_context_switch_takes_the_new_contexts_namespace(
    fake_source: FakeSource, before: str | None, after: str | None
) -> None:
    fake_source.context_namespaces = {"other-cluster": "tenant-b"}
    app = app_for(fake_source.retarget(context=None, namespace=before))
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        assert app.target.namespace == before
        await switch_context(pilot, app, "other-cluster")
        assert app.target.namespace == after  # never the old context's namespace


async def test_reconnecting_marker(fake_source: FakeSource) -> None:
    app = app_for(fake_source)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        assert app.feed is not None
        app.feed.states["jobs"] = ("reconnecting", "connection refused; retry in 2.0s")
        app._on_watch_state("jobs", "reconnecting", "connection refused; retry in 2.0s")
        bar = app.screen.query_one(TopBar)
        await wait_until(pilot, lambda: "reconnecting" in str(bar.render()), what="marker")
        assert "connection refused" in app.connection_detail
        app.feed.states["jobs"] = ("live", "")
        app._on_watch_state("jobs", "live", "")
        await wait_until(pilot, lambda: "live" in str(bar.render()), what="live again")


async def test_updates_are_batched_and_rows_change_in_place(fake_source: FakeSource) -> None:
    app = app_for(fake_source)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        before = app.store.versions["jobs"]
        base = make_job("burst").ns("default")
        for i in range(300):
            meta = {
                "name": f"burst-{i}",
                "namespace": "default",
                "creationTimestamp": "2026-11-20T11:00:00Z",
            }
            fake_source.emit("jobs", "ADDED", base.obj() | {"metadata": meta})
        await wait_until(pilot, lambda: len(app.store.jobs) == 313, what="300 new jobs")
        assert app.store.versions["jobs"] - before <= 2  # one or two batches, not 300
        table = app.screen.query_one(RowTable)
        await wait_until(pilot, lambda: len(table.order) == 313, what="rows shown")
        llama = copy.deepcopy(fixed_cluster()["jobs"][0])
        llama["status"]["phase"] = "Failed"
        fake_source.emit("jobs", "MODIFIED", llama)
        await wait_until(
            pilot,
            lambda: table.cells("tenant-acme/llama-pretrain")[6] == ("✗ Failed", "error"),
            what="row updated",
        )


async def test_submit_form_validates_and_creates(fake_source: FakeSource) -> None:
    app = app_for(fake_source, view="submit")
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        form: Any = app.screen
        assert any("metadata.name" in m for k, m in form.findings if k == "error")
        field_twice = [m for _, m in form.findings if re.match(r"^([\w.\[\]]+): \1\b", m)]
        assert field_twice == [], "a finding names its field twice"
        form.query_one("#f-image", Input).value = "img:1"
        form.query_one("#f-gpu_type", Select).value = "H100"
        form.query_one("#f-name", Input).value = "w" * 55
        await wait_until(
            pilot,
            lambda: any("over the 54" in m for k, m in form.findings if k == "error"),
            what="a name too long for its children refused in the form",
        )
        form.query_one("#f-name", Input).value = "new-run"
        await wait_until(
            pilot, lambda: not any(k == "error" for k, _ in form.findings), what="valid form"
        )
        await pilot.press("ctrl+s")
        dialog = await wait_until(
            pilot, lambda: isinstance(app.screen, ConfirmDialog) and app.screen, what="confirm"
        )
        assert dialog.subjects == ("default/new-run",)  # a create is a write: it asks first
        assert fake_source.writes == []
        await pilot.press("y")
        await wait_until(
            pilot, lambda: fake_source.writes == [("create", "default/new-run")], what="create"
        )
        await wait_until(
            pilot, lambda: isinstance(app.screen, JobScreen), what="the new job's view"
        )


async def test_submit_opens_an_sbatch_script_with_its_report(
    fake_source: FakeSource, tmp_path: Path
) -> None:
    script = tmp_path / "train.sbatch"
    script.write_text(
        "#!/bin/bash\n#SBATCH --job-name=slurm-train\n#SBATCH --gres=gpu:h100:4\n"
        "#SBATCH --time=02:00:00\nsrun python train.py\n"
    )
    app = app_for(fake_source, view="submit")
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        form: Any = app.screen
        form.query_one("#f-image", Input).value = "pytorch:2.4"
        await pilot.press("escape", "ctrl+o")
        await wait_until(
            pilot, lambda: app.screen.__class__.__name__ == "PromptDialog", what="prompt"
        )
        app.screen.query_one(Input).value = str(script)
        await pilot.press("enter")
        await wait_until(pilot, lambda: form.loaded_from == str(script), what="script loaded")
        assert form.jobs and form.jobs[0]["metadata"]["name"].startswith("slurm-train")
        assert any("slurm-train" in m for _, m in form.findings)


async def test_logs_search_wrap_and_the_end_of_a_container(fake_source: FakeSource) -> None:
    app = app_for(fake_source)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        app.open_job("tenant-acme/llama-pretrain", "logs")
        await wait_until(pilot, lambda: isinstance(app.screen, JobScreen), what="job view")
        screen: Any = app.screen
        log = await wait_until(pilot, lambda: screen.query_one(LogView), what="the log view")
        await wait_until(pilot, lambda: len(log.lines) == 40, what="40 lines")
        await pilot.press("slash", *"loss 2.300", "enter")
        assert log.search == "loss 2.300" and log._match_at == 20
        await pilot.press("w", "t")
        assert log.wrap and not log.timestamps
        fake_source.logs["llama-pretrain-0"].append("2026-11-20T12:00:00Z done")
        pod = copy.deepcopy(fixed_cluster()["pods"][0])
        pod["status"]["phase"] = "Succeeded"
        pod["status"]["containerStatuses"][0]["state"] = {"terminated": {"exitCode": 0}}
        fake_source.emit("pods", "MODIFIED", pod)
        await wait_until(pilot, lambda: screen.log_state == "ended", what="the follow to stop")
        assert screen.log_note == "container finished"
        assert log.lines[-1][1] == "done"
        await pilot.press("right_square_bracket")
        await wait_until(pilot, lambda: screen.log_pod == "llama-pretrain-1", what="next pod")


async def test_a_job_in_a_tenant_namespace_shows_under_that_tenant_whatever_its_label() -> None:
    """The operator bills a job in `tenant-acme` to acme even when it is labelled team globex:
    the Jobs view files it under acme too (api.attribution's rule); outside a tenant namespace
    the label decides."""
    cluster = fixed_cluster()
    labelled = make_job("mislabelled").ns("tenant-acme").label("gryvia.io/team", "globex").obj()
    elsewhere = make_job("elsewhere").ns("research").label("gryvia.io/team", "globex").obj()
    cluster["jobs"] = [labelled, elsewhere]
    app = app_for(FakeSource(cluster))
    async with app.run_test(size=(140, 30)) as pilot:
        await settle(pilot)
        table = app.screen.query_one(RowTable)
        await wait_until(pilot, lambda: len(table.order) == 2, what="both jobs")
        await pilot.press("slash", *"tenant:acme", "enter")
        await wait_until(pilot, lambda: table.order == ["tenant-acme/mislabelled"], what="acme")
        await pilot.press("escape", "slash", *"tenant:globex", "enter")
        await wait_until(pilot, lambda: table.order == ["research/elsewhere"], what="globex")
        assert app.store.jobs["tenant-acme/mislabelled"].tenant == "acme"
