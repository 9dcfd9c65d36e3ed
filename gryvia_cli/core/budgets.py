"""Budgets for `gryvia budget`, `gryvia cost`, `gryvia quota` and the console (pure): parse
the create options, build the GryviaBudget, and show its state and forecast.

The operator computes every number shown here into the budget's status (spend, utilisation,
state, forecast); the client only reads and formats it.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Sequence
from typing import Any

from pydantic import ValidationError

from gryvia_cli.core.cells import Marked
from gryvia_cli.core.manifests import new_object
from gryvia_operator.api import GryviaBudget
from gryvia_operator.api.attribution import tenant_namespace
from gryvia_operator.api.messages import gpu_count, job_count

SCOPES = ("team", "namespace", "tenant", "user", "project")
BUDGET_COLUMNS = ("name", "scope", "period", "spent", "limit", "used", "state", "forecast")
BUDGET_WIDE_COLUMNS = (*BUDGET_COLUMNS, "gpu-hours", "enforcement", "alerts", "receiver")
STATE_MARKERS = {"active": "ok", "warning": "warn", "exceeded": "error", "blocked": "error"}
_ALERT = re.compile(r"^(?P<t>[0-9]+(?:\.[0-9]+)?)(?::(?P<a>[a-z,]+))?$")


def parse_scope(text: str) -> dict[str, str]:
    """`TYPE:NAME` (team, namespace, tenant, user, project) -> spec.scope. Raises ValueError
    naming the form."""
    kind, _, name = text.partition(":")
    if kind not in SCOPES or not name:
        raise ValueError(f'--scope "{text}": use TYPE:NAME with TYPE one of {", ".join(SCOPES)}')
    return {"type": kind, "name": name}


def parse_alert(text: str) -> dict[str, Any]:
    """`PERCENT[:ACTIONS]` (actions notify and/or block, comma-separated) -> an alert."""
    match = _ALERT.match(text.strip())
    actions = (match.group("a") or "").split(",") if match and match.group("a") else []
    if match is None or any(a not in ("notify", "block") for a in actions):
        raise ValueError(f'--alert "{text}": use PERCENT or PERCENT:notify,block, e.g. 90:block')
    out: dict[str, Any] = {"threshold": float(match.group("t"))}
    if actions:
        out["actions"] = actions
    return out


def parse_type_hours(text: str) -> tuple[str, float]:
    """`GPUTYPE=HOURS` -> (type, hours)."""
    kind, _, hours = text.partition("=")
    try:
        value = float(hours)
    except ValueError:
        value = -1.0
    if not kind or value < 0:
        raise ValueError(f'--gpu-type-hours "{text}": use GPUTYPE=HOURS, e.g. H100=100')
    return kind, value


def parse_secret(text: str) -> dict[str, str]:
    """`NAMESPACE/NAME[:KEY]` -> receiver.secretRef (key `secret` by default)."""
    where, _, key = text.partition(":")
    namespace, _, name = where.partition("/")
    if not namespace or not name:
        raise ValueError(f'--secret "{text}": use NAMESPACE/NAME or NAMESPACE/NAME:KEY')
    out = {"namespace": namespace, "name": name}
    if key:
        out["key"] = key
    return out


def build_budget(name: str, spec: dict[str, Any]) -> dict[str, Any]:
    """The GryviaBudget body, validated. Raises ValueError listing each bad field as
    `spec.<path>: <problem>`."""
    body = new_object("GryviaBudget", name, spec)
    spec = _json_safe(spec)
    body["spec"] = spec
    found = spec.get("period")
    period: dict[str, Any] = found if isinstance(found, dict) else {}
    start, end = period.get("startDate"), period.get("endDate")
    if period.get("type", "monthly") == "custom":
        if not (start and end):
            raise ValueError(
                "invalid budget: spec.period: a custom period needs --start-date and --end-date"
            )
        if isinstance(start, str) and isinstance(end, str) and start > end:
            raise ValueError(
                f"invalid budget: spec.period: --start-date {start} is after --end-date {end};"
                " swap them"
            )
    elif start or end:
        raise ValueError(
            "invalid budget: spec.period: --start-date and --end-date apply only to"
            " --period custom; drop them or add --period custom"
        )
    try:
        GryviaBudget.model_validate(body)
    except ValidationError as exc:
        problems = [f"{'.'.join(str(p) for p in e['loc'])}: {_problem(e)}" for e in exc.errors()]
        raise ValueError("invalid budget: " + "; ".join(problems)) from None
    return body


def _problem(error: Any) -> str:
    """A pydantic error's message, with the fix spelled out where the raw one is a regex."""
    if error["type"] == "string_pattern_mismatch" and error["loc"][-1] == "gracePeriod":
        return f"{error['input']!r} is not a duration; use e.g. 30m, 2h, 1d or 1d12h"
    return str(error["msg"])


