"""Following a pod container's log as it is written, over the access layer's REST call.

`LineFollower.lines()` runs on a worker thread and blocks until the stream ends or `stop()`
(from any thread) shuts its socket down; failures arrive as GryviaError subclasses.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Protocol

from gryvia_cli.kube.errors import translate_transport_error
from gryvia_cli.kube.stream import HeldStream as _Stream


class LogAPI(Protocol):
    """The call of `KubeAccess` a LineFollower makes (tests pass a fake)."""

    server: str

    def pod_log(
        self,
        pod: str,
        namespace: str,
        *,
        container: str | None = None,
        tail: int | None = None,
        timestamps: bool = False,
        follow: bool = False,
    ) -> Any:
        """An open log stream (see `KubeAccess.pod_log`)."""
        ...


class LineFollower:
    """Stream the lines of a pod container's log (None: its only container) as the container
    writes them, each with its timestamp when `timestamps`; `stop()` ends it from any thread."""

    def __init__(
        self,
        access: LogAPI,
        pod: str,
        namespace: str,
        *,
        container: str | None = None,
        timestamps: bool = False,
    ) -> None:
        self.access = access
        self.pod = pod
        self.namespace = namespace
        self.container = container
        self.timestamps = timestamps
        self._stream = _Stream()

    def stop(self) -> None:
        """Stop streaming; safe from any thread, idempotent."""
        self._stream.stop()

    @property
    def stopped(self) -> bool:
        """True once `stop()` was called."""
        return self._stream.stop_event.is_set()

    def lines(self) -> Iterator[str]:
        """Yield log lines until the stream ends or `stop()`; GryviaErrors (API refusals,
        ClusterUnreachableError for a broken connection) propagate unless `stop()` caused
        them."""
        from urllib3.exceptions import HTTPError

        from gryvia_cli.kube.stream import stream_lines

        if self.stopped:
            return
        response = self.access.pod_log(
            self.pod,
            self.namespace,
            container=self.container,
            timestamps=self.timestamps,
            follow=True,
        )
        if not self._stream.open(response):
            return
        try:
            for line in stream_lines(response):
                if self.stopped:
                    break
                yield line
        except Exception as exc:
            if self.stopped:
                return  # stop() shut the socket under the read: that is how a follow ends
            if isinstance(exc, HTTPError):
                raise translate_transport_error(exc, self.access.server) from None
            raise
        finally:
            self._stream.close()
