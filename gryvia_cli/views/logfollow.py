"""Following several container logs at once, through stalls and cuts of the connection.

Each log is read by its own thread (which also opens it, so a slow answer blocks nobody);
one pump thread writes the lines, polls the pods (has the container ended?) and reopens
streams. Every stream is opened with `timestamps=true` and carries a `LogCursor`: when it
breaks (a cut, a reset) or when the API server answers again after an outage (a stream
stalled by a blackhole may never wake up), it is reopened from its cursor's `sinceTime`
and the replayed lines already printed are dropped, so every line is written once. The
connection's state goes through one `kube.retry.Link` (`reconnecting ...` / `reconnected`).

The sandbox serves logs through kwok, which keeps a follow stream open after the container
exits, so a stream also ends once its container has ended (or its pod went away, or the job
is terminal) and no line came for `drain` seconds after that.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from gryvia_cli.core.logresume import LogCursor
from gryvia_cli.core.pods import container_state
from gryvia_cli.errors import GryviaError, NotFoundError, WaitTimeoutError
from gryvia_cli.kube import resources as r
from gryvia_cli.kube.errors import is_transient
from gryvia_cli.kube.retry import Link
from gryvia_cli.kube.stream import stop_stream, stream_lines

OPEN_GRACE = 10.0
"""Seconds a log reopened after its container ended may go unanswered before it is dropped."""
Event = tuple[int, int, str, Any]
"""(stream index, reader generation, kind: opened|line|end|error, value)."""


@dataclass
class FollowedLog:
    """One log being followed: what to open, where it stands, and its reader's state."""

    pod: str
    container: str | None
    prefix: str
    cursor: LogCursor
    tail: int | None
    generation: int = 0
    """Bumped for every reader started; events of older readers are ignored."""
    response: Any = None
    reading: bool = False
    started_at: float = 0.0
    opened_at: float = 0.0
    restarting: bool = False
    """Set when the pump shut the stream itself to reopen it (not a failure)."""
    reopen_at: float | None = None
    open: bool = True
    ended_at: float | None = None
    last_line_at: float = 0.0


