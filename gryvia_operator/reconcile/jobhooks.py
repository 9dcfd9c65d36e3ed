"""Job hooks, pure: which transitions of a job a GryviaJobHook delivers, their delivery ids,
payloads, the per-job delivery state, and the hook's Ready condition.

Transitions are read from the job's status facts, not from watch deltas, so an operator that
was down while a job moved still finds them:

- `Running`: `status.startTime` is set and the phase is Running or ended after running
  (Succeeded, Failed, Cancelled); its sequence is the run (`api.preemption.run_index`: the
  requeues; a kube-scheduler preemption keeps the run, so it starts no new Running);
- `Succeeded`, `Failed`, `Cancelled`, `Rejected`: the phase is that phase;
- `Preempted`: `status.preemptions` (an int, written by priorities: the quota gate's and the
  kube-scheduler's preemptions) is above 0, or the phase is Preempted (counted as 1 without
  the counter); its sequence is that count, so each preemption is its own transition;
- `IdleWarning`, `IdleJobSuspended`, `IdleJobCancelled`, `Stalled`: the job's condition
  `IdleGPUs` (reason IdleWarning), `IdleAction` (reason IdleJobSuspended or IdleJobCancelled)
  or `Stalled` is True (`reconcile.idlepolicy`, `reconcile.gpumetrics`); its time is the
  condition's lastTransitionTime and its sequence that time in epoch seconds, so a job warned
  again after it was active again is a new transition; the payload's message is the
  condition's (the policy, the measured activity and the window).

No backfill: a transition whose time is not after the hook's cutoff (`metadata.creationTimestamp`,
or `status.activeSince` after a resume) is never delivered. Times are whole seconds, so a
transition in the same second as the hook's creation or resume counts as before it (never
sent: a hook never sends what may have happened before it).

Delivery state lives in the job annotation `gryvia.io/job-hooks`: JSON
`{<delivery id>: {"hook", "event", "state", "attempts", "time"}}`, `state` one of
`delivering` (written before each POST attempt), `delivered`, `failed` (attempts spent) or
`refused` (the SSRF guard refused the target). A recorded final state is never sent again.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from gryvia_operator.api.core import LabelSelector, selector_matches
from gryvia_operator.api.jobhook import (
    DEFAULT_ATTEMPTS,
    DEFAULT_BACKOFF_SECONDS,
    STATE_ANNOTATION,
    GryviaJobHook,
)
from gryvia_operator.api.preemption import run_index
from gryvia_operator.reconcile.status import get_condition, timestamp

FINAL_STATES = frozenset({"delivered", "failed", "refused"})
MESSAGE_BYTES = 1000
RAN_PHASES = frozenset({"Running", "Succeeded", "Failed", "Cancelled"})
ENDED_EVENTS = ("Succeeded", "Failed", "Cancelled", "Rejected")
CONDITION_EVENTS: dict[str, dict[str, str]] = {
    "IdleGPUs": {"IdleWarning": "IdleWarning"},
    "IdleAction": {"IdleJobSuspended": "IdleJobSuspended", "IdleJobCancelled": "IdleJobCancelled"},
    "Stalled": {"": "Stalled"},
}
"""Condition type -> {reason: event} of the transitions read from True conditions (reason
"": any reason)."""


@dataclass(frozen=True)
class Transition:
    """One transition of a job: the event, its sequence (preemption count, or the time of a
    condition's transition) and when it happened (None: unknown, treated as after every
    hook)."""

    event: str
    seq: int
    time: datetime | None
    message: str | None = None
    """The payload's message (a condition's); None: the job's `status.message`."""
    preemptions: int | None = None
    """The payload's `preemptions`; None: `seq`."""


@dataclass(frozen=True)
class Due:
    """A delivery still owed: the transition, its id, and attempts already made."""

    transition: Transition
    delivery: str
    attempts: int


def parse_time(value: Any) -> datetime | None:
    """An RFC 3339 string or datetime as an aware UTC datetime; None when unset or unreadable."""
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    if not isinstance(value, str) or not value:
        return None
    try:
        found = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return found if found.tzinfo else found.replace(tzinfo=UTC)


