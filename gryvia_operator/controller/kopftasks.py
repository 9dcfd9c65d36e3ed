"""kopf stops only its own tasks: the webhook's and probes' connections outlive a kopf run.

When kopf's run ends (its stop flag, as when a standby becomes leader and its standby kopf
makes way for the full one) kopf treats every task created in the loop since it started as its
own: it waits up to 5 s for them and then cancels them (`kopf._core.reactor.running.run_tasks`;
its docstring: "every task created after the operator's startup is assumed to be a task or a
sub-task of the operator"). That includes the task aiohttp runs for each keep-alive connection
of the webhook, probe and metrics servers. Measured on the real node: every hand-over spent
those 5 s before the new leader's kopf started, and the API server's next admission review on
a connection opened during the standby's run was read by nobody ("context deadline exceeded",
failing open).

`install()` sets a task factory on the running loop that records the tasks created outside a
kopf run (`kopf_context()` marks the inside through a context variable, which every task
inherits from its creator), and makes kopf's task listing leave those out. Where kopf's
internals differ from the version this was written against (1.37 to 1.45), it changes nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import weakref
from collections.abc import Collection, Iterator
from typing import Any

log = logging.getLogger("gryvia.operator")

try:  # kopf's private module: checked, never assumed
    from kopf._cogs.aiokits import aiotasks as _aiotasks
except ImportError:  # pragma: no cover - a kopf without it keeps its own listing
    _aiotasks = None  # type: ignore[assignment]

_IN_KOPF: contextvars.ContextVar[bool] = contextvars.ContextVar("gryvia_in_kopf", default=False)
_FOREIGN: weakref.WeakSet[asyncio.Task[Any]] = weakref.WeakSet()
"""Tasks created outside any kopf run since `install()`: never kopf's to stop."""


@contextlib.contextmanager
def kopf_context() -> Iterator[None]:
    """Mark the code run inside (kopf's `operator()`) and every task it creates as kopf's."""
    token = _IN_KOPF.set(True)
    try:
        yield
    finally:
        _IN_KOPF.reset(token)


def _factory(loop: asyncio.AbstractEventLoop, coro: Any, **kwargs: Any) -> asyncio.Task[Any]:
    task: asyncio.Task[Any] = asyncio.Task(coro, loop=loop, **kwargs)
    if not _IN_KOPF.get():
        _FOREIGN.add(task)
    return task


async def _kopf_tasks(*, ignored: Collection[asyncio.Task[Any]] = frozenset()) -> set[Any]:
    """kopf's `all_tasks`, less the tasks created outside a kopf run."""
    current = asyncio.current_task()
    return {
        task
        for task in asyncio.all_tasks()
        if task is not current and task not in ignored and task not in _FOREIGN
    }


def install() -> bool:
    """Track the running loop's tasks and patch kopf's listing; True when installed (call
    from the loop, before kopf and the servers start)."""
    if _aiotasks is None or not callable(getattr(_aiotasks, "all_tasks", None)):
        log.warning("kopf's task listing not found: a kopf stop also cancels the servers' tasks")
        return False
    loop = asyncio.get_running_loop()
    if loop.get_task_factory() not in (None, _factory):
        return False  # someone else's factory: leave both alone
    loop.set_task_factory(_factory)
    _aiotasks.all_tasks = _kopf_tasks
    return True
