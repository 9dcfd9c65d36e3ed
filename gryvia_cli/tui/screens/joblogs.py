"""The Job view's logs: which pod, when to follow, when to stop, and the log keys.

A thread worker follows the chosen container and appends lines to a buffer that a 0.1 s
timer moves into the LogView. kwok (the sandbox) never ends a follow of a finished container,
so the pod watch decides: when the container terminates, the follow is stopped and the whole
log is read once more for any lines the follow had not delivered.

When the pod shown is deleted (a cancel, a preemption, a failed sibling), its lines stay and
the view does not jump to another pod; it reads the job's saved-logs ConfigMap (`<job>-logs`,
which the operator writes when it deletes pods, like `gryvia logs` does) and shows the saved
lines when they hold more than the view had, saying so in the status line. A job with no pod
left shows its saved logs at once.
"""

from __future__ import annotations

import threading
from collections import deque
from typing import Any, ClassVar

from textual import on, work
from textual.widgets import Input, Static, TabbedContent

from gryvia_cli.core.jobs import sort_pods
from gryvia_cli.core.pods import container_state, first_container, restart_count
from gryvia_cli.errors import GryviaError
from gryvia_cli.tui.bindings import LOGS
from gryvia_cli.tui.logstatus import LogStatus, log_status_text
from gryvia_cli.tui.messages import LogsEnded, SavedLogsLoaded
from gryvia_cli.tui.screens.base import ViewScreen
from gryvia_cli.tui.source import LogStream
from gryvia_cli.tui.widgets.filterinput import FilterInput
from gryvia_cli.tui.widgets.logview import LogView
from gryvia_cli.usertext import user_text
from gryvia_operator.api.savedlogs import SavedLog

LOG_DRAIN_EVERY = 0.1
LOG_ACTIONS = frozenset(k.action.split("(")[0] for k in LOGS)


