"""The console's thread executor: one daemon thread per task, never joined.

Textual runs thread workers on the event loop's default executor, and `asyncio.run` joins that
executor when the app ends (a `ThreadPoolExecutor`'s threads are also joined at interpreter
exit). A worker blocked on a stalled network would then hold `q` for as long as its socket
timeout. Here every task runs on a fresh daemon thread and `shutdown()` waits for nothing:
quitting abandons whatever still blocks, and the process exits at once.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")


class DaemonExecutor(ThreadPoolExecutor):
    """A ThreadPoolExecutor (what asyncio accepts as default executor) whose tasks each run on
    their own daemon thread named `<prefix>-<n>`; `shutdown()` returns at once."""

    def __init__(self, thread_name_prefix: str = "gryvia") -> None:
        super().__init__(max_workers=1, thread_name_prefix=thread_name_prefix)
        self._prefix = thread_name_prefix
        self._count = 0
        self._closed = False
        self._lock_ = threading.Lock()

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        """Run `fn(*args, **kwargs)` on a new daemon thread; its Future."""
        future: Future[T] = Future()
        with self._lock_:
            if self._closed:
                raise RuntimeError("cannot schedule new work after shutdown")
            self._count += 1
            name = f"{self._prefix}-{self._count}"

        def run() -> None:
            if not future.set_running_or_notify_cancel():
                return
            try:
                result = fn(*args, **kwargs)
            except BaseException as exc:
                future.set_exception(exc)
            else:
                future.set_result(result)

        threading.Thread(target=run, name=name, daemon=True).start()
        return future

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """Refuse new tasks; never wait for running ones (they are daemon threads)."""
        with self._lock_:
            self._closed = True