def preemptions(status: Mapping[str, Any]) -> int:
    """`status.preemptions` (0 when unset or not an int; 1 for phase Preempted without it)."""
    count = status.get("preemptions")
    found = count if isinstance(count, int) and not isinstance(count, bool) else 0
    return max(found, 1) if status.get("phase") == "Preempted" else max(found, 0)


def _condition_time(status: Mapping[str, Any], kind: str) -> datetime | None:
    found = get_condition(status.get("conditions") or [], kind)
    return parse_time(found.get("lastTransitionTime")) if found else None


def transitions(job: Mapping[str, Any]) -> list[Transition]:
    """Every transition the job's status shows (see the module docstring)."""
    status = job.get("status") or {}
    phase = str(status.get("phase") or "Pending")
    count = preemptions(status)
    out = []
    if status.get("startTime") and phase in RAN_PHASES:
        run = run_index(status)
        out.append(Transition("Running", run, parse_time(status.get("startTime"))))
    if count > 0:
        when = _condition_time(status, "Preempted")
        if when is None and phase == "Preempted":
            when = parse_time(status.get("completionTime"))
        out.append(Transition("Preempted", count, when))
    if phase in ENDED_EVENTS:
        when = parse_time(status.get("completionTime")) or _condition_time(status, phase)
        out.append(Transition(phase, count, when or _condition_time(status, "Ready")))
    for kind, reasons in CONDITION_EVENTS.items():
        found = get_condition(status.get("conditions") or [], kind)
        if not found or found.get("status") != "True":
            continue
        event = reasons.get(str(found.get("reason"))) or reasons.get("")
        if event is None:
            continue
        when = parse_time(found.get("lastTransitionTime"))
        seq = int(when.timestamp()) if when is not None else 0
        text = str(found.get("message") or "")
        out.append(Transition(event, seq, when, text, count))
    return out


def selects(selector: LabelSelector | None, labels: Mapping[str, str]) -> bool:
    """True when the label selector matches `labels` (`api.core.selector_matches`)."""
    return selector_matches(selector, labels)


def watches(hook: GryviaJobHook, job: Mapping[str, Any]) -> bool:
    """True when `hook` watches `job`: same namespace, a watched kind, selector matches."""
    meta = job.get("metadata") or {}
    if meta.get("namespace") != hook.namespace:
        return False
    kinds = hook.spec.kinds or []
    if kinds and job.get("kind", "GryviaAIJob") not in kinds:
        return False
    return selects(hook.spec.selector, meta.get("labels") or {})


def delivery_id(hook_uid: str, job_uid: str, event: str, seq: int) -> str:
    """The id of one transition for one hook, the same on every attempt and restart:
    `<event>-<seq>-<20 hex of sha256(hook uid, job uid)>`, e.g. `preempted-2-1f0c...`."""
    digest = hashlib.sha256(f"{hook_uid}/{job_uid}".encode()).hexdigest()[:20]
    return f"{event.lower()}-{seq}-{digest}"


def cutoff(hook: GryviaJobHook) -> datetime | None:
    """The earliest transition time the hook delivers (creation, or the last resume)."""
    times = [hook.metadata.creation_timestamp]
    if hook.status is not None:
        times.append(hook.status.active_since)
    found = [parse_time(t) for t in times if t is not None]
    return max((t for t in found if t is not None), default=None)


def parse_state(text: str | None) -> dict[str, dict[str, Any]]:
    """The job annotation's delivery state; an unreadable annotation counts as empty."""
    if not text:
        return {}
    try:
        data = json.loads(text)
    except ValueError:
        return {}
    if not isinstance(data, dict):
        return {}
    return {str(k): dict(v) for k, v in data.items() if isinstance(v, dict)}


def dump_state(state: Mapping[str, Mapping[str, Any]]) -> str:
    """The annotation value (compact JSON, keys sorted)."""
    return json.dumps(state, separators=(",", ":"), sort_keys=True)


