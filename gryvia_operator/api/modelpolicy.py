"""Promotion rules of GryviaModelRegistry, pure: whether a version may move to a stage,
what a promotion or a rollback writes. `gryvia model promote|rollback` and the operator's
reconciler (reconcile/modelregistry.py) both call these, so the messages are defined once.

Rules (issue 21 part 6):
- a version moves to Production only from a stage in `promotionPolicy.fromStages` (when set),
  and only with every `promotionPolicy.metrics` rule met (metric present, >= min, <= max);
- one version is Production at a time: promoting another archives the current one;
- rollback makes the previous entry of `productionHistory` (still registered) Production
  again and archives the current; it skips the policy (that version passed it before).
"""

from __future__ import annotations

from dataclasses import dataclass

from gryvia_operator.api.modelregistry import (
    GryviaModelRegistrySpec,
    MetricRule,
    ModelVersion,
    Stage,
)


class PromotionRefused(ValueError):
    """A promotion or rollback the registry's spec or policy forbids; the message names the
    field and the fix."""


def _fmt(value: float) -> str:
    return f"{value:g}"


def metric_problems(spec: GryviaModelRegistrySpec, version: ModelVersion) -> list[str]:
    """Each `spec.promotionPolicy.metrics[i]` rule `version` breaks, as a message naming the
    rule and the fix; [] when it meets them all (or there is no policy)."""
    policy = spec.promotion_policy
    out: list[str] = []
    for i, rule in enumerate((policy.metrics if policy else None) or []):
        problem = _rule_problem(rule, version)
        if problem:
            out.append(f"spec.promotionPolicy.metrics[{i}]: {problem}")
    return out


def _rule_problem(rule: MetricRule, version: ModelVersion) -> str | None:
    value = (version.metrics or {}).get(rule.metric)
    bounds = " and ".join(
        b
        for b in (
            f">= {_fmt(rule.min)}" if rule.min is not None else "",
            f"<= {_fmt(rule.max)}" if rule.max is not None else "",
        )
        if b
    )
    if value is None:
        return (
            f"version {version.version} has no metric {rule.metric} (needs {bounds}); "
            f"register it with --metric {rule.metric}=VALUE"
        )
    if rule.min is not None and value < rule.min:
        return (
            f"version {version.version} has {rule.metric}={_fmt(value)}, below the minimum "
            f"{_fmt(rule.min)}; promote a version that meets it, or lower the policy's min"
        )
    if rule.max is not None and value > rule.max:
        return (
            f"version {version.version} has {rule.metric}={_fmt(value)}, above the maximum "
            f"{_fmt(rule.max)}; promote a version that meets it, or raise the policy's max"
        )
    return None


def check_promotion(spec: GryviaModelRegistrySpec, version: str, stage: Stage) -> ModelVersion:
    """The version `version` if it may move to `stage`; raises PromotionRefused naming the
    field and the fix when it is not registered, already in that stage, or (for Production)
    comes from a stage `promotionPolicy.fromStages` does not list or breaks a metric rule."""
    found = spec.find(version)
    if found is None:
        known = ", ".join(v.version for v in spec.versions) or "none"
        raise PromotionRefused(
            f"spec.versions: no version {version} (registered: {known}); "
            "register it first with `gryvia model register`"
        )
    if found.stage == stage:
        raise PromotionRefused(f"version {version} is already {stage}; nothing to change")
    if stage != "Production":
        return found
    policy = spec.promotion_policy
    allowed = policy.from_stages if policy else None
    if allowed and found.stage not in allowed:
        first = allowed[0]
        raise PromotionRefused(
            f"spec.promotionPolicy.fromStages allows Production only from "
            f"{', '.join(allowed)}; version {version} is {found.stage}: promote it to "
            f"{first} first (`gryvia model promote NAME {version} --to {first}`)"
        )
    problems = metric_problems(spec, found)
    if problems:
        raise PromotionRefused("; ".join(problems))
    return found


@dataclass(frozen=True)
class StageChange:
    """What a promotion or rollback writes: the versions (camelCase dicts, whole list) and
    the production history, and the Production version before and after."""

    versions: list[dict[str, object]]
    production_history: list[str]
    before: str | None
    after: str | None

    def patch(self) -> dict[str, object]:
        """The spec part of a merge patch (lists are replaced whole)."""
        return {"versions": self.versions, "productionHistory": self.production_history}


def _dump(spec: GryviaModelRegistrySpec, stages: dict[str, Stage]) -> list[dict[str, object]]:
    out = []
    for v in spec.versions:
        body = v.model_dump(by_alias=True, exclude_none=True, mode="json")
        body["stage"] = stages.get(v.version, v.stage)
        out.append(body)
    return out


def _history(spec: GryviaModelRegistrySpec) -> list[str]:
    history = list(spec.production_history or [])
    current = spec.production()
    if current is not None and (not history or history[-1] != current.version):
        history.append(current.version)  # made Production by hand: counts as the latest
    return history


def promote(spec: GryviaModelRegistrySpec, version: str, stage: Stage) -> StageChange:
    """Move `version` to `stage` after `check_promotion`. To Production: the current
    Production version becomes Archived and `version` is appended to the history. Raises
    PromotionRefused."""
    check_promotion(spec, version, stage)
    current = spec.production()
    stages: dict[str, Stage] = {version: stage}
    history = _history(spec)
    if stage == "Production":
        if current is not None:
            stages[current.version] = "Archived"
        history.append(version)
    after = version if stage == "Production" else None
    if after is None and current is not None and current.version != version:
        after = current.version
    return StageChange(_dump(spec, stages), history, current.version if current else None, after)


def rollback_target(spec: GryviaModelRegistrySpec) -> str | None:
    """The version a rollback returns to: the latest history entry before the current
    Production version that is still registered and not the current one; None if none."""
    current = spec.production()
    history = _history(spec)
    if current is None or not history:
        return None
    for entry in reversed(history[:-1]):
        if entry != current.version and spec.find(entry) is not None:
            return entry
    return None


def rollback(spec: GryviaModelRegistrySpec) -> StageChange:
    """Make the previous Production version (`rollback_target`) Production again and archive
    the current one; the current one's trailing history entries are dropped. Raises
    PromotionRefused when there is no Production version or nothing to return to."""
    current = spec.production()
    if current is None:
        raise PromotionRefused(
            "spec.versions: no version is Production, so there is nothing to roll back; "
            "promote one with `gryvia model promote NAME VERSION --to Production`"
        )
    target = rollback_target(spec)
    if target is None:
        raise PromotionRefused(
            f"spec.productionHistory: no earlier Production version than {current.version} "
            "is registered; promote another version instead"
        )
    history = _history(spec)
    while history and history[-1] != target:
        history.pop()
    stages: dict[str, Stage] = {current.version: "Archived", target: "Production"}
    return StageChange(_dump(spec, stages), history, current.version, target)
