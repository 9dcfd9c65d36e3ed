"""Acting on several named objects in one command (`cancel a b c`, `delete job a b`): each one
is tried, its outcome printed, and the command fails at the end when any of them failed."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor

from gryvia_cli.errors import GryviaError
from gryvia_cli.output import failure, render_names, success

PARALLEL = 8
"""Requests in flight at once: `gryvia cancel` of a 500-element array is 1000 API calls, each
waiting on the admission webhook, so one at a time takes minutes (client-go's default QPS
burst is 10; eight keeps a shared API server responsive)."""

Outcome = tuple[str, str] | None
"""(past-tense message, `kind.group/name`) of an object acted on; None when it was skipped
(the action printed why)."""


def act_on_each(
    names: Sequence[str],
    act: Callable[[str], Outcome],
    *,
    label: Callable[[str], str],
    what: str,
) -> None:
    """Run `act(name)` for every name: an outcome prints `✓ message` on stderr and the object
    name on stdout (`-o name` style, for scripts); a GryviaError prints `✗ <label>: <message>`
    and counts as failed. Raises GryviaError `N of M <what> could not be ...` at the end when
    any failed (`what` is e.g. "job(s) could not be cancelled"). Up to PARALLEL names are
    acted on at once; outcomes print in the order of `names`."""
    failed = 0
    for name, outcome in _each(names, act):
        if isinstance(outcome, GryviaError):
            failed += 1
            failure(f"{label(name)}: {outcome.message}")
            continue
        if outcome is not None:
            success(outcome[0])
            render_names([outcome[1]])
    if failed:
        raise GryviaError(f"{failed} of {len(names)} {what}")


def _each(
    names: Sequence[str], act: Callable[[str], Outcome]
) -> Iterator[tuple[str, Outcome | GryviaError]]:
    """(name, outcome or the GryviaError it raised) for every name, in order, with up to
    PARALLEL calls of `act` running at once; any other exception propagates."""

    def attempt(name: str) -> Outcome | GryviaError:
        try:
            return act(name)
        except GryviaError as exc:
            return exc

    if len(names) <= 1:
        yield from ((name, attempt(name)) for name in names)
        return
    with ThreadPoolExecutor(max_workers=min(PARALLEL, len(names))) as pool:
        yield from zip(names, pool.map(attempt, names), strict=True)
