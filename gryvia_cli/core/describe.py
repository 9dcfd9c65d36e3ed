"""`kubectl describe`-style sections of any object: fields, spec, status, conditions, events.

Pure: a raw object (the API server's JSON as a dict) in, `Section`s out; the console draws
them (escaping nothing: it renders them as plain text, never as markup).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from gryvia_cli.core import timefmt
from gryvia_cli.core.events import event_time, sort_events

MAX_ROWS = 80
"""Most rows a flattened spec or status shows; the rest are counted in one last row."""
HIDDEN_ANNOTATIONS = ("kubectl.kubernetes.io/last-applied-configuration",)


@dataclass(frozen=True)
class Section:
    """A titled block of `label: value` rows (label "" continues the row above)."""

    title: str
    rows: list[tuple[str, str]] = field(default_factory=list)
    empty: str = "<none>"
    """Shown when `rows` is empty."""


def _scalar(value: Any) -> str:
    if value is None:
        return "<none>"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def flatten(value: Any, prefix: str = "") -> list[tuple[str, str]]:
    """`(path, text)` rows of a nested value: `resources.limits.nvidia.com/gpu`, `args[0]`;
    a list of scalars is one row, joined with `, `; empty dicts and lists are skipped."""
    rows: list[tuple[str, str]] = []
    if isinstance(value, Mapping):
        for key, item in value.items():
            rows += flatten(item, f"{prefix}.{key}" if prefix else str(key))
    elif isinstance(value, list):
        if all(not isinstance(v, (Mapping, list)) for v in value):
            if value:
                rows.append((prefix, ", ".join(_scalar(v) for v in value)))
        else:
            for i, item in enumerate(value):
                rows += flatten(item, f"{prefix}[{i}]")
    else:
        rows.append((prefix, _scalar(value)))
    return rows


def _capped(rows: list[tuple[str, str]]) -> list[tuple[str, str]]:
    if len(rows) <= MAX_ROWS:
        return rows
    return [*rows[:MAX_ROWS], ("…", f"{len(rows) - MAX_ROWS} more (see the YAML)")]


def _pairs(values: Mapping[str, Any] | None) -> list[tuple[str, str]]:
    return [(str(k), _scalar(v)) for k, v in sorted((values or {}).items())]


def header(raw: Mapping[str, Any], now: datetime) -> Section:
    """Name, namespace, kind, created (with age), owners, labels and annotations."""
    meta = raw.get("metadata") or {}
    created = timefmt.parse_time(meta.get("creationTimestamp"))
    rows = [("Name", str(meta.get("name") or ""))]
    if meta.get("namespace"):
        rows.append(("Namespace", str(meta["namespace"])))
    rows.append(("Kind", f"{raw.get('kind') or '?'} ({raw.get('apiVersion') or '?'})"))
    if created is not None:
        rows.append(("Created", f"{created:%Y-%m-%d %H:%M:%S} UTC ({timefmt.age(created, now)})"))
    owners = meta.get("ownerReferences") or []
    if owners:
        rows.append(("Owners", ", ".join(f"{o.get('kind')}/{o.get('name')}" for o in owners)))
    labels = _pairs(meta.get("labels"))
    rows += [("Labels" if i == 0 else "", f"{k}={v}") for i, (k, v) in enumerate(labels)]
    if not labels:
        rows.append(("Labels", "<none>"))
    notes = {
        k: v for k, v in (meta.get("annotations") or {}).items() if k not in HIDDEN_ANNOTATIONS
    }
    pairs = _pairs(notes)
    rows += [("Annotations" if i == 0 else "", f"{k}: {v}") for i, (k, v) in enumerate(pairs)]
    return Section("Object", rows)


def condition_rows(conditions: Iterable[Mapping[str, Any]], now: datetime) -> list[tuple[str, str]]:
    """One row per condition: `Type: Status  Reason (age) Message`."""
    rows = []
    for cond in conditions:
        when = timefmt.parse_time(cond.get("lastTransitionTime"))
        parts = [str(cond.get("status") or "?")]
        if cond.get("reason"):
            parts.append(str(cond["reason"]))
        if when is not None:
            parts.append(f"({timefmt.age(when, now)})")
        if cond.get("message"):
            parts.append(str(cond["message"]))
        rows.append((str(cond.get("type") or "?"), "  ".join(parts)))
    return rows


def event_section(events: Iterable[Mapping[str, Any]], now: datetime, limit: int = 30) -> Section:
    """The newest `limit` events, newest first: `age  Type  Reason  kind/name  message`."""
    rows = []
    for event in reversed(sort_events(events)[-limit:]):
        target = event.get("involvedObject") or event.get("regarding") or {}
        count = event.get("count") or (event.get("series") or {}).get("count") or 1
        when = timefmt.age(event_time(event), now) + (f" (x{count})" if count > 1 else "")
        what = f"{str(target.get('kind') or '').lower()}/{target.get('name') or ''}"
        text = f"{event.get('type') or 'Normal'}  {event.get('reason') or ''}  {what}  "
        rows.append((when, text + str(event.get("message") or "").strip()))
    return Section("Events", rows)


def describe(
    raw: Mapping[str, Any], now: datetime, events: Iterable[Mapping[str, Any]] = ()
) -> list[Section]:
    """Sections like `kubectl describe`: the object header, its spec (flattened), its status
    (flattened, conditions apart), conditions and events (newest first)."""
    status = dict(raw.get("status") or {})
    conditions = status.pop("conditions", None) or []
    spec = raw.get("spec")
    if raw.get("kind") == "GryviaJobHook":
        spec = _hook_spec_shown(spec)
    sections = [header(raw, now)]
    if spec is not None:
        sections.append(Section("Spec", _capped(flatten(spec))))
    elif raw.get("data") is not None:
        sections.append(Section("Data", _capped(flatten(raw.get("data")))))
    sections.append(Section("Status", _capped(flatten(status))))
    sections.append(Section("Conditions", condition_rows(conditions, now)))
    sections.append(event_section(events, now))
    return sections


def _hook_spec_shown(spec: Any) -> Any:
    """A GryviaJobHook's spec with credential-like header values hidden, as `gryvia hook
    get` shows them (a describe ends up in screenshots too)."""
    if not isinstance(spec, Mapping):
        return spec
    webhook = spec.get("webhook")
    if not isinstance(webhook, Mapping) or not isinstance(webhook.get("headers"), Mapping):
        return spec
    headers = webhook["headers"]
    from gryvia_cli.core.hooks import hidden_headers

    shown = {str(k): str(v) for k, v in headers.items()}
    return {**spec, "webhook": {**webhook, "headers": hidden_headers(shown)}}
