"""Reading the saved last lines of a job's deleted pods (`gryvia logs`, the console)."""

from __future__ import annotations

from typing import Any

from gryvia_cli.errors import NotFoundError
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
