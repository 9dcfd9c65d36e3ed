"""Acting on several named objects in one command (`cancel a b c`, `delete job a b`): each one
is tried, its outcome printed, and the command fails at the end when any of them failed."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from gryvia_cli.errors import GryviaError
from gryvia_cli.output import failure, render_names, success

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
    any failed (`what` is e.g. "job(s) could not be cancelled")."""
    failed = 0
    for name in names:
        try:
            outcome = act(name)
        except GryviaError as exc:
            failed += 1
            failure(f"{label(name)}: {exc.message}")
            continue
        if outcome is not None:
            success(outcome[0])
            render_names([outcome[1]])
    if failed:
        raise GryviaError(f"{failed} of {len(names)} {what}")
