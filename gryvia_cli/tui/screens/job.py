"""The Job view: overview (spec, status, cost, waiting reason, conditions, pods, events), the
job's YAML, and its logs followed live with pod switch, search, wrap and timestamps."""

from __future__ import annotations

import contextlib
import threading
from typing import Any, ClassVar

import yaml
from textual import on
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.css.query import NoMatches
from textual.highlight import highlight
from textual.widget import Widget
from textual.widgets import Static, TabbedContent, TabPane

from gryvia_cli.core.jobs import gpu_text
from gryvia_cli.core.queue import is_waiting, scheduling_events, wait_reason
from gryvia_cli.core.watching import WatchEvent
from gryvia_cli.errors import GryviaError
from gryvia_cli.tui.bindings import JOB, LOGS, bindings, write_actions
from gryvia_cli.tui.messages import EventsLoaded, PodsChanged
from gryvia_cli.tui.rows import phase_cell
from gryvia_cli.tui.screens.joblogs import LOG_ACTIONS, LOG_DRAIN_EVERY, JobLogsBase
from gryvia_cli.tui.source import WatchCallbacks
from gryvia_cli.tui.store import Change
from gryvia_cli.tui.widgets.filterinput import FilterInput
from gryvia_cli.tui.widgets.jobdetail import JobFacts, JobOverview
from gryvia_cli.tui.widgets.logview import LogView
from gryvia_cli.tui.widgets.textfield import is_typing
from gryvia_cli.usertext import user_text
from gryvia_operator.api.names import LABEL_JOB

EVENTS_EVERY = 5.0


class _Poll:
    """A stoppable loop calling `fn` every `interval` seconds (for a thread worker)."""

    def __init__(self, fn: Any, interval: float) -> None:
        self.fn = fn
        self.interval = interval
        self._stop = threading.Event()

    def run(self) -> None:
        while not self._stop.is_set():
            self.fn()
            self._stop.wait(self.interval)

    def stop(self) -> None:
        self._stop.set()


