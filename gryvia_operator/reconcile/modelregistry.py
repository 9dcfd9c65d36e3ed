"""GryviaModelRegistry, pure: which GryviaInferenceService autoServe wants (a whole body to
create, or a spec patch of an existing one) for the Production version, and the registry's
status. No I/O; the policy rules are in api/modelpolicy.py."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from gryvia_operator.api.controlled import owner_reference
from gryvia_operator.api.inference import INFERENCE_SERVICE_KIND, GryviaInferenceServiceSpec
from gryvia_operator.api.modelpolicy import metric_problems, rollback_target
from gryvia_operator.api.modelregistry import (
    LABEL_REGISTRY,
    PLACEHOLDER,
    GryviaModelRegistry,
    ModelVersion,
)

ENV_NAME = "GRYVIA_MODEL_NAME"
ENV_VERSION = "GRYVIA_MODEL_VERSION"
ENV_ARTIFACT = "GRYVIA_MODEL_ARTIFACT"


def service_name(reg: GryviaModelRegistry) -> str:
    """The autoServe service's name: autoServe.serviceName, else the registry's name."""
    auto = reg.spec.auto_serve
    return (auto.service_name if auto else None) or reg.name


def substitute(text: str, reg: GryviaModelRegistry, version: ModelVersion) -> str:
    """`text` with `$(model.name)`, `$(model.version)`, `$(model.artifact)` replaced."""
    values = {
        "name": reg.spec.model_name,
        "version": version.version,
        "artifact": version.artifacts.ref(),
    }
    return PLACEHOLDER.sub(lambda m: values[m.group(1)], text)


def model_env(reg: GryviaModelRegistry, version: ModelVersion) -> dict[str, str]:
    """The GRYVIA_MODEL_* variables every served pod gets."""
    return {
        ENV_NAME: reg.spec.model_name,
        ENV_VERSION: version.version,
        ENV_ARTIFACT: version.artifacts.ref(),
    }


def templated_spec(reg: GryviaModelRegistry, version: ModelVersion) -> dict[str, Any]:
    """The service spec (camelCase) from autoServe.template: placeholders replaced in image,
    command and env values, version and model set, GRYVIA_MODEL_* added to env."""
    auto = reg.spec.auto_serve
    assert auto is not None and auto.template is not None
    spec = auto.template.model_dump(by_alias=True, exclude_none=True, mode="json")
    spec["image"] = substitute(spec["image"], reg, version)
    if spec.get("command"):
        spec["command"] = [substitute(c, reg, version) for c in spec["command"]]
    env = {k: substitute(v, reg, version) for k, v in (spec.get("env") or {}).items()}
    spec["env"] = env | model_env(reg, version)
    spec["version"] = version.version
    spec["model"] = reg.spec.model_name
    return spec


def _normal(spec: Mapping[str, Any]) -> Any:
    """`spec` with the model's defaults filled in (the API server may have added them)."""
    try:
        model = GryviaInferenceServiceSpec.model_validate(dict(spec))
    except ValidationError:
        return dict(spec)
    return model.model_dump(by_alias=True, exclude_none=True, mode="json")


@dataclass(frozen=True)
class ServePlan:
    """What to write for autoServe: `create` (a whole body) or `patch` (a merge patch of the
    existing service), at most one; `problem` when the Production version is not served."""

    create: dict[str, Any] | None = None
    patch: dict[str, Any] | None = None
    problem: str | None = None


def plan_service(reg: GryviaModelRegistry, existing: Mapping[str, Any] | None) -> ServePlan:
    """The write that makes the autoServe service (`existing`: as stored, None when absent)
    serve the Production version. Nothing without autoServe or a Production version; a
    `problem` when the version breaks the promotion policy, or (without a template) the
    service does not exist or (with one) exists but another registry or nobody owns it."""
    auto, version = reg.spec.auto_serve, reg.spec.production()
    if auto is None or version is None:
        return ServePlan()
    problems = metric_problems(reg.spec, version)
    if problems:
        return ServePlan(problem="not served: " + "; ".join(problems))
    name = service_name(reg)
    have_spec = dict((existing or {}).get("spec") or {})
    if auto.template is None:
        if existing is None:
            return ServePlan(
                problem=f"spec.autoServe.serviceName: GryviaInferenceService {name} does not "
                "exist; create it (gryvia serve create) or set spec.autoServe.template"
            )
        env = dict(have_spec.get("env") or {}) | model_env(reg, version)
        want = {"version": version.version, "model": reg.spec.model_name, "env": env}
        if all(have_spec.get(k) == v for k, v in want.items()):
            return ServePlan()
        return ServePlan(patch={"spec": want})
    spec = templated_spec(reg, version)
    labels = {LABEL_REGISTRY: reg.name}
    if existing is None:
        return ServePlan(
            create={
                "apiVersion": INFERENCE_SERVICE_KIND.api_version,
                "kind": INFERENCE_SERVICE_KIND.kind,
                "metadata": {
                    "name": name,
                    "namespace": reg.namespace,
                    "labels": labels,
                    "ownerReferences": [owner_reference(reg)],
                },
                "spec": spec,
            }
        )
    owners = ((existing.get("metadata") or {}).get("ownerReferences")) or []
    if not any(o.get("uid") == reg.metadata.uid for o in owners):
        return ServePlan(
            problem=f"spec.autoServe: GryviaInferenceService {name} exists and is not this "
            "registry's; drop spec.autoServe.template to patch it in place, or pick another "
            "spec.autoServe.serviceName"
        )
    if _normal(have_spec) == _normal(spec):
        return ServePlan()
    removed = {k: None for k in have_spec if k not in spec}
    return ServePlan(patch={"spec": removed | spec})


def build_status(
    reg: GryviaModelRegistry, service: Mapping[str, Any] | None, plan: ServePlan
) -> dict[str, Any]:
    """The status (camelCase, as stored) from the spec, the autoServe service as stored
    after this pass's write (None: absent) and the pass's plan."""
    version = reg.spec.production()
    auto = reg.spec.auto_serve
    serving = ((service or {}).get("status") or {}).get("servingVersion")
    out: dict[str, Any] = {
        "productionVersion": version.version if version else None,
        "servingVersion": serving if auto is not None else None,
        "service": service_name(reg) if auto is not None else None,
        "previousProduction": rollback_target(reg.spec),
        "versions": len(reg.spec.versions),
    }
    if version is None:
        out["phase"], out["message"] = "NoProduction", "no version is Production"
    elif plan.problem:
        out["phase"], out["message"] = "Blocked", plan.problem
    elif auto is None or serving == version.version:
        out["phase"] = "Ready"
    else:
        out["phase"] = "RollingOut"
        out["message"] = f"service {service_name(reg)} rolling out version {version.version}"
    return {k: v for k, v in out.items() if v is not None}
