"""GryviaModelRegistry: the promotion rules (api/modelpolicy.py) and the pure reconciler
(reconcile/modelregistry.py): which inference service autoServe writes, and the status."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from gryvia_operator.api.modelpolicy import (
    PromotionRefused,
    check_promotion,
    promote,
    rollback,
    rollback_target,
)
from gryvia_operator.api.modelregistry import GryviaModelRegistry
from gryvia_operator.reconcile.modelregistry import (
    ServePlan,
    build_status,
    plan_service,
)

TEMPLATE = {
    "image": "acme/server:$(model.version)",
    "port": 8080,
    "command": ["serve", "--model", "$(model.artifact)", "--name", "$(model.name)"],
    "env": {"WEIGHTS": "$(model.artifact)"},
}


def version(v: str, stage: str = "None", **metrics: float) -> dict[str, Any]:
    return {
        "version": v,
        "artifacts": {"uri": f"s3://m/{v}"},
        "stage": stage,
        **({"metrics": metrics} if metrics else {}),
    }


def registry(*versions: dict[str, Any], **spec: Any) -> GryviaModelRegistry:
    return GryviaModelRegistry.model_validate(
        {
            "metadata": {"name": "llm", "namespace": "ml", "uid": "u-1"},
            "spec": {"modelName": "support", "versions": list(versions), **spec},
        }
    )


POLICY = {"fromStages": ["Staging"], "metrics": [{"metric": "accuracy", "min": 0.9}]}


def test_promotion_policy_refuses_wrong_stage_and_low_or_missing_metric() -> None:
    reg = registry(
        version("1", "None", accuracy=0.95),
        version("2", "Staging", accuracy=0.8),
        version("3", "Staging"),
        version("4", "Staging", accuracy=0.92),
        promotionPolicy=POLICY,
    )
    with pytest.raises(PromotionRefused, match=r"fromStages.*promote it to Staging first"):
        check_promotion(reg.spec, "1", "Production")
    with pytest.raises(PromotionRefused, match=r"metrics\[0\].*accuracy=0.8, below the minimum"):
        check_promotion(reg.spec, "2", "Production")
    with pytest.raises(PromotionRefused, match=r"no metric accuracy.*--metric accuracy=VALUE"):
        check_promotion(reg.spec, "3", "Production")
    with pytest.raises(PromotionRefused, match=r"no version 9 \(registered: 1, 2, 3, 4\)"):
        check_promotion(reg.spec, "9", "Staging")
    with pytest.raises(PromotionRefused, match="already Staging"):
        check_promotion(reg.spec, "4", "Staging")
    assert check_promotion(reg.spec, "4", "Production").version == "4"
    assert check_promotion(reg.spec, "1", "Staging").version == "1"  # only Production is ruled


def test_max_rule_and_rule_without_bounds() -> None:
    reg = registry(
        version("1", "Staging", latency=120.0),
        promotionPolicy={"metrics": [{"metric": "latency", "max": 100}]},
    )
    with pytest.raises(PromotionRefused, match="latency=120, above the maximum 100"):
        check_promotion(reg.spec, "1", "Production")
    with pytest.raises(ValidationError, match="set min"):
        registry(promotionPolicy={"metrics": [{"metric": "x"}]})


def test_spec_refuses_two_production_versions_and_duplicates() -> None:
    with pytest.raises(ValidationError, match="1, 2 are all Production"):
        registry(version("1", "Production"), version("2", "Production"))
    with pytest.raises(ValidationError, match="registered twice"):
        registry(version("1"), version("1"))
    with pytest.raises(ValidationError, match="exactly one of uri and pvc"):
        registry({"version": "1", "artifacts": {}})


def test_promote_archives_the_old_production_and_rollback_returns_to_it() -> None:
    reg = registry(version("1", "Production"), version("2", "Staging"), productionHistory=["1"])
    change = promote(reg.spec, "2", "Production")
    assert (change.before, change.after) == ("1", "2")
    assert [v["stage"] for v in change.versions] == ["Archived", "Production"]
    assert change.production_history == ["1", "2"]
    promoted = registry(*change.versions, productionHistory=change.production_history)
    assert rollback_target(promoted.spec) == "1"
    back = rollback(promoted.spec)
    assert (back.before, back.after) == ("2", "1")
    assert [v["stage"] for v in back.versions] == ["Production", "Archived"]
    assert back.production_history == ["1"]
    assert back.patch() == {"versions": back.versions, "productionHistory": ["1"]}


def test_rollback_without_history_or_production_is_refused() -> None:
    with pytest.raises(PromotionRefused, match="no version is Production"):
        rollback(registry(version("1", "Staging")).spec)
    only = registry(version("1", "Production"))  # made Production by hand: history is [1]
    assert rollback_target(only.spec) is None
    with pytest.raises(PromotionRefused, match=r"productionHistory: no earlier"):
        rollback(only.spec)
    # An earlier entry no longer registered is skipped.
    gone = registry(version("2"), version("3", "Production"), productionHistory=["1", "2", "3"])
    assert rollback_target(gone.spec) == "2"


def test_template_service_created_with_placeholders_then_patched_on_promotion() -> None:
    reg = registry(version("1", "Production"), autoServe={"template": TEMPLATE})
    plan = plan_service(reg, None)
    assert plan.patch is None and plan.create is not None
    body = plan.create
    assert body["kind"] == "GryviaInferenceService" and body["metadata"]["name"] == "llm"
    assert body["metadata"]["labels"] == {"gryvia.io/model-registry": "llm"}
    assert body["metadata"]["ownerReferences"][0]["uid"] == "u-1"
    spec = body["spec"]
    assert spec["image"] == "acme/server:1" and spec["version"] == "1"
    assert spec["command"] == ["serve", "--model", "s3://m/1", "--name", "support"]
    assert spec["env"] == {
        "WEIGHTS": "s3://m/1",
        "GRYVIA_MODEL_NAME": "support",
        "GRYVIA_MODEL_VERSION": "1",
        "GRYVIA_MODEL_ARTIFACT": "s3://m/1",
    }
    stored = body | {"spec": spec | {"gpus": 0, "replicas": 1}}  # server-side defaults
    assert plan_service(reg, stored) == ServePlan()
    moved = registry(
        version("1", "Archived"), version("2", "Production"), autoServe={"template": TEMPLATE}
    )
    patch = plan_service(moved, stored).patch
    assert patch is not None
    assert patch["spec"]["image"] == "acme/server:2" and patch["spec"]["version"] == "2"


def test_template_refuses_a_service_it_does_not_own() -> None:
    reg = registry(version("1", "Production"), autoServe={"template": TEMPLATE})
    other = {"metadata": {"name": "llm", "ownerReferences": []}, "spec": {"image": "x"}}
    plan = plan_service(reg, other)
    assert plan.create is None and plan.patch is None
    assert plan.problem and "not this registry's" in plan.problem


def test_reference_mode_patches_version_and_env_of_an_existing_service() -> None:
    reg = registry(version("3", "Production"), autoServe={"serviceName": "web"})
    missing = plan_service(reg, None)
    assert missing.problem and "spec.autoServe.serviceName" in missing.problem
    have = {"metadata": {"name": "web"}, "spec": {"image": "i", "env": {"A": "b"}}}
    patch = plan_service(reg, have).patch
    assert patch == {
        "spec": {
            "version": "3",
            "model": "support",
            "env": {
                "A": "b",
                "GRYVIA_MODEL_NAME": "support",
                "GRYVIA_MODEL_VERSION": "3",
                "GRYVIA_MODEL_ARTIFACT": "s3://m/3",
            },
        }
    }
    assert plan_service(reg, {"spec": have["spec"] | patch["spec"]}) == ServePlan()


def test_policy_breaking_production_version_is_blocked_not_served() -> None:
    reg = registry(
        version("1", "Production", accuracy=0.5),
        promotionPolicy=POLICY,
        autoServe={"template": TEMPLATE},
    )
    plan = plan_service(reg, None)
    assert plan.create is None and plan.problem
    status = build_status(reg, None, plan)
    assert status["phase"] == "Blocked" and "below the minimum 0.9" in status["message"]


def test_status_phases() -> None:
    none = registry(version("1", "Staging"), autoServe={"template": TEMPLATE})
    assert build_status(none, None, ServePlan()) == {
        "phase": "NoProduction",
        "message": "no version is Production",
        "service": "llm",
        "versions": 1,
    }
    reg = registry(
        version("1", "Archived"),
        version("2", "Production"),
        productionHistory=["1", "2"],
        autoServe={"template": TEMPLATE},
    )
    rolling = build_status(reg, {"status": {"servingVersion": "1"}}, ServePlan())
    assert rolling["phase"] == "RollingOut" and rolling["servingVersion"] == "1"
    assert rolling["previousProduction"] == "1" and rolling["productionVersion"] == "2"
    ready = build_status(reg, {"status": {"servingVersion": "2"}}, ServePlan())
    assert ready["phase"] == "Ready" and "message" not in ready
    plain = registry(version("1", "Production"))
    assert build_status(plain, None, ServePlan())["phase"] == "Ready"