def job_state(job: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The delivery state recorded on `job`."""
    annotations = (job.get("metadata") or {}).get("annotations") or {}
    return parse_state(annotations.get(STATE_ANNOTATION))


def due(hook: GryviaJobHook, job: Mapping[str, Any]) -> list[Due]:
    """The deliveries `hook` still owes for `job` (none while suspended or not watching)."""
    if hook.spec.suspend or not watches(hook, job):
        return []
    meta = job.get("metadata") or {}
    state = job_state(job)
    since = cutoff(hook)
    out = []
    for t in transitions(job):
        if t.event not in hook.spec.events:
            continue
        if since is not None and t.time is not None and t.time <= since:
            continue
        key = delivery_id(hook.metadata.uid or "", str(meta.get("uid") or ""), t.event, t.seq)
        record = state.get(key) or {}
        if record.get("state") in FINAL_STATES:
            continue
        out.append(Due(t, key, int(record.get("attempts") or 0)))
    return out


def record(
    state: Mapping[str, Mapping[str, Any]],
    key: str,
    *,
    hook: str,
    event: str,
    phase: str,
    attempts: int,
    now: datetime,
) -> dict[str, dict[str, Any]]:
    """`state` with delivery `key` set to `phase` after `attempts` attempts, at `now`."""
    out = {k: dict(v) for k, v in state.items()}
    out[key] = {
        "hook": hook,
        "event": event,
        "state": phase,
        "attempts": attempts,
        "time": timestamp(now),
    }
    return out


def clip(text: str, limit: int = MESSAGE_BYTES) -> str:
    """`text` cut to at most `limit` UTF-8 bytes, never inside a character."""
    return text.encode()[:limit].decode("utf-8", "ignore")


def payload(
    hook: str, job: Mapping[str, Any], t: Transition, key: str, attempt: int, now: datetime
) -> dict[str, Any]:
    """The JSON body (format gryvia): hook, event, kind, namespace, name, uid, message (at
    most 1000 bytes), labels, time (of the transition, else `now`), delivery, attempt,
    preemptions; and, while the job waits (a preempted job requeued, for one), `pending` and
    `estimatedStart` as the operator wrote them in its status (issue 20)."""
    meta = job.get("metadata") or {}
    status = job.get("status") or {}
    waiting = {
        key: status[key]
        for key in ("pending", "estimatedStart")
        if isinstance(status.get(key), Mapping) and status[key]
    }
    return waiting | {
        "hook": hook,
        "event": t.event,
        "kind": job.get("kind", "GryviaAIJob"),
        "namespace": meta.get("namespace"),
        "name": meta.get("name"),
        "uid": meta.get("uid"),
        "message": clip(t.message if t.message is not None else str(status.get("message") or "")),
        "labels": dict(meta.get("labels") or {}),
        "time": timestamp(t.time or now),
        "delivery": key,
        "attempt": attempt,
        "preemptions": t.seq if t.preemptions is None else t.preemptions,
    }


def slack_text(job: Mapping[str, Any], t: Transition) -> str:
    """`<Kind> <ns>/<name> <Event>: <message>` (the message at most 1000 bytes)."""
    meta = job.get("metadata") or {}
    message = t.message if t.message is not None else (job.get("status") or {}).get("message")
    message = clip(str(message or ""))
    kind = job.get("kind", "GryviaAIJob")
    return f"{kind} {meta.get('namespace')}/{meta.get('name')} {t.event}: {message}"


def backoff_seconds(hook: GryviaJobHook) -> float:
    """The first wait between attempts (retry.backoffSeconds, default 10)."""
    retry = hook.spec.retry
    return float(retry.backoff_seconds if retry else DEFAULT_BACKOFF_SECONDS)


def attempts_allowed(hook: GryviaJobHook) -> int:
    """Attempts per delivery (retry.attempts, default 3)."""
    retry = hook.spec.retry
    return retry.attempts if retry else DEFAULT_ATTEMPTS


def ready_condition(
    hook: GryviaJobHook, *, secret_missing: str | None, invalid: str | None
) -> tuple[str, str, str]:
    """(status, reason, message) of the hook's Ready condition: InvalidSpec (the URL is bad
    or its target refused), SecretMissing, Suspended, else Valid."""
    if invalid:
        return "False", "InvalidSpec", invalid
    if secret_missing:
        return "False", "SecretMissing", secret_missing
    if hook.spec.suspend:
        return "False", "Suspended", "spec.suspend is true: transitions are not delivered"
    events = ", ".join(hook.spec.events)
    return "True", "Valid", f"delivering {events} to {hook.spec.webhook.url}"