def _json_safe(value: Any) -> Any:
    """`value` with dates and datetimes as ISO strings (YAML reads an unquoted 2026-10-01 as
    a date, which JSON cannot carry); other values unchanged."""
    if isinstance(value, dict):
        return {key: _json_safe(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_json_safe(item) for item in value]
    if isinstance(value, dt.datetime | dt.date):
        return value.isoformat()
    return value


def _status(budget: GryviaBudget) -> dict[str, Any]:
    if budget.status is None:
        return {}
    return budget.status.model_dump(mode="json", by_alias=True, exclude_none=True)


def limit_text(budget: GryviaBudget) -> str:
    """The limits as text: `10.00 USD`, `100 GPU-h`, `H100 50 GPU-h`, `4 jobs`, joined."""
    limits = budget.spec.limits
    if limits is None:
        return "-"
    status = _status(budget)
    cost = (status.get("currentPeriod") or {}).get("costLimitUSD", limits.cost_usd)
    parts = []
    if cost is not None:
        parts.append(f"{cost:.2f} USD")
    if limits.gpu_hours is not None:
        parts.append(f"{limits.gpu_hours:g} GPU-h")
    parts += [f"{k} {v:g} GPU-h" for k, v in (limits.gpu_type_hours or {}).items()]
    if limits.max_concurrent_jobs:
        parts.append(job_count(limits.max_concurrent_jobs))
    if limits.max_concurrent_gpus:
        parts.append(gpu_count(limits.max_concurrent_gpus))
    return ", ".join(parts) or "-"


def spent_text(budget: GryviaBudget) -> str:
    """Spend in the period: `6.20 USD` when a cost limit is set, else GPU-hours."""
    usage = _status(budget).get("usage") or {}
    limits = budget.spec.limits
    if limits is not None and limits.cost_usd is None and limits.gpu_hours is not None:
        return f"{usage.get('gpuHours', 0.0):.2f} GPU-h"
    return f"{usage.get('costUSD', 0.0):.2f} USD"


def forecast_text(budget: GryviaBudget) -> str:
    """`18.60 USD at period end, limit reached 2026-12-17` (or `within budget`)."""
    fc = _status(budget).get("forecast") or {}
    if not fc:
        return "-"
    parts = []
    if "projectedCostUSD" in fc:
        parts.append(f"{fc['projectedCostUSD']:.2f} USD at period end")
    if fc.get("estimatedExhaustionDate"):
        parts.append(f"limit reached {fc['estimatedExhaustionDate']}")
    elif fc.get("budgetSufficient"):
        parts.append("within budget")
    return ", ".join(parts) or "-"


def scope_text(budget: GryviaBudget) -> str:
    """`tenant acme`."""
    return f"{budget.spec.scope.type} {budget.spec.scope.name}"


def period_text(budget: GryviaBudget) -> str:
    """`monthly`, `weekly (from monday)` or `custom 2026-12-01..2026-12-15`."""
    period = budget.spec.period
    if period.type == "custom":
        return f"custom {period.start_date}..{period.end_date}"
    if period.type == "weekly":
        return f"weekly (from {period.week_start})"
    return period.type


def state_of(budget: GryviaBudget) -> str:
    """status.state, or `pending` before the operator computed it."""
    return (budget.status.state if budget.status else None) or "pending"


def used_percent(budget: GryviaBudget) -> float | None:
    """status.utilization.percent."""
    util = budget.status.utilization if budget.status else None
    return util.percent if util else None


def budget_row(budget: GryviaBudget) -> list[object]:
    """NAME, SCOPE, PERIOD, SPENT, LIMIT, USED, STATE, FORECAST."""
    percent = used_percent(budget)
    state = state_of(budget)
    return [
        budget.name,
        scope_text(budget),
        period_text(budget),
        spent_text(budget),
        limit_text(budget),
        "-" if percent is None else f"{percent:.1f}%",
        Marked(state, STATE_MARKERS.get(state, "dim")),
        forecast_text(budget),
    ]


def budget_wide_row(budget: GryviaBudget) -> list[object]:
    """budget_row plus GPU-HOURS (used this period), ENFORCEMENT (action or `off`), ALERTS
    (thresholds, `-` for none) and RECEIVER (the URL, `-` for Events only)."""
    usage = _status(budget).get("usage") or {}
    enf = budget.spec.enforcement
    receiver = budget.spec.receiver
    return [
        *budget_row(budget),
        f"{usage.get('gpuHours', 0.0):.2f}",
        enf.action if enf is not None and enf.enabled else "off",
        ", ".join(f"{a.threshold:g}%" for a in budget.spec.alerts or []) or "-",
        receiver.url if receiver is not None else "-",
    ]


def budget_line(budget: GryviaBudget) -> str:
    """One line for `gryvia cost`, `gryvia quota` and the console: name, scope, spend of
    limit, state, thresholds and the forecast."""
    percent = used_percent(budget)
    used = "" if percent is None else f" ({percent:.1f} %)"
    thresholds = ", ".join(f"{a.threshold:g} %" for a in budget.spec.alerts or [])
    return (
        f"budget {budget.name} ({scope_text(budget)}, {period_text(budget)}): "
        f"{spent_text(budget)} of {limit_text(budget)}{used}, {state_of(budget)}; "
        f"{f'alerts at {thresholds}' if thresholds else 'no alerts'}; "
        f"forecast {forecast_text(budget)}"
    )


def budget_summary(budget: GryviaBudget) -> dict[str, Any]:
    """The budget as `gryvia cost|quota -o json` list it."""
    status = _status(budget)
    return {
        "name": budget.name,
        "scope": budget.spec.scope.model_dump(mode="json"),
        "period": budget.spec.period.type,
        "state": state_of(budget),
        "usage": status.get("usage"),
        "utilization": status.get("utilization"),
        "limit": limit_text(budget),
        "thresholds": [a.threshold for a in budget.spec.alerts or []],
        "forecast": status.get("forecast"),
    }


def _period_left(period: dict[str, Any], today: dt.date | None) -> str:
    """`12 day(s) left`, or for a custom period not begun or over (as of `today`, UTC)
    `not started (starts in 5 day(s))` / `ended`."""
    start, end = str(period.get("startDate", "")), str(period.get("endDate", ""))
    if today is not None and end and today.isoformat() > end:
        return "ended"
    if today is not None and start and today.isoformat() < start:
        days = (dt.date.fromisoformat(start) - today).days
        return f"not started (starts in {days} day(s))"
    return f"{period.get('daysRemaining', '-')} day(s) left"


def budget_details(budget: GryviaBudget, today: dt.date | None = None) -> list[tuple[str, str]]:
    """(label, value) lines for `gryvia budget get`; `today` (UTC) tells a custom period
    that has not begun or is over."""
    spec, status = budget.spec, _status(budget)
    period = status.get("currentPeriod") or {}
    enf = spec.enforcement
    enforcement = "off (reports only)"
    if enf is not None and enf.enabled:
        enforcement = enf.action + (
            f", grace period {enf.grace_period}" if enf.grace_period else ""
        )
    alerts = [
        f"{a.threshold:g} %" + (f" ({', '.join(a.actions)})" if a.actions else "")
        for a in spec.alerts or []
    ]
    fired = [
        f"{a.get('threshold'):g} % at {a.get('timestamp')}"
        + ("" if a.get("delivered") else f" (not delivered yet: {a.get('lastError', 'pending')})")
        for a in status.get("alerts") or []
    ]
    lines = [
        ("Name", budget.name),
        ("Scope", scope_text(budget)),
        ("Period", period_text(budget)),
        (
            "Current period",
            f"{period.get('startDate', '-')} to {period.get('endDate', '-')}, "
            + _period_left(period, today)
            if period
            else "not computed yet (the operator writes it to the status)",
        ),
        ("Limits", limit_text(budget)),
        ("Spent", spent_text(budget)),
        ("Used", "-" if used_percent(budget) is None else f"{used_percent(budget):.1f} %"),
        ("State", state_of(budget)),
        ("Forecast", forecast_text(budget)),
        ("Enforcement", enforcement),
        ("Alerts", ", ".join(alerts) or "none"),
        ("Fired", "; ".join(fired) or "none this period"),
        ("Receiver", spec.receiver.url if spec.receiver else "none (Events only)"),
    ]
    if spec.rollover is not None and spec.rollover.enabled:
        lines.append(("Rollover", f"up to {spec.rollover.max_rollover_percent:g} % of the limit"))
    if status.get("message"):
        lines.append(("Message", str(status["message"])))
    return lines


def budgets_for(budgets: Iterable[GryviaBudget], teams: Sequence[str] | None) -> list[GryviaBudget]:
    """The budgets whose scope names one of `teams` (all when None), by name."""
    chosen = [b for b in budgets if teams is None or b.spec.scope.name in teams]
    return sorted(chosen, key=lambda b: b.name)


def budgets_covering(
    budgets: Iterable[GryviaBudget], team: str, namespaces: Iterable[str]
) -> list[GryviaBudget]:
    """The budgets of a quota's team or namespaces: scope team or tenant named `team`, or
    namespace (or tenant namespace) among `namespaces`; by name."""
    spaces = set(namespaces)

    def covers(b: GryviaBudget) -> bool:
        kind, name = b.spec.scope.type, b.spec.scope.name
        if kind in ("team", "tenant") and name == team:
            return True
        if kind == "tenant":
            return tenant_namespace(name) in spaces
        return kind == "namespace" and name in spaces

    return sorted((b for b in budgets if covers(b)), key=lambda b: b.name)
