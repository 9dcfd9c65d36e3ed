"""Input safety of the console, driven through the real app over the fake cluster.

- A property test sends random key sequences (single keys, and bursts after `/`, after `:`
  and inside the submit form, the way a fast typist or `tmux send-keys` delivers them) and
  checks after each that no write (cancel, delete, create) was issued without a
  confirmation dialog that named its jobs and was answered `y`, and that every printable key
  sent while a text field had the focus landed in that field and did nothing else.
- (test_input_trial.py replays the tmux trial of issue 22.)

One app serves all examples (starting one per example would take minutes): the test runs
its own event loop and resets the app to a known view before each example. 500 examples take
about 2.5 minutes of CPU on a loaded 2-core machine: `make test-all` runs them, `make test`
runs the first 120 plus the explicit examples; `INPUT_EXAMPLES=N` sets the count while
working on the console, `INPUT_NO_SHRINK=1` reports a failure without shrinking it.
"""

from __future__ import annotations

import asyncio
import copy
import os
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st
from textual.pilot import Pilot
from textual.widgets import Input

from gryvia_cli.tui import make_app
from gryvia_cli.tui.app import GryviaApp
from gryvia_cli.tui.screens.base import ViewScreen
from gryvia_cli.tui.screens.dialogs import NAMES_SHOWN, ConfirmDialog
from gryvia_cli.tui.widgets.textfield import is_typing
from tests.support.depth import amount
from tests.tui.builders import NOW
from tests.tui.fake import FakeSource
from tests.tui.fixed import LOG_LINES, fixed_cluster
from tests.tui.keys import KEY_NAMES, handled, key_event
from tests.tui.waits import wait_loaded

pytestmark = [pytest.mark.tui]

TYPED = "0123456789abcdefghijklmnoprstuvwyzORGNP -'.()[]/"
"""Characters typed in the tests: digits (view keys), space (mark), o (sort), c (cancel),
y (yes), d (describe), R (resubmit). No q and no x: `q`, `:q` and `:exit` would end the app
all examples share. Square brackets and `/` are typed too: a filter such as `[/]` is text
(issue 22, point 2), never markup."""
SPECIAL = ("tab", "shift+tab", "escape", "enter", "backspace", "up", "down")
WRITES = ("ctrl+d", "ctrl+a", "ctrl+r", "ctrl+s")
SINGLE_KEYS = (*TYPED, ":", "/", "?", *SPECIAL, *WRITES)
FORM_CHAIN = ("name", "type", "gpu_type", "namespace", "image", "gpus", "nodes", "command")
FORM_CHAIN += ("storage",)
"""The submit form's fields in tab order (tab past the last one wraps to the first)."""
QUICK_EXAMPLES = 80
"""Examples under `make test` (the same derandomized sequence's first part, plus the explicit
examples below for each bug the full 500 found); `make test-all` runs 500."""
START_VIEWS = ("jobs", "submit")
"""Where an example starts (keys lead on to the other views and the Job view)."""


