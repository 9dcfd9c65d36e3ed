"""Pilot tests over the fake cluster: sort by any column (shift+letter, the ctrl+o menu),
column toggles saved in console.yaml, aliases and hotkeys from it, a bad file, and the
drill-downs Nodes -> pods -> job and Cost -> jobs -> job."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from textual.widgets import Static

from gryvia_cli.tui import make_app
from gryvia_cli.tui.app import GryviaApp
from gryvia_cli.tui.screens.dialogs import PickerDialog
from gryvia_cli.tui.screens.drill import CostJobsScreen, NodePodsScreen
from gryvia_cli.tui.screens.help import HelpScreen
from gryvia_cli.tui.screens.job import JobScreen
from gryvia_cli.tui.widgets.rowtable import RowTable
from tests.tui.builders import NOW
from tests.tui.fake import FakeSource
from tests.tui.waits import settle, wait_until

pytestmark = [pytest.mark.tui]


def app_for(source: FakeSource, config: Path | None = None, **kw: Any) -> GryviaApp:
    """The console over `source` with the frozen clock and `config` as console.yaml."""
    return make_app(source, clock=lambda: NOW, config_file=config, **kw)


def names(table: RowTable) -> list[str]:
    """Names of the rows in order (`ns/name` keys)."""
    return [k.split("/", 1)[-1] for k in table.order]


def header(table: RowTable) -> str:
    """The header line as text."""
    return table.render_line(0).text


async def pick(pilot: Any, app: GryviaApp, text: str) -> None:
    """In the open picker, narrow to `text` and choose the first match."""
    await wait_until(pilot, lambda: isinstance(app.screen, PickerDialog), what="the picker")
    screen: Any = app.screen
    await wait_until(pilot, lambda: screen.names, what="the picker's names")
    await pilot.press(*text, "enter")
    await wait_until(pilot, lambda: not isinstance(app.screen, PickerDialog), what="chosen")


async def test_shift_letters_sort_the_jobs_and_again_reverse(fake_source: FakeSource) -> None:
    app = app_for(fake_source)
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(pilot)
        screen: Any = app.screen
        table = screen.query_one(RowTable)
        await pilot.press("N")
        assert names(table) == sorted(names(table))
        assert (screen.sort_column, screen.sort_reverse) == ("name", False)
        assert "NAME↑" in header(table)
        await pilot.press("N")
        assert names(table) == sorted(names(table), reverse=True)
        assert "NAME↓" in header(table) and "sort name↓" in str(
            screen.query_one("#jobs-status").render()
        )
        await pilot.press("C")  # another column starts ascending: cheapest first
        assert screen.sort_column == "cost" and not screen.sort_reverse
        await pilot.press("C")
        assert names(table)[0] == "old-sweep"  # $448, the most expensive
        await pilot.press("o")  # `o` still cycles the visible columns
        assert screen.sort_column == "name" and screen.sort_reverse
        await pilot.press("ctrl+o")
        await pick(pilot, app, "phase")
        assert screen.sort_column == "phase" and "PHASE↑" in header(table)
        assert names(table)[0] in {
            "llama-pretrain",
            "bert-finetune",
            "sd-inference",
            "stopping-run",
        }


async def test_typed_capitals_in_the_filter_never_sort(fake_source: FakeSource) -> None:
    app = app_for(fake_source)
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(pilot)
        screen: Any = app.screen
        await pilot.press("slash", *"NECAS", "escape")
        assert (screen.sort_column, screen.sort_reverse) == ("age", False)


async def test_queue_nodes_and_cost_sort_by_their_columns(fake_source: FakeSource) -> None:
    app = app_for(fake_source, view="nodes")
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(pilot)
        nodes = app.screen.query_one(RowTable)
        await pilot.press("F")  # free GPUs, fewest first; again: most first
        await pilot.press("F")
        assert "FREE↓" in header(nodes)
        free = [int(nodes.cells(k)[4][0]) for k in nodes.order]
        assert free == sorted(free, reverse=True) and free[0] > free[-1]
        await pilot.press("2")
        await wait_until(pilot, lambda: app.current_mode == "queue", what="queue")
        queue = app.screen.query_one(RowTable)
        await wait_until(pilot, lambda: queue.order, what="queue rows")
        first = list(queue.order)
        await pilot.press("N")
        assert names(queue) == sorted(names(queue)) and "NAME↑" in header(queue)
        await pilot.press("I")
        assert queue.order == first  # position: the queue's own order again
        await pilot.press("4")
        await wait_until(pilot, lambda: app.current_mode == "cost", what="cost")
        tenants = app.screen.query_one("#cost-tenants", RowTable)
        await wait_until(pilot, lambda: tenants.order, what="cost rows")
        assert "SPENT↓" in header(tenants)
        await pilot.press("T")
        assert tenants.order == sorted(tenants.order) and "TEAM↑" in header(tenants)
        top = app.screen.query_one("#cost-top", RowTable)
        top.focus()  # with two tables, the keys sort the focused one
        await pilot.press("N")
        assert names(top) == sorted(names(top)) and "JOB↑" in header(top)
        assert tenants.order == sorted(tenants.order)


async def test_column_toggles_are_saved_and_used_next_time(
    fake_source: FakeSource, tmp_path: Path
) -> None:
    config = tmp_path / "gryvia" / "console.yaml"
    app = app_for(fake_source, config)
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(pilot)
        table = app.screen.query_one(RowTable)
        assert "tenant" in table.visible_columns()
        await pilot.press("ctrl+t")
        await pick(pilot, app, "tenant")
        assert "tenant" not in table.visible_columns() and "TENANT" not in header(table)
        await pilot.press("T")  # sorting by a hidden column is refused, not applied
        assert app.screen.sort_column == "age"  # type: ignore[attr-defined]
    assert yaml.safe_load(config.read_text()) == {"columns": {"jobs": {"hidden": ["tenant"]}}}
    again = app_for(fake_source, config)
    async with again.run_test(size=(160, 40)) as pilot:
        await settle(pilot)
        table = again.screen.query_one(RowTable)
        assert "tenant" not in table.visible_columns()
        await pilot.press("ctrl+t")
        await pick(pilot, again, "tenant")  # shows it again
        assert "tenant" in table.visible_columns()
    assert yaml.safe_load(config.read_text()) == {}


async def test_hiding_the_sorted_column_keeps_the_order_and_says_so(
    fake_source: FakeSource, tmp_path: Path
) -> None:
    app = app_for(fake_source, tmp_path / "console.yaml")
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(pilot)
        table = app.screen.query_one(RowTable)
        await pilot.press("C")
        order = list(table.order)
        status = app.screen.query_one("#jobs-status", Static)
        assert "sort cost↑" in str(status.render()) and "hidden" not in str(status.render())
        await pilot.press("ctrl+t")
        await pick(pilot, app, "cost")
        assert "cost" not in table.visible_columns() and table.order == order
        assert "sort cost↑ (hidden column)" in str(status.render())


async def test_aliases_and_hotkeys_from_the_config_file(
    fake_source: FakeSource, tmp_path: Path
) -> None:
    config = tmp_path / "console.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "aliases": {"running": "jobs phase:running", "gpus": "nodes"},
                "hotkeys": {"f5": "queue", "ctrl+g": {"command": "running", "description": "R"}},
            }
        )
    )
    app = app_for(fake_source, config, view="cost")
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        await pilot.press("colon", *"gpus", "enter")
        await wait_until(pilot, lambda: app.current_mode == "nodes", what="the alias's view")
        await pilot.press("f5")
        await wait_until(pilot, lambda: app.current_mode == "queue", what="the hotkey's view")
        await pilot.press("ctrl+g")
        await wait_until(pilot, lambda: app.current_mode == "jobs", what="jobs")
        table = app.screen.query_one(RowTable)
        await wait_until(pilot, lambda: len(table.order) == 4, what="4 running jobs")
        assert app.screen.query_one("#jobs-filter").value == "phase:running"  # type: ignore[attr-defined]
        await pilot.press("colon", *"running gpu:h100", "enter")  # words after an alias add up
        await wait_until(pilot, lambda: names(table) == ["llama-pretrain"], what="1 H100 job")
        await pilot.press("question_mark")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen), what="help")
        shown = " ".join(str(s.render()) for s in app.screen.query(Static))
        assert "Yours (console.yaml)" in shown
        assert (":running", "jobs phase:running", "") in app.user_keys()
        await pilot.press("f5")  # no hotkey over a dialog
        assert isinstance(app.screen, HelpScreen) and app.current_mode == "jobs"


async def test_a_bad_config_file_is_reported_and_the_console_runs(
    fake_source: FakeSource, tmp_path: Path
) -> None:
    config = tmp_path / "console.yaml"
    bad = "hotkeys: {c: jobs}\ncolumns: {jobs: {hidden: [nope]}}\n"
    config.write_text(bad)
    app = app_for(fake_source, config)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        await wait_until(pilot, lambda: app._notifications, what="the warning")
        (note,) = list(app._notifications)
        assert "hotkeys: hotkey `c`" in note.message and "columns: jobs.hidden" in note.message
        await pilot.press("ctrl+t")
        await pick(pilot, app, "type")
        assert "type" not in app.screen.query_one(RowTable).visible_columns()
    assert config.read_text() == bad  # nothing written over the user's file


async def test_nodes_drill_down_to_pods_and_to_a_pods_job(fake_source: FakeSource) -> None:
    app = app_for(fake_source, view="nodes")
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        nodes = app.screen.query_one(RowTable)
        nodes.move_to_key("gpu-h100-1")
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, NodePodsScreen), what="pods")
        pods = app.screen.query_one(RowTable)
        await wait_until(pilot, lambda: pods.order, what="the node's pods")
        assert pods.order == ["tenant-acme/llama-pretrain-1"]
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, JobScreen), what="the job")
        assert app.screen.key == "tenant-acme/llama-pretrain"  # type: ignore[attr-defined]
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, NodePodsScreen), what="back")
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen.query(RowTable).first() is nodes, what="nodes")
        nodes.move_to_key("gpu-l40-1")
        await pilot.press("p")
        await wait_until(pilot, lambda: isinstance(app.screen, NodePodsScreen), what="pods")
        screen: Any = app.screen
        await wait_until(pilot, lambda: screen.node == "gpu-l40-1", what="the other node")


async def test_cost_drill_down_to_the_jobs_behind_a_figure(fake_source: FakeSource) -> None:
    app = app_for(fake_source, view="cost")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        screen: Any = app.screen
        tenants = screen.query_one("#cost-tenants", RowTable)
        await wait_until(pilot, lambda: "acme" in tenants.order, what="acme")
        tenants.move_to_key("acme")
        spent = screen.spend["acme"]
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, CostJobsScreen), what="jobs")
        jobs: Any = app.screen
        table = jobs.query_one(RowTable)
        await wait_until(pilot, lambda: table.order, what="the jobs behind acme's figure")
        assert len(table.order) == spent.jobs
        assert sum(j.cost for j in jobs.jobs.values()) == pytest.approx(spent.spent)
        assert {j.tenant for j in jobs.jobs.values()} == {"acme"}
        await pilot.press("H")
        await pilot.press("H")
        hours = [jobs.jobs[k].gpu_hours for k in table.order]
        assert hours == sorted(hours, reverse=True)
        first = table.order[0]
        await pilot.press("home", "enter")
        await wait_until(pilot, lambda: isinstance(app.screen, JobScreen), what="the job")
        assert app.screen.key == first  # type: ignore[attr-defined]


async def test_describe_on_the_command_line_and_aliases_to_registry_views(
    fake_source: FakeSource, tmp_path: Path
) -> None:
    from gryvia_cli.tui.screens.registry import DescribeScreen

    config = tmp_path / "console.yaml"
    config.write_text(
        yaml.safe_dump({"aliases": {"money": "budgets globex", "acme": "describe tenant acme"}})
    )
    pod = fake_source.objects["pods"][0]["metadata"]
    app = app_for(fake_source, config, view="jobs")
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        await pilot.press("colon", *"money", "enter")  # an alias to a registry view, filtered
        await wait_until(pilot, lambda: app.current_mode == "budgets", what="the budgets view")
        table = app.screen.query_one(RowTable)
        await wait_until(pilot, lambda: names(table) == ["globex-monthly"], what="1 budget")

        await pilot.press("colon", *"acme", "enter")  # an alias to a describe
        await wait_until(pilot, lambda: isinstance(app.screen, DescribeScreen), what="describe")
        assert app.screen.ref.label == "tenant acme"  # type: ignore[attr-defined]
        await pilot.press("escape")

        await pilot.press("colon", *f"describe po {pod['namespace']}/{pod['name']}", "enter")
        await wait_until(pilot, lambda: isinstance(app.screen, DescribeScreen), what="a pod")
        assert app.screen.ref.label == f"pod {pod['namespace']}/{pod['name']}"  # type: ignore[attr-defined]
        await pilot.press("escape")

        await pilot.press("colon", *"describe gaj tenant-acme/llama-pretrain", "enter")
        await wait_until(pilot, lambda: isinstance(app.screen, JobScreen), what="the Job view")
        await pilot.press("escape")

        await pilot.press("colon", *"describe pod", "enter")  # half a command: said, not done
        await wait_until(
            pilot,
            lambda: any("describe KIND NAME" in str(n.message) for n in app._notifications),
            what="the usage warning",
        )
        assert not isinstance(app.screen, DescribeScreen | JobScreen)