class JobScreen(JobLogsBase):
    """One job; pushed over Jobs or Queue."""

    BINDINGS: ClassVar = [*bindings(JOB), *bindings(LOGS)]
    WRITE_ACTIONS: ClassVar = write_actions(JOB)

    def __init__(self, key: str, tab: str = "overview") -> None:
        super().__init__()
        self.key = key
        self.job_ns, _, self.job_name = key.partition("/")
        self.initial_tab = tab
        self.pods: dict[str, dict[str, Any]] = {}
        self.events: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._runners: list[Any] = []

    def compose_body(self) -> ComposeResult:
        """Title, tabs."""
        yield Static(id="job-title", classes="title-line")
        with TabbedContent(initial=self.initial_tab, id="job-tabs"):
            with TabPane("Overview", id="overview"), VerticalScroll(id="job-overview-scroll"):
                yield JobOverview(id="job-overview")
            with TabPane("YAML", id="yaml"), VerticalScroll(id="job-yaml-scroll"):
                yield Static(id="job-yaml")
            with TabPane("Logs", id="logs"):
                yield Static(id="log-status", classes="status-line")
                yield FilterInput(
                    placeholder="search the log (enter: jump, n/N: next/previous)",
                    id="log-search",
                    return_to="#log-view",
                )
                yield LogView(id="log-view")

    @property
    def view_name(self) -> str:
        """The view this job was opened from."""
        return self.app.current_mode or "jobs"

    def on_mount(self) -> None:
        """Start the pod watch, the events poll and the log drain."""
        super().on_mount()
        callbacks = WatchCallbacks(self._pods_listed, self._pod_event, lambda s, d: None)
        pods = self.source.watcher(
            "pods",
            callbacks,
            namespace=self.job_ns,
            label_selector=f"{LABEL_JOB}={self.job_name}",
        )
        events = _Poll(self._read_events, EVENTS_EVERY)
        for runner in (pods, events):
            self._runners.append(runner)
            self.console.track(runner)
            self.run_worker(runner.run, thread=True, group="job", exit_on_error=False)
        self.set_interval(LOG_DRAIN_EVERY, self._drain_logs)
        # The tabs' panes may mount after this screen's on_mount: activate after a refresh.
        self.call_after_refresh(self._activate, self.initial_tab)

    def on_unmount(self) -> None:
        """Stop every stream this view started."""
        for runner in self._runners:
            runner.stop()
            self.console.untrack(runner)
        self._stop_logs()

    # -- data ------------------------------------------------------------------------------

    def _pods_listed(self, items: list[dict[str, Any]], version: str) -> None:
        with self._lock:
            self.pods = {str(p["metadata"]["name"]): p for p in items}
            snapshot = list(self.pods.values())
        self.post_message(PodsChanged(snapshot))

    def _pod_event(self, event: WatchEvent) -> None:
        name = str(event.object["metadata"]["name"])
        with self._lock:
            if event.type == "DELETED":
                self.pods.pop(name, None)
            else:
                self.pods[name] = event.object
            snapshot = list(self.pods.values())
        self.post_message(PodsChanged(snapshot))

    def _read_events(self) -> None:
        with self._lock:
            names = [self.job_name, *self.pods]
        with contextlib.suppress(GryviaError):  # events are best effort
            self.post_message(EventsLoaded(self.source.events(self.job_ns, names)))
        if self.saved_wanted:  # the pod shown is gone: the operator may save its lines later
            self.fetch_saved()

    def refresh_view(self, change: Change | None) -> None:
        """Redraw when this job changed."""
        others = {"usage", "skus", "gpunodes", "nodes"}
        mine = change is None or self.key in change.keys.get("jobs", set())
        if mine or (change is not None and change.kinds & others):
            self._redraw()

    def on_pods_changed(self, message: PodsChanged) -> None:
        """New pod list: redraw, maybe start or end the log stream."""
        self._redraw()
        self._check_logs()

    def on_events_loaded(self, message: EventsLoaded) -> None:
        """New events: redraw."""
        self.events = message.events
        self._redraw()

    def _redraw(self) -> None:
        item = self.store.jobs.get(self.key)
        try:
            title = self.query_one("#job-title", Static)
        except NoMatches:  # not composed yet, or being removed
            return
        if item is None:
            title.update(user_text(f" {self.key} · not found (deleted?)"))
            return
        now = self.now()
        job = item.summary
        phase, _ = phase_cell(job)
        title.update(user_text(f" {job.namespace}/{job.name} · {phase} · {gpu_text(job)}"))
        cost = self.store.job_cost(item, now)
        reason = None
        if is_waiting(job):
            sched = scheduling_events(self.events, list(self.pods.values()))
            reason = wait_reason(
                job,
                self.store.gpu_nodes(),
                self.store.allocated(),
                sched.get((job.namespace, job.name)),
            )
        facts = JobFacts(item, now, cost, reason, list(self.pods.values()), self.events)
        self.query_one(JobOverview).show(facts)
        if self.query_one("#job-tabs", TabbedContent).active == "yaml":
            self._render_yaml()

    def _render_yaml(self) -> None:
        item = self.store.jobs.get(self.key)
        if item is None:
            return
        raw = dict(item.raw)
        raw["metadata"] = {
            k: v for k, v in (raw.get("metadata") or {}).items() if k != "managedFields"
        }
        text = yaml.safe_dump(raw, sort_keys=False)
        self.query_one("#job-yaml", Static).update(highlight(text, language="yaml"))

    # -- tabs ------------------------------------------------------------------------------

    def action_tab(self, name: str) -> None:
        """Show tab `name` (overview, yaml, logs)."""
        self.query_one("#job-tabs", TabbedContent).active = name
        self._activate(name)

    @on(TabbedContent.TabActivated, "#job-tabs")
    def _tab_changed(self, event: TabbedContent.TabActivated) -> None:
        self._activate(event.pane.id or "overview")

    def _activate(self, name: str) -> None:
        if not self.is_mounted or not self.query("#log-view"):
            return  # not composed yet, or being removed: TabActivated comes again
        # a late TabActivated must not take the focus from a line the user is typing in (and
        # the focus moves now: Widget.focus() would move it later, after such a line opened)
        focus = not is_typing(self.focused)
        if name == "logs":
            target: Widget = self.query_one(LogView)
            self._check_logs()
        elif name == "yaml":
            self._render_yaml()
            target = self.query_one("#job-yaml-scroll")
        else:
            target = self.query_one("#job-overview-scroll")
        if focus:
            self.set_focus(target)
        self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Log keys only on the Logs tab; writes hidden when read-only."""
        if action in LOG_ACTIONS and self.query_one("#job-tabs", TabbedContent).active != "logs":
            return False
        return super().check_action(action, parameters)

    def action_back(self) -> None:
        """Back to the list."""
        self.dismiss()

    def action_cancel(self) -> None:
        """Cancel this job."""
        self.confirm_write("cancel", [self.key])

    def action_delete(self) -> None:
        """Delete this job."""
        self.confirm_write("delete", [self.key])

    def action_resubmit(self) -> None:
        """Submit a copy of this job."""
        self.confirm_write("resubmit", [self.key])

    def action_shell(self) -> None:
        """Suspend the console, run `gryvia shell` into this job's replica 0, come back."""
        self._run_suspended(["shell", self.job_name])

    def action_port_forward(self) -> None:
        """Ask for LOCAL:REMOTE, then suspend the console and forward until Ctrl-C."""
        from gryvia_cli.tui.screens.dialogs import PromptDialog

        def chosen(ports: str | None) -> None:
            if ports:
                self._run_suspended(["port-forward", self.job_name, ports])

        self.app.push_screen(PromptDialog("Forward LOCAL:REMOTE", "8888:8000"), chosen)

    def _run_suspended(self, args: list[str]) -> None:
        from gryvia_cli.tui.suspended import gryvia_argv, run_in_foreground, wait_after_failure

        argv = gryvia_argv(
            args,
            namespace=self.job_ns,
            context=self.console.target.context,
            kubeconfig=getattr(self.source, "kubeconfig", None),
        )
        try:
            with self.app.suspend():
                code = run_in_foreground(argv)
                wait_after_failure(args[0], code)
        except Exception as exc:  # no terminal to hand over (a test, a web driver)
            self.notify(f"cannot leave the console here: {exc}", severity="error")
            return
        if code not in (0, 130):
            self.notify(f"gryvia {args[0]} ended with exit code {code}", severity="warning")

    def action_events(self) -> None:
        """Events of this job and its pods."""
        from gryvia_cli.tui.screens.registry import open_job_events

        with self._lock:
            pods = list(self.pods)
        open_job_events(self.console, self.key, pods)