class JobLogsBase(ViewScreen):
    """Log following for the Job view (which supplies `pods`, `namespace` and the tabs)."""

    job_ns: str
    job_name: str
    pods: dict[str, dict[str, Any]]
    _lock: threading.Lock
    LOG_ACTIONS: ClassVar[frozenset[str]] = LOG_ACTIONS

    def __init__(self) -> None:
        super().__init__()
        self.log_pod: str | None = None
        self.log_container = ""
        self.log_note = "waiting for pods"
        self.log_state = "idle"
        self._log_lines: deque[tuple[int, str]] = deque()
        self._log_gen = 0
        self._log_stream: LogStream | None = None
        self._ending = False
        self.log_previous = False
        """Showing the log of the container's instance before its last restart (`p`)."""
        self.saved: dict[int, SavedLog] = {}
        self.saved_shown: SavedLog | None = None
        self.saved_wanted = False
        """True while the pod shown is gone (or there is none) and no saved log is shown."""
        self.saved_replaced = False
        """True when the saved lines replaced the lines read (they held more)."""

    def _logs_shown(self) -> bool:
        tabs = self.query("#job-tabs").results(TabbedContent)
        return any(t.active == "logs" for t in tabs)  # none while composing or closing

    def _pod_names(self) -> list[str]:
        with self._lock:
            pods = list(self.pods.values())
        return [str((p.get("metadata") or {}).get("name")) for p in sort_pods(pods)]

    def _check_logs(self) -> None:
        """Start following when the logs are shown and a pod has started; stop following
        when the followed container has terminated."""
        if self.log_previous:
            self._update_log_status()
            return
        with self._lock:
            pod = self.pods.get(self.log_pod or "")
        if self.log_pod is None:
            names = self._pod_names()
            if not names or not self._logs_shown():
                if not names and self._logs_shown():
                    self._want_saved()
                self._update_log_status()
                return
            self.log_pod = names[0]
            with self._lock:
                pod = self.pods[self.log_pod]
            self.log_state = "idle"
        if pod is None:  # the pod shown was deleted
            self._pod_gone()
            return
        state, _ = container_state(pod, first_container(pod))
        if self.log_state == "idle" and state != "waiting":
            self._start_logs(pod, finished=state == "terminated")
        elif self.log_state == "following" and state == "terminated" and not self._ending:
            self._ending = True
            if self._log_stream is not None:
                self._log_stream.stop()
        self._update_log_status()

    # -- saved logs ------------------------------------------------------------------------

    def _pod_gone(self) -> None:
        """The pod shown was deleted: keep its lines, stop its stream, look for saved ones."""
        if self.log_state not in ("gone", "saved"):
            self._drain_logs()
            self._stop_logs()  # a last read of the log may still deliver lines: kept
            self.log_state = "gone"
            self.log_note = "pod deleted"
        if self._logs_shown():
            self._want_saved()
        self._update_log_status()

    def _want_saved(self) -> None:
        if self.saved_shown is None and not self.saved_wanted:
            self.saved_wanted = True
            self._read_saved()

    @work(thread=True, exclusive=True, group="saved-logs")
    def _read_saved(self) -> None:
        """Read the saved-logs ConfigMap (thread worker; the events poll repeats it)."""
        self.fetch_saved()

    def fetch_saved(self) -> None:
        """Read the saved logs now and post SavedLogsLoaded (any thread; blocks)."""
        try:
            self.post_message(SavedLogsLoaded(self.source.saved_logs(self.job_ns, self.job_name)))
        except GryviaError as exc:
            self.post_message(SavedLogsLoaded({}, exc.message))

    def on_saved_logs_loaded(self, message: SavedLogsLoaded) -> None:
        """Show the saved lines of the pod shown (or of the lowest replica without pods)."""
        self.saved = message.saved
        if not self.saved_wanted:
            return
        if message.error:
            self.log_note = f"saved logs unreadable: {message.error}"
        entry = self._saved_for(self.log_pod)
        if entry is not None:
            self._show_saved(entry)
        self._update_log_status()

    def _saved_for(self, pod: str | None) -> SavedLog | None:
        if pod is None:
            return self.saved[min(self.saved)] if self.saved else None
        return next((s for s in self.saved.values() if s.pod == pod), None)

    def _show_saved(self, entry: SavedLog) -> None:
        self.saved_wanted = False
        self.saved_shown = entry
        self.log_pod = self.log_pod or entry.pod
        self.log_state = "saved"
        view = self.query_one(LogView)
        self.saved_replaced = len(entry.text_lines()) > len(view.lines)
        if self.saved_replaced:
            self._log_gen += 1  # lines a closing stream still delivers are not shown
            view.clear()
            view.append(entry.text_lines())
        view.empty_text = "The saved log is empty."

    def _start_logs(self, pod: dict[str, Any], *, finished: bool) -> None:
        self._stop_logs()
        self.saved_shown = None
        self.saved_wanted = False
        self._log_gen += 1
        self._ending = finished
        self.log_container = first_container(pod)
        self.log_state = "reading" if finished else "following"
        self.log_note = ""
        view = self.query_one(LogView)
        view.clear()
        view.empty_text = "No log lines yet."
        self._stream_logs(
            self._log_gen, self.job_ns, self.log_pod or "", self.log_container, finished
        )

    @work(thread=True, exclusive=True, group="logs")
    def _stream_logs(self, gen: int, ns: str, pod: str, container: str, finished: bool) -> None:
        """Follow (or read) one container's log into the buffer (thread worker)."""
        count = 0
        try:
            if not finished:
                stream = self.source.follow_log(ns, pod, container)
                self._log_stream = stream
                self.console.track(stream)
                try:
                    for line in stream.lines():
                        self._log_lines.append((gen, line))
                        count += 1
                finally:
                    self.console.untrack(stream)
                if not self._ending:
                    self.post_message(LogsEnded(pod, "log stream closed", gen))
                    return
            for line in self.source.read_log(ns, pod, container)[count:]:
                self._log_lines.append((gen, line))
            self.post_message(LogsEnded(pod, "container finished", gen))
        except GryviaError as exc:
            self.post_message(LogsEnded(pod, exc.message, gen))
        except Exception as exc:
            reason = (str(exc) or type(exc).__name__).splitlines()[0]
            self.post_message(LogsEnded(pod, reason, gen))

    def _read_previous(self) -> None:
        """Read the previous container's log of the shown pod (the first pod if none)."""
        names = self._pod_names()
        if self.log_pod not in names:
            self.log_pod = names[0] if names else None
        with self._lock:
            pod = self.pods.get(self.log_pod or "")
        if pod is None:
            self._update_log_status()
            return
        self._log_gen += 1
        self.log_container = first_container(pod)
        self.log_state = "reading"
        self.log_note = ""
        view = self.query_one(LogView)
        view.clear()
        view.empty_text = "No lines in the previous container's log."
        if restart_count(pod, self.log_container) == 0:  # nothing to ask the kubelet for
            view.empty_text = "No previous container: it has not restarted (RESTARTS 0)."
            self.log_state, self.log_note = "ended", "no previous container"
            self._update_log_status()
            return
        self._read_previous_log(self._log_gen, self.job_ns, self.log_pod or "", self.log_container)

    @work(thread=True, exclusive=True, group="logs")
    def _read_previous_log(self, gen: int, ns: str, pod: str, container: str) -> None:
        """Read the log of `container` before its last restart into the buffer (thread)."""
        try:
            for line in self.source.read_log(ns, pod, container, previous=True):
                self._log_lines.append((gen, line))
        except GryviaError as exc:
            self.post_message(LogsEnded(pod, exc.message, gen))
            return
        self.post_message(LogsEnded(pod, "the container's log before its last restart", gen))

    def _stop_logs(self) -> None:
        stream, self._log_stream = self._log_stream, None
        if stream is not None:
            self._ending = False
            stream.stop()

    def _drain_logs(self) -> None:
        if not self._log_lines:
            return
        lines = []
        while self._log_lines:
            gen, line = self._log_lines.popleft()
            if gen == self._log_gen:
                lines.append(line)
        self.query_one(LogView).append(lines)
        self._update_log_status()

    def on_logs_ended(self, message: LogsEnded) -> None:
        """A stream ended: say why."""
        if message.pod != self.log_pod or self.log_state in ("gone", "saved"):
            return
        if message.gen is not None and message.gen != self._log_gen:
            return  # a read already replaced (its lines were dropped too)
        self._drain_logs()
        self.log_state = "ended"
        self.log_note = message.reason
        self._update_log_status()

    def _update_log_status(self) -> None:
        view = self.query_one(LogView)
        text = log_status_text(
            LogStatus(
                pods=tuple(self._pod_names()),
                pod=self.log_pod,
                state=self.log_state,
                note=self.log_note,
                lines=len(view.lines),
                follow=view.follow,
                wrap=view.wrap,
                timestamps=view.timestamps,
                search=view.search,
                previous=self.log_previous,
                saved=self.saved_shown,
                saved_replaced=self.saved_replaced,
                saved_wanted=self.saved_wanted,
            )
        )
        self.query_one("#log-status", Static).update(user_text(text))

    # -- keys ------------------------------------------------------------------------------

    def action_follow(self) -> None:
        """Keep the end in view, or stop doing so."""
        view = self.query_one(LogView)
        view.follow = not view.follow
        if view.follow:
            view.scroll_end(animate=False)
        self._update_log_status()

    def action_wrap(self) -> None:
        """Wrap long lines, or not."""
        view = self.query_one(LogView)
        view.set_options(wrap=not view.wrap)
        self._update_log_status()

    def action_timestamps(self) -> None:
        """Show timestamps, or not."""
        view = self.query_one(LogView)
        view.set_options(timestamps=not view.timestamps)
        self._update_log_status()

    def action_pod(self, step: int) -> None:
        """Show the next (1) or previous (-1) pod's log."""
        names = self._pod_names()
        if not names:
            self._next_saved(step)
            return
        index = names.index(self.log_pod) if self.log_pod in names else -step
        self.log_pod = names[(index + step) % len(names)]
        self._reopen_log()

    def action_previous(self) -> None:
        """Show the log of the container before its last restart, or go back to the
        current container's log."""
        self.log_previous = not self.log_previous
        if not self.log_previous:
            self.query_one(LogView).empty_text = "No log lines yet."
        self._reopen_log()

    def _reopen_log(self) -> None:
        """Stop the shown stream, clear the view and read the log again: the previous
        container's with `log_previous`, else the current one's."""
        self._stop_logs()
        self.log_state = "idle"
        self.query_one(LogView).clear()
        if self.log_previous:
            self._read_previous()
        else:
            self._check_logs()

    def _next_saved(self, step: int) -> None:
        """Without pods: show the next (1) or previous (-1) replica's saved log."""
        entries, shown = list(self.saved.values()), self.saved_shown
        if len(entries) < 2 or shown is None:
            return
        index = next((i for i, s in enumerate(entries) if s.replica == shown.replica), 0)
        entry = entries[(index + step) % len(entries)]
        self.log_pod = entry.pod
        self.query_one(LogView).clear()
        self._show_saved(entry)
        self._update_log_status()

    def action_search(self) -> None:
        """Open the search line."""
        self.query_one("#log-search", FilterInput).open()

    @on(Input.Submitted, "#log-search")
    def _search(self, event: Input.Submitted) -> None:
        view = self.query_one(LogView)
        found = view.set_search(event.value.strip())
        if event.value.strip() and not found:
            self.notify(f"“{event.value.strip()}” is not in the log", severity="warning")
        self._update_log_status()

    @on(Input.Changed, "#log-search")
    def _search_cleared(self, event: Input.Changed) -> None:
        if not event.value and self.query_one(LogView).search:
            self.query_one(LogView).set_search("")
            self._update_log_status()

    def action_match(self, step: int) -> None:
        """Jump to the next (1) or previous (-1) match."""
        self.query_one(LogView).jump(step)
        self._update_log_status()
