"""User data is never markup: Rich/Textual markup, terminal escapes and very long lines in job
names, commands, labels, annotations, messages, events, logs, node, tenant and context names
show literally in every console view (issue 22, point 2), over the fake cluster."""

from __future__ import annotations

from typing import Any

import pytest

from gryvia_cli.core.plaintext import visible
from gryvia_cli.tui import make_app
from gryvia_cli.tui.app import GryviaApp
from gryvia_cli.tui.screens.job import JobScreen
from gryvia_cli.tui.widgets.logview import LogView
from gryvia_cli.tui.widgets.rowtable import RowTable
from tests.tui.builders import NOW, H, M, gpu_node, make_job, node, pod, ts, usage
from tests.tui.fake import FakeSource
from tests.tui.fixed import fixed_cluster
from tests.tui.waits import settle, wait_until

pytestmark = [pytest.mark.tui]

MARKUP = ["[bold]x[/bold]", "[/]", "[link=http://x]y[/link]", "[@click=app.quit]z[/]"]
ESCAPES = ["\x1b[31mred\x1b[0m", "\x1b]0;title\x07"]
LONG = "long-" + "0123456789" * 500
"""A 5005-character line."""
COMMAND = ["python3", "-c", "import time; [print(i) for i in range(30)]"]
COMMAND_SHOWN = "python3 -c 'import time; [print(i) for i in range(30)]'"
"""The command of issue 22, which showed as `python3 -c 'import time; '`."""
NS = "research"
JOB = "hostile"
NAMED = "[bold]x[/bold]"
"""A job whose name is markup (no API server would take it; the console must not care)."""
QUEUED = "[@click=app.quit]z[/]"
GPU = "[bold]G[/bold]"
NODE = "[bold]n1[/bold]"


def hostile_cluster() -> dict[str, list[dict[str, Any]]]:
    """The fixed cluster plus jobs, nodes, pods, usage full of markup and escapes."""
    cluster = fixed_cluster()
    cluster["jobs"] += [
        make_job(JOB)
        .ns(NS)
        .created(2 * H)
        .label("gryvia.io/team", MARKUP[3])
        .annotate("note", MARKUP[3] + ESCAPES[1])
        .spec(command=COMMAND, image="[bold]img[/bold]:1")
        .phase("Running", started=H, message=MARKUP[2] + " " + ESCAPES[0], nodes=(NODE,))
        .condition("Ready", "True", "[/]", MARKUP[0] + " " + ESCAPES[1])
        .obj(),
        make_job(NAMED).ns(NS).created(30 * M).phase("Running", started=20 * M).obj(),
        make_job(QUEUED).ns(NS).created(10 * M).gpus(8).gpu_type(GPU).phase("Queued").obj(),
        make_job(LONG).ns(NS).created(5 * M).phase("Pending").obj(),
        make_job("odd-namespace").ns("[red]ns").created(4 * M).obj(),
    ]
    cluster["gpunodes"] += [gpu_node(NODE, GPU, 4), gpu_node("n-" + LONG, "H100", 8)]
    cluster["nodes"] += [node(NODE), node("n-" + LONG)]
    cluster["pods"] += [pod(JOB, NS, 0, NODE, 1)]
    cluster["usage"] += [usage(MARKUP[2], NS, "[bold]t[/bold]", "H100", 1, 8.0, 2 * H, 1.0)]
    return cluster


LOG = [
    f"{ts(H - i * M)} {line}"
    for i, line in enumerate([*MARKUP, *ESCAPES, "tab\there\x07bell", LONG, "last line"])
]


def hostile_source() -> FakeSource:
    source = FakeSource(
        hostile_cluster(), logs={f"{JOB}-0": LOG}, context="[bold]ctx[/bold]\x1b[2J"
    )
    source.more_events.append(
        {
            "type": "Warning",
            "reason": "[/]Odd",
            "message": MARKUP[1] + " " + MARKUP[3] + " " + ESCAPES[0],
            "lastTimestamp": ts(30 * M),
            "involvedObject": {"kind": "GryviaAIJob", "name": JOB},
        }
    )
    return source


def screen_text(app: GryviaApp) -> str:
    """What the terminal shows now, line by line (the compositor's strips as text)."""
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


def assert_literal(text: str, value: str, *, room: int | None = None) -> None:
    """`value` (its first `room` characters when a column cuts it) is on the screen as
    typed, controls shown as glyphs; no escape byte reached the screen."""
    shown = visible(value)
    wanted = shown if room is None else shown[:room]
    assert wanted in text, f"{wanted!r} is not on the screen:\n{text}"
    assert "\x1b" not in text and "\x07" not in text