@dataclass
class LogPump:
    """Follow `logs` until each has ended; see the module docstring. `done` says whether the
    job is terminal; `deadline` (time.monotonic()) raises WaitTimeoutError with `expired`."""

    access: Any
    namespace: str
    logs: list[FollowedLog]
    write: Callable[[str], None]
    link: Link
    done: Callable[[], bool] | None = None
    deadline: float | None = None
    expired: tuple[str, str] = ("the log follow", "")
    poll: float = 1.0
    """Seconds between pod polls (and before reopening a log the server closed)."""
    drain: float = 1.0
    """Seconds without a line after the container ended before its log is closed."""
    events: queue.Queue[Event] = field(default_factory=queue.Queue)
    lost_at: float | None = None
    retry_at: float = 0.0
    """When the next attempt of the current outage is due (time.monotonic())."""

    def run(self) -> None:
        """Start every reader and pump until all logs have ended; close them in any case."""
        try:
            for index in range(len(self.logs)):
                self._start(index)
            self._loop()
        finally:
            for log in self.logs:
                log.open = False
                self._close(log)

    # -- readers ----------------------------------------------------------------------------

    def _start(self, index: int) -> None:
        log = self.logs[index]
        log.generation += 1
        log.reading, log.restarting, log.reopen_at = True, False, None
        log.started_at = time.monotonic()
        since = log.cursor.resume()
        threading.Thread(
            target=self._read,
            args=(index, log.generation, since, log.tail if since is None else None),
            daemon=True,
            name=f"log-{log.pod}",
        ).start()

    def _read(self, index: int, generation: int, since: str | None, tail: int | None) -> None:
        log = self.logs[index]
        put = self.events.put
        try:
            response = self.access.pod_log(
                log.pod,
                self.namespace,
                container=log.container,
                tail=tail,
                timestamps=True,
                follow=True,
                since_time=since,
            )
        except Exception as exc:
            put((index, generation, "error", exc))
            return
        put((index, generation, "opened", response))
        try:
            for line in stream_lines(response):
                put((index, generation, "line", line))
        except Exception as exc:  # cut, reset, or shut down by the pump
            put((index, generation, "error", exc))
            return
        put((index, generation, "end", None))

    def _close(self, log: FollowedLog) -> None:
        if log.response is not None:
            stop_stream(log.response)
            log.response.release_conn()
            log.response = None

    # -- the pump ---------------------------------------------------------------------------

    def _loop(self) -> None:
        next_check = time.monotonic() + self.poll
        while any(log.open for log in self.logs):
            try:
                event: Event | None = self.events.get(timeout=0.2)
            except queue.Empty:
                event = None
            now = time.monotonic()
            if event is not None:
                self._handle(event, now)
            for index, log in enumerate(self.logs):
                if log.open and not log.reading and (log.reopen_at or 0) <= now:
                    self._start(index)
                if log.open and self._drained(log, now):
                    log.open = False
                    self._close(log)
            if now >= next_check:
                next_check = now + self._check(now)

    def _drained(self, log: FollowedLog, now: float) -> bool:
        """True once `log`'s container has ended and its open stream was quiet for `drain`
        seconds; or, with the API server answering, a reopen has had no answer for
        OPEN_GRACE seconds since then (a server may hold back an empty log's headers)."""
        if log.ended_at is None:
            return False
        if log.response is not None:
            return now - max(log.ended_at, log.last_line_at, log.opened_at) >= self.drain
        since = max(log.ended_at, log.started_at)
        return log.reading and self.lost_at is None and now - since >= OPEN_GRACE

    def _handle(self, event: Event, now: float) -> None:
        index, generation, kind, value = event
        log = self.logs[index]
        if generation != log.generation or not log.open:
            if kind == "opened":  # a reader the pump gave up on: close what it opened
                stop_stream(value)
                value.release_conn()
            return
        if kind == "opened":
            log.response, log.opened_at = value, now
            self._answered(now)
        elif kind == "line":
            shown = log.cursor.accept(value)
            if shown is not None:
                self.write(log.prefix + shown)
            log.last_line_at = now
        else:
            self._broken(log, kind, value, now)

    def _broken(self, log: FollowedLog, kind: str, exc: Any, now: float) -> None:
        """A reader ended: reopen its log (now, or after a back-off), or stop following it."""
        restarting = log.restarting
        if log.response is not None:
            log.response.release_conn()
            log.response = None
        log.reading = False
        if isinstance(exc, NotFoundError):  # the pod went away
            log.open = False
        elif restarting:
            log.reopen_at = now
        elif kind == "end" and log.ended_at is not None:
            log.open = False  # the container ended and the server closed its log
        elif kind == "end":  # closed by the server while the container may still write
            log.reopen_at = now + self.poll
        elif isinstance(exc, GryviaError) and not is_transient(exc):
            raise exc  # an answer (403, 400, ...) that retrying will not change
        else:
            log.reopen_at = now + self._lost(exc, now)

    def _lost(self, exc: BaseException, now: float) -> float:
        """Record a failed attempt and return the seconds to wait before the next one.
        Failures before the next attempt is due (every stream cut at once, requests that
        were already under way) are part of the same attempt: they wait for it too."""
        if self.lost_at is not None and now < self.retry_at:
            return self.retry_at - now
        if self.lost_at is None:
            self.lost_at = now
        delay = self.link.failed(exc)
        self.retry_at = now + delay
        return delay

    def _answered(self, now: float) -> None:
        """The API server answered: after an outage, reopen every stream opened before it
        began (a stalled stream may never deliver again; the cursor drops the replay)."""
        lost_at, self.lost_at = self.lost_at, None
        self.link.ok()
        if lost_at is None:
            return
        for log in self.logs:
            if log.open and log.reading and log.started_at < lost_at:
                log.restarting = True
                if log.response is not None:
                    stop_stream(log.response)
                else:  # still opening: let that reader go, start another
                    log.generation += 1
                    log.reading, log.reopen_at = False, now

    def _check(self, now: float) -> float:
        """Poll once: the deadline, the job, the pods whose container still runs (during an
        outage, one pod in any case: it tells when the API server is back); return seconds to
        the next poll."""
        if self.deadline is not None and now > self.deadline:
            message, hint = self.expired
            raise WaitTimeoutError(message, hint=hint)
        still_open = [log for log in self.logs if log.open]
        waiting = [log for log in still_open if log.ended_at is None]
        probe = waiting or (still_open[:1] if self.lost_at is not None else [])
        asked = bool(probe)
        try:
            if waiting and self.done is not None and self.done():
                for log in waiting:
                    log.ended_at = now
                probe = probe[:1] if self.lost_at is not None else []
            for log in probe:
                try:
                    obj = self.access.get(r.POD, log.pod, self.namespace)
                except NotFoundError:
                    log.ended_at = log.ended_at or now
                    continue
                if finished(obj, log.container):
                    log.ended_at = log.ended_at or now
        except Exception as exc:
            if not is_transient(exc):
                raise
            return self._lost(exc, now)
        if asked:
            self._answered(now)
        return self.poll


def finished(pod: Mapping[str, Any], container: str | None) -> bool:
    """True once `container` of `pod` has terminated for good (no restart coming)."""
    state, _ = container_state(pod, container)
    policy = (pod.get("spec") or {}).get("restartPolicy", "Always")
    phase = (pod.get("status") or {}).get("phase")
    return state == "terminated" and (policy != "Always" or phase in ("Succeeded", "Failed"))


def followed(targets: Sequence[Any], tail: int | None, timestamps: bool) -> list[FollowedLog]:
    """A FollowedLog for each LogTarget (pod, container, prefix)."""
    return [
        FollowedLog(t.pod, t.container, t.prefix, LogCursor(keep_timestamps=timestamps), tail)
        for t in targets
    ]
