"""Job hooks for the CLI, pure: the GryviaJobHook a `gryvia hook create` builds, table rows,
the `get` report, and the signed sample request of `gryvia hook test`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from pydantic import ValidationError

from gryvia_cli.core.manifests import new_object
from gryvia_cli.core.timefmt import age
from gryvia_operator.api.jobhook import HOOK_EVENTS, GryviaJobHook
from gryvia_operator.api.signature import HOOK_USER_AGENT, headers, render

HOOK_COLUMNS = ("NAME", "EVENTS", "URL", "READY", "DELIVERIES", "FAILURES", "AGE")
HOOK_WIDE_COLUMNS = (*HOOK_COLUMNS, "SELECTOR", "FORMAT", "LAST DELIVERY", "LAST ERROR")


def parse_events(values: Sequence[str]) -> list[str]:
    """Event names from `--event` values (repeatable, comma lists allowed, case-insensitive).

    Raises ValueError naming the unknown event and the known ones."""
    known = {e.lower(): e for e in HOOK_EVENTS}
    out: list[str] = []
    for value in values:
        for part in filter(None, (p.strip() for p in value.split(","))):
            event = known.get(part.lower())
            if event is None:
                raise ValueError(f"--event {part!r} is not an event: use {', '.join(HOOK_EVENTS)}")
            if event not in out:
                out.append(event)
    return out


def parse_pairs(values: Sequence[str], flag: str) -> dict[str, str]:
    """`KEY=VALUE` options as a dict; raises ValueError naming the flag and the bad value."""
    out: dict[str, str] = {}
    for value in values:
        key, sep, rest = value.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"{flag} {value!r} must look like KEY=VALUE")
        out[key.strip()] = rest
    return out


def build_hook(
    name: str,
    *,
    url: str,
    events: Sequence[str],
    fmt: str = "gryvia",
    secret: str | None = None,
    selector: Mapping[str, str] | None = None,
    header: Mapping[str, str] | None = None,
    attempts: int | None = None,
    backoff: int | None = None,
    timeout: int | None = None,
    suspend: bool = False,
) -> dict[str, Any]:
    """The GryviaJobHook body, validated by the API model; raises ValueError with the field."""
    webhook: dict[str, Any] = {"url": url, "format": fmt}
    if secret:
        webhook["secretRef"] = {"name": secret}
    if header:
        webhook["headers"] = dict(header)
    if timeout is not None:
        webhook["timeoutSeconds"] = timeout
    spec: dict[str, Any] = {"events": list(events), "webhook": webhook}
    if selector:
        spec["selector"] = {"matchLabels": dict(selector)}
    retry = {k: v for k, v in (("attempts", attempts), ("backoffSeconds", backoff)) if v}
    if retry:
        spec["retry"] = retry
    if suspend:
        spec["suspend"] = True
    body = new_object("GryviaJobHook", name, spec)
    try:
        GryviaJobHook.model_validate(body)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ()))
        raise ValueError(f"{where}: {first.get('msg')}") from None
    from gryvia_operator.api.ssrf import parse_target

    # What the operator refuses first (InvalidSpec): a scheme other than http(s), no host,
    # user:password@ in the URL (it would then be shown by get and list), a bad port.
    parse_target(url)
    return body


def _ready(hook: GryviaJobHook) -> tuple[str, str]:
    """(reason or `Pending`, message) of the Ready condition."""
    for cond in (hook.status.conditions if hook.status else None) or []:
        if cond.type == "Ready":
            return cond.reason or cond.status, cond.message or ""
    return "Pending", "the operator has not checked it (is it run with --enable-job-hooks?)"


def _selector(hook: GryviaJobHook) -> str:
    sel = hook.spec.selector
    if sel is None:
        return "all jobs"
    parts = [f"{k}={v}" for k, v in (sel.match_labels or {}).items()]
    parts += [
        f"{e.key} {e.operator} {','.join(e.values or [])}".strip()
        for e in sel.match_expressions or []
    ]
    return ", ".join(parts) or "all jobs"


def hook_row(hook: GryviaJobHook, now: datetime) -> list[Any]:
    """One `gryvia hook list` row."""
    status = hook.status
    return [
        hook.name,
        ",".join(hook.spec.events),
        hook.spec.webhook.url,
        _ready(hook)[0],
        (status.deliveries if status else None) or 0,
        (status.failures if status else None) or 0,
        age(hook.metadata.creation_timestamp, now),
    ]


def hook_wide_row(hook: GryviaJobHook, now: datetime) -> list[Any]:
    """One `gryvia hook list -o wide` row."""
    status = hook.status
    last = status.last_delivery if status else None
    return [
        *hook_row(hook, now),
        _selector(hook),
        hook.spec.webhook.format,
        age(last, now) + " ago" if last else "-",
        (status.last_error if status else None) or "-",
    ]


_SENSITIVE = ("authorization", "token", "secret", "key", "cookie", "password")


def header_text(headers: Mapping[str, str] | None) -> str:
    """`Name: value` of each extra request header, sorted by name, `; `-joined ("-" for none).

    Values of headers whose names look like credentials (Authorization, *token*, *secret*,
    *key*, *cookie*, *password*) are shown as `<hidden, N characters>`: `get` output ends up
    in tickets and screenshots; `-o yaml` still prints the stored spec.
    """
    if not headers:
        return "-"
    shown = hidden_headers(headers)
    return "; ".join(f"{name}: {shown[name]}" for name in sorted(shown, key=str.lower))


def hidden_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """`headers` with the values of credential-like names (see `header_text`) replaced by
    `<hidden, N characters>`."""
    shown = {}
    for name, value in headers.items():
        if any(word in name.lower() for word in _SENSITIVE):
            value = f"<hidden, {len(value)} character{'' if len(value) == 1 else 's'}>"
        shown[name] = value
    return shown


def hook_details(hook: GryviaJobHook, now: datetime) -> list[tuple[str, str]]:
    """(label, value) lines of `gryvia hook get`."""
    spec, status = hook.spec, hook.status
    reason, message = _ready(hook)
    retry = spec.retry
    last = status.last_delivery if status else None
    lines = [
        ("Name", hook.name),
        ("Namespace", hook.namespace),
        ("Events", ", ".join(spec.events)),
        ("Jobs", _selector(hook)),
        ("URL", spec.webhook.url),
        ("Format", spec.webhook.format),
        ("Headers", header_text(spec.webhook.headers)),
        (
            "Signed",
            f"yes (Secret {spec.webhook.secret_ref.name}, key secret)"
            if spec.webhook.secret_ref
            else "no",
        ),
        ("Timeout", f"{spec.webhook.timeout_seconds} s"),
        (
            "Retry",
            f"{retry.attempts if retry else 3} attempts, back-off "
            f"{retry.backoff_seconds if retry else 10} s doubling (capped at 1 h)",
        ),
        ("Suspended", "yes" if spec.suspend else "no"),
        ("Ready", f"{reason}: {message}" if message else reason),
        ("Deliveries", str((status.deliveries if status else None) or 0)),
        ("Failures", str((status.failures if status else None) or 0)),
        ("Last delivery", f"{last:%Y-%m-%d %H:%M:%S} UTC ({age(last, now)} ago)" if last else "-"),
    ]
    if status and status.last_error:
        lines.append(("Last error", status.last_error))
    return lines


def sample_request(
    hook: GryviaJobHook, secret: bytes | None, now: datetime
) -> tuple[bytes, dict[str, str]]:
    """The body and headers of `gryvia hook test`: a signed `Succeeded` of a sample job named
    `hook-test`, delivery id `test-<unix seconds>` (receivers can tell it from real ones)."""
    key = f"test-{int(now.timestamp())}"
    payload = {
        "hook": hook.name,
        "event": "Succeeded",
        "kind": "GryviaAIJob",
        "namespace": hook.namespace,
        "name": "hook-test",
        "uid": "00000000-0000-0000-0000-000000000000",
        "message": "sample event sent by gryvia hook test",
        "labels": {},
        "time": now.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "delivery": key,
        "attempt": 1,
        "preemptions": 0,
        "test": True,
    }
    text = f"GryviaAIJob {hook.namespace}/hook-test Succeeded: {payload['message']}"
    body = render(payload, hook.spec.webhook.format, text)
    sent = headers(
        body,
        key=key,
        secret=secret,
        now=now.timestamp(),
        event="Succeeded",
        user_agent=HOOK_USER_AGENT,
        extra=hook.spec.webhook.headers,
    )
    return body, sent