async def test_every_view_shows_user_text_literally() -> None:
    source = hostile_source()
    app = make_app(source, clock=lambda: NOW)
    async with app.run_test(size=(250, 60)) as pilot:
        await settle(pilot)
        text = screen_text(app)  # Jobs
        for name in (NAMED, QUEUED):
            assert_literal(text, name)
        assert_literal(text, LONG, room=40)
        assert_literal(text, MARKUP[3], room=9)  # the tenant, from the label
        assert_literal(text, "[bold]ctx[/bold]\x1b[2J")  # the context, in the top bar

        await pilot.press("2")  # Queue
        await wait_until(pilot, lambda: app.current_mode == "queue", what="queue")
        await pilot.pause(0.1)
        text = screen_text(app)
        assert_literal(text, QUEUED, room=15)
        assert_literal(text, "by GPU type: A100-80G 1, GB200 1, H100 1, L40 1, [BOLD]G[/BOLD] 1")

        await pilot.press("3")  # Capacity
        await wait_until(pilot, lambda: app.current_mode == "capacity", what="capacity")
        await pilot.pause(0.1)
        text = screen_text(app)
        assert_literal(text, GPU.upper())  # GPU types are upper case
        assert_literal(text, NODE)

        await pilot.press("4")  # Cost
        await wait_until(pilot, lambda: app.current_mode == "cost", what="cost")
        await pilot.pause(0.1)
        assert_literal(screen_text(app), MARKUP[2])

        await pilot.press("5")  # Nodes
        await wait_until(pilot, lambda: app.current_mode == "nodes", what="nodes")
        await pilot.pause(0.1)
        text = screen_text(app)
        assert_literal(text, NODE)
        assert_literal(text, GPU.upper(), room=9)
        assert_literal(text, "n-" + LONG, room=20)
        assert app.is_running and app.return_code is None


async def test_the_job_view_shows_command_messages_events_yaml_and_logs_literally() -> None:
    source = hostile_source()
    app = make_app(source, clock=lambda: NOW)
    async with app.run_test(size=(250, 60)) as pilot:
        await settle(pilot)
        app.open_job(f"{NS}/{JOB}", "overview")
        screen: Any = await wait_until(
            pilot, lambda: isinstance(app.screen, JobScreen) and app.screen, what="job view"
        )
        await wait_until(pilot, lambda: screen.events, what="the events")
        await pilot.pause(0.1)
        text = screen_text(app)
        assert_literal(text, COMMAND_SHOWN)  # whole, brackets and all
        assert_literal(text, "[bold]img[/bold]:1")
        assert_literal(text, MARKUP[2] + " " + ESCAPES[0])  # the job's message
        assert_literal(text, MARKUP[0] + " " + ESCAPES[1])  # a condition's message
        assert_literal(text, MARKUP[1] + " " + MARKUP[3] + " " + ESCAPES[0])  # an event
        assert_literal(text, "[/]Odd")
        assert_literal(text, NODE)  # nodes allocated and the pod's node
        assert_literal(text, MARKUP[3])  # the tenant

        await pilot.press("y")  # YAML: the annotation, as YAML quotes it
        await wait_until(pilot, lambda: "note:" in screen_text(app), what="the YAML tab")
        assert MARKUP[3] in screen_text(app)

        await pilot.press("l")  # Logs
        log = screen.query_one(LogView)
        await wait_until(pilot, lambda: len(log.lines) == len(LOG), what="the log")
        text = screen_text(app)
        for line in MARKUP:
            assert_literal(text, line)
        assert_literal(text, "red")  # colours dropped from logs, the text kept
        assert_literal(text, "tab here␇bell")
        assert_literal(text, LONG, room=200)
        assert [t for _, t in log.lines][4:6] == ["red", ""]  # the title escape is gone
        assert app.is_running and app.return_code is None


async def test_dialogs_and_notifications_show_user_text_literally() -> None:
    source = hostile_source()
    app = make_app(source, clock=lambda: NOW)
    async with app.run_test(size=(250, 60), notifications=True) as pilot:
        await settle(pilot)
        table = app.screen.query_one(RowTable)
        table.move_to_key(f"{NS}/{NAMED}")
        await pilot.press("c")
        await wait_until(
            pilot, lambda: app.screen.__class__.__name__ == "ConfirmDialog", what="confirm"
        )
        await pilot.pause(0.1)
        assert_literal(screen_text(app), f"Cancel 1 job(s): {NAMED}?")
        await pilot.press("n")
        assert source.writes == []

        await pilot.press("ctrl+n")  # the namespace picker lists `[red]ns` as it is
        await wait_until(
            pilot, lambda: "[red]ns" in getattr(app.screen, "names", []), what="namespaces"
        )
        await pilot.pause(0.1)
        assert_literal(screen_text(app), "[red]ns")
        await pilot.press("escape")

        await pilot.press("colon", *"[bold]x[/bold]", "enter")  # a notification
        await wait_until(
            pilot, lambda: "no view called" in screen_text(app), what="the notification"
        )
        assert_literal(screen_text(app), "“[bold]x[/bold]”")
        assert app.is_running and app.return_code is None
