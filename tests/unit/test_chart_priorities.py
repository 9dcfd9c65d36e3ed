"""The chart's opt-in priorities (`aiOperator.priorities.enabled`, issue 18 part 3)."""

from __future__ import annotations

from typing import Any

from tests.unit.test_chart import container, one, render


def _rules(objs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    role = next(
        o for o in objs if o["kind"] == "ClusterRole" and o["metadata"]["name"].endswith("operator")
    )
    rules: list[dict[str, Any]] = role["rules"]
    return rules


def test_priorities_are_off_by_default() -> None:
    objs = render()
    assert "--enable-priorities" not in container(objs)["args"]
    assert not [r for r in _rules(objs) if "priorityclasses" in r["resources"]]


def test_the_switch_turns_on_the_flag_and_the_priority_class_rules() -> None:
    objs = render("--set", "aiOperator.priorities.enabled=true")
    assert "--enable-priorities" in container(objs)["args"]
    rules = _rules(objs)
    classes = next(r for r in rules if "priorityclasses" in r["resources"])
    assert classes["apiGroups"] == ["scheduling.k8s.io"]
    assert set(classes["verbs"]) == {"get", "list", "watch", "create", "patch", "delete"}
    creates = [r for r in rules if r["resources"] == ["gryviapriorities"]]
    assert creates and creates[0]["verbs"] == ["create"]
    crd = [o for o in objs if o["kind"] == "CustomResourceDefinition"]
    assert "gryviapriorities.gryvia.io" in {c["metadata"]["name"] for c in crd}
    assert one(objs, "Deployment")
