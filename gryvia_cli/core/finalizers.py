"""Job pods held by the `gryvia.io/save-log` finalizer, for `gryvia status` (pure).

A job pod carries the finalizer while it runs; the operator saves its log and removes the
finalizer when the pod finishes or is deleted. A deleted pod that still carries it waits for
the operator: normal for a few seconds while an operator runs, stuck forever (and with it a
`kubectl delete namespace`) when none runs. This module says which case it is and the fix.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from gryvia_cli.core.cells import plural
from gryvia_operator.api.names import FINALIZER_SAVE_LOG

COMPONENT = "Pod finalizers"
RELEASE_COMMAND = "python -m gryvia_operator.release_finalizers"


def held_pods(pods: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The pods being deleted (deletionTimestamp set) that still carry the save-log
    finalizer."""
    out = []
    for pod in pods:
        meta = pod.get("metadata") or {}
        if meta.get("deletionTimestamp") and FINALIZER_SAVE_LOG in (meta.get("finalizers") or []):
            out.append(pod)
    return out


def patch_command(pod: Mapping[str, Any]) -> str:
    """The kubectl command removing the save-log finalizer from one pod (by its position)."""
    meta = pod.get("metadata") or {}
    index = list(meta.get("finalizers") or []).index(FINALIZER_SAVE_LOG)
    return (
        f"kubectl patch pod {meta.get('name')} -n {meta.get('namespace')} --type=json "
        f'-p \'[{{"op":"remove","path":"/metadata/finalizers/{index}"}}]\''
    )


def finalizer_state(
    pods: Sequence[Mapping[str, Any]] | None, operator_running: bool
) -> tuple[str, str, bool] | None:
    """(state, message, required) of the status line about held pods; None when no deleted
    job pod waits (or the pods could not be read). `Error` (required: status exits 1) when
    pods wait and no operator runs to release them, with the commands that release them;
    `OK` while an operator runs (it saves their logs within seconds)."""
    held = held_pods(pods or [])
    if not held:
        return None
    namespaces = sorted({str((p.get("metadata") or {}).get("namespace", "")) for p in held})
    where = (
        f"{plural(len(held), 'deleted job pod')} in "
        f"{plural(len(namespaces), 'namespace')} ({', '.join(namespaces[:5])}"
        f"{', ...' if len(namespaces) > 5 else ''})"
    )
    wait = "waits" if len(held) == 1 else "wait"
    if operator_running:
        logs = "its log" if len(held) == 1 else "their logs"
        return "OK", f"{where} {wait} for the operator to save {logs}", False
    return (
        "Error",
        f"{where} {wait} for the {FINALIZER_SAVE_LOG} finalizer, and no operator runs to remove "
        "it (a namespace deletion waits on them): start the operator, or release them all with "
        f"`{RELEASE_COMMAND}` (their logs are not saved), or one by one: {patch_command(held[0])}",
        True,
    )
