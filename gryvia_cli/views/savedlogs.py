"""Reading and printing the saved last lines of a job's deleted pods (`gryvia logs`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gryvia_cli.core.savedlogs import saved_lines, saved_note
from gryvia_cli.errors import ForbiddenError, NotFoundError
from gryvia_cli.output import info, warn
from gryvia_operator.api.names import LABEL_SAVED_LOGS, saved_logs_name
from gryvia_operator.api.resources import CONFIG_MAP
from gryvia_operator.api.savedlogs import SavedLog, parse_saved_logs


def fetch_saved_logs(access: Any, namespace: str, job: str) -> dict[int, SavedLog]:
    """Replica -> saved log from the job's `<job>-logs` ConfigMap; {} when there is none or it
    is not a saved-logs ConfigMap. Raises ForbiddenError (and other GryviaErrors) as
    `access.get` does; prints nothing (the console uses it)."""
    try:
        obj = access.get(CONFIG_MAP, saved_logs_name(job), namespace)
    except NotFoundError:
        return {}
    labels = (obj.get("metadata") or {}).get("labels") or {}
    if labels.get(LABEL_SAVED_LOGS) != "true":
        return {}
    return parse_saved_logs(obj)


def read_saved_logs(access: Any, namespace: str, job: str) -> dict[int, SavedLog]:
    """Replica -> saved log from the job's `<job>-logs` ConfigMap; {} when there is none, it
    is not a saved-logs ConfigMap, or the user may not read ConfigMaps (said on stderr)."""
    try:
        return fetch_saved_logs(access, namespace, job)
    except ForbiddenError:
        warn(
            f"cannot read the saved logs of job {job} (ConfigMap {saved_logs_name(job)}): forbidden"
        )
        return {}


def print_saved(
    job: str,
    saved: SavedLog,
    write: Callable[[str], None],
    *,
    tail: int | None,
    prefix: str = "",
    timestamps: bool = False,
) -> None:
    """Say on stderr that `saved` is shown (when saved, whether cut), then write its lines
    (the last `tail`), each after `prefix`."""
    info(saved_note(job, saved))
    if timestamps:
        warn("saved lines carry no time stamps; --timestamps does not apply to them")
    for line in saved_lines(saved, tail):
        write(prefix + line)