class RecordingSource(FakeSource):
    """The fake cluster; every write must spend a token that a confirmation granted."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.tokens: Counter[tuple[str, str]] = Counter()
        self.unconfirmed: list[tuple[str, str]] = []

    def grant(self, verb: str, keys: tuple[str, ...]) -> None:
        """A confirmation of `verb` on `keys` was answered yes."""
        with self.lock:
            for key in keys:
                self.tokens[("create", "*") if verb in ("create", "resubmit") else (verb, key)] += 1

    def _spend(self, verb: str, key: str) -> None:
        token = ("create", "*") if verb == "create" else (verb, key)
        with self.lock:
            if self.tokens[token] > 0:
                self.tokens[token] -= 1
            else:
                self.unconfirmed.append((verb, key))

    def retarget(self, *, context: str | None, namespace: str | None) -> RecordingSource:
        """Same objects, records and tokens; other target (`:ns NAME` can be typed)."""
        clone = RecordingSource(
            self.objects, namespace=namespace, logs=self.logs, context=context or "fake-cluster"
        )
        clone.objects, clone.writes, clone.lock = self.objects, self.writes, self.lock
        clone.tokens, clone.unconfirmed = self.tokens, self.unconfirmed
        return clone

    def cancel_job(self, namespace: str, name: str) -> None:
        self._spend("cancel", f"{namespace}/{name}")
        super().cancel_job(namespace, name)

    def delete_job(self, namespace: str, name: str) -> None:
        self._spend("delete", f"{namespace}/{name}")
        super().delete_job(namespace, name)

    def create_job(self, body: dict[str, Any]) -> str:
        self._spend("create", "*")
        return super().create_job(body)


@dataclass
class Console:
    """The shared app, its pilot, the source it started on and the loop it runs on."""

    loop: asyncio.AbstractEventLoop
    app: GryviaApp
    pilot: Pilot[None]
    source: RecordingSource
    originals: dict[str, dict[str, Any]]
    jobs: asyncio.Queue[tuple[Any, asyncio.Future[Any]]]

    def run(self, coro: Any) -> Any:
        """Run `coro` on the app's loop, inside the task that runs the app (Textual keeps
        the active app in context variables of that task); the app runs while it does."""
        done: asyncio.Future[Any] = self.loop.create_future()
        self.jobs.put_nowait((coro, done))
        return self.loop.run_until_complete(done)


@pytest.fixture(scope="module")
def console() -> Iterator[Console]:
    """One console over the fake cluster for every example of the module."""
    loop = asyncio.new_event_loop()
    source = RecordingSource(fixed_cluster(), logs={"llama-pretrain-0": LOG_LINES})
    originals = copy.deepcopy({job_key(o): o for o in source.objects["jobs"]})
    app = make_app(source, clock=lambda: NOW)
    jobs: asyncio.Queue[tuple[Any, asyncio.Future[Any]]] = asyncio.Queue()
    started: asyncio.Future[Pilot[None]] = loop.create_future()

    async def serve() -> None:
        async with app.run_test(size=(80, 24)) as pilot:
            await wait_loaded(pilot)
            started.set_result(pilot)
            while (job := await jobs.get())[0] is not None:
                coro, done = job
                try:
                    done.set_result(await coro)
                except BaseException as exc:
                    done.set_exception(exc)

    server = loop.create_task(serve())
    pilot = loop.run_until_complete(started)
    yield Console(loop, app, pilot, source, originals, jobs)
    jobs.put_nowait((None, loop.create_future()))
    loop.run_until_complete(server)
    loop.close()


def job_key(obj: dict[str, Any]) -> str:
    """`namespace/name`."""
    return f"{obj['metadata']['namespace']}/{obj['metadata']['name']}"


# -- driving -------------------------------------------------------------------------------


async def reset(c: Console, view: str) -> None:
    """Back to `view` (jobs or submit) with the cluster as it started: no dialog or pushed
    screen, the first target, deleted jobs back, created ones gone, the jobs filter and
    marks cleared, the form empty (each only when needed: this runs 500 times)."""
    app = c.app
    if app.source is not c.source:
        app._use_source(c.source)
        await wait_loaded(c.pilot)
    for name in dict.fromkeys([app.current_mode or view, view]):
        if app.current_mode != name:
            await app.switch_mode(name)
        while len(app.screen_stack) > 1:
            await app.pop_screen()
    jobs = {job_key(o): o for o in c.source.objects["jobs"]}
    for key in set(jobs) - set(c.originals):
        c.source.emit("jobs", "DELETED", jobs[key])
    for key, job in c.originals.items():
        if jobs.get(key) != job:
            c.source.emit("jobs", "ADDED" if key not in jobs else "MODIFIED", job)
    screen: Any = app.screen
    if view == "jobs":
        if screen.query_text or screen.table.marks or screen.query_one("#jobs-filter").value:
            screen.action_clear()
        screen.set_focus(screen.table)
    elif any(i.value != EMPTY_FORM.get(i.id, "") for i in screen.query(Input)):
        screen.action_reset()
    else:
        screen.set_focus(screen.query_one("#f-name"))
    await handled(c.pilot)


EMPTY_FORM = {"f-namespace": "default", "f-gpus": "1", "f-nodes": "1"}


def field_of(app: GryviaApp) -> Input | None:
    """The text field that has the focus, if one has."""
    focused = app.focused
    return focused if isinstance(focused, Input) else None


def check_confirmation(c: Console) -> None:
    """The dialog on screen names its jobs; `y` on it grants their writes."""
    dialog = c.app.screen
    assert isinstance(dialog, ConfirmDialog)
    assert dialog.subjects, f"a confirmation without the jobs it is about: {dialog.question}"
    shown = str(dialog.query_one("#confirm-subjects").render())
    for key in dialog.subjects[:NAMES_SHOWN]:
        assert key in shown, f"{key} is not named in {shown!r}"
    verb = dialog.question.split()[0].lower()
    c.source.grant(verb, dialog.subjects)


async def press_one(c: Console, key: str) -> None:
    """Press `key` and check what it did: a printable key in a text field typed itself and
    nothing else; `y` on a confirmation grants its writes."""
    app = c.app
    field, screen, mode = field_of(app), app.screen, app.current_mode
    typing = is_typing(app.focused)
    before = (field.value, field.cursor_position) if field else ("", 0)
    if key == "y" and isinstance(screen, ConfirmDialog):
        check_confirmation(c)
    app.post_message(key_event(key))
    await handled(c.pilot)
    if len(key) == 1 and typing:
        assert app.screen is screen and app.current_mode == mode, f"{key!r} acted while typing"
        if field is not None:
            value, at = before
            assert field.value == value[:at] + key + value[at:], f"{key!r} not typed in {field.id}"
    assert not c.source.unconfirmed, f"unconfirmed writes: {c.source.unconfirmed}"


async def burst(c: Console, kind: str, text: str, targets: list[tuple[int, str]]) -> None:
    """Post a whole burst at once, then check where its text went.

    kind `slash` / `colon`: `/` or `:` then `text`: the line that opened gets `text`, or, when
    a field had the focus already, that field gets `/` or `:` and `text`. kind `form`: in the
    submit form, from the Name field, for each (tabs, text) of `targets`: `tabs` tabs, then
    the text (typed in the field the tabs reach: a select takes none)."""
    app = c.app
    if kind == "form":
        if app.current_mode != "submit" or not isinstance(app.screen, ViewScreen):
            return
        app.screen.set_focus(app.screen.query_one("#f-name"))
        expected = {
            k: app.screen.query_one(f"#f-{k}").value for k in FORM_CHAIN if k[-4:] != "type"
        }
        keys: list[str] = []
        at = 0
        for tabs, chunk in targets:
            keys += ["tab"] * tabs
            at = (at + tabs) % len(FORM_CHAIN)
            name = FORM_CHAIN[at]
            if name in expected:
                keys += list(chunk)
                expected[name] += chunk
        for key in keys:
            app.post_message(key_event(key))
        await handled(c.pilot, 6)
        got = {k: app.screen.query_one(f"#f-{k}").value for k in expected}
        assert got == expected, f"keys {keys}"
        assert app.focused is app.screen.query_one(f"#f-{FORM_CHAIN[at]}")
    else:
        opener = "/" if kind == "slash" else ":"
        screen, field = app.screen, field_of(app)
        if field is None and is_typing(app.focused):
            return  # a select of the form has the focus: covered by single keys
        if field is None and not isinstance(screen, ViewScreen):
            return  # `:` on help or a dialog opens a prompt: covered by single keys
        opens = screen.active_bindings.get(KEY_NAMES[opener])
        if field is None and not (opens and opens.enabled):
            return  # no `/` here
        lines = {i.id: (i.value, i.cursor_position) for i in screen.query(Input)}
        for key in [opener, *text]:
            app.post_message(key_event(key))
        await handled(c.pilot, 6)
        line = field_of(app)
        assert app.screen is screen, f"{opener}{text} left {screen}"
        assert line is not None, f"{opener} opened no line on {screen}"
        value, at = lines[line.id]
        typed = text if field is None else opener + text
        assert line is (field or line)
        assert line.value == value[:at] + typed + value[at:], f"{line.id} lost some of {typed!r}"
    assert not c.source.unconfirmed, f"unconfirmed writes: {c.source.unconfirmed}"


# -- strategies ------------------------------------------------------------------------------

typed_text = st.text(alphabet=TYPED, min_size=1, max_size=5)
single = st.tuples(st.just("key"), st.sampled_from(SINGLE_KEYS))
line_burst = st.tuples(st.sampled_from(["slash", "colon"]), typed_text)
form_burst = st.tuples(
    st.just("form"),
    st.lists(st.tuples(st.integers(0, 9), typed_text), min_size=1, max_size=2),
)
steps = st.lists(st.one_of(single, single, single, line_burst, form_burst), max_size=4)


@settings(
    max_examples=int(os.environ.get("INPUT_EXAMPLES", amount(QUICK_EXAMPLES, 500))),
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    phases=[Phase.explicit, Phase.reuse, Phase.generate]
    + ([] if os.environ.get("INPUT_NO_SHRINK") else [Phase.shrink]),
)
@given(view=st.sampled_from(START_VIEWS), sequence=steps)
# The classes of bug the full run found, pinned so the quick run always covers them: a burst
# that crosses form fields (tab moved the focus late; keys went to the old field), text
# typed after `/` and `:` that held one-key bindings or markup, a write key after a burst.
@example(view="submit", sequence=[("form", [(0, "ab"), (3, "c1")])])
@example(view="submit", sequence=[("key", "tab"), ("form", [(8, "x y"), (1, "d")])])
@example(view="jobs", sequence=[("slash", "[/]"), ("key", "c"), ("key", "y")])
@example(view="jobs", sequence=[("colon", "ns x"), ("key", "d"), ("slash", "cyR")])
@example(view="jobs", sequence=[("key", " "), ("key", "ctrl+d"), ("key", "y")])
def test_random_keys_never_write_unconfirmed_nor_lose_typing(
    console: Console, view: str, sequence: list[tuple[str, Any]]
) -> None:
    async def drive() -> None:
        await reset(console, view)
        for step in sequence:
            if step[0] == "key":
                await press_one(console, step[1])
            elif step[0] == "form":
                await burst(console, "form", "", step[1])
            else:
                await burst(console, step[0], step[1], [])

    console.run(drive())
