"""`gryvia model`, pure: the version (and registry) a `register` builds from its flags, table
rows of `model list` and the details of `model get`. The promotion rules are the operator's
(gryvia_operator/api/modelpolicy.py)."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from gryvia_cli.core.timefmt import age

if TYPE_CHECKING:
    from gryvia_operator.api.modelregistry import GryviaModelRegistry, ModelVersion

MODEL_COLUMNS = ("NAME", "MODEL", "PRODUCTION", "SERVING", "PHASE", "VERSIONS", "AGE")
MODEL_WIDE_COLUMNS = (*MODEL_COLUMNS, "SERVICE", "PREVIOUS", "MESSAGE")


def parse_metrics(items: list[str]) -> dict[str, float]:
    """`--metric NAME=VALUE` items as {name: value}. Raises ValueError naming the flag."""
    out: dict[str, float] = {}
    for item in items:
        name, sep, text = item.partition("=")
        try:
            value = float(text)
        except ValueError:
            value = float("nan")
        if not sep or not name.strip() or value != value or value in (float("inf"), -float("inf")):
            raise ValueError(f"--metric {item!r}: write NAME=NUMBER, e.g. --metric accuracy=0.93")
        out[name.strip()] = value
    return out


def parse_pvc(text: str) -> dict[str, str]:
    """`--pvc CLAIM:/PATH` as {claimName, path}. Raises ValueError naming the flag."""
    claim, sep, path = text.partition(":")
    if not sep or not claim or not path:
        raise ValueError(f"--pvc {text!r}: write CLAIM:/PATH, e.g. --pvc checkpoints:/llm/3")
    return {"claimName": claim, "path": path}


def build_version(
    version: str,
    *,
    uri: str | None,
    pvc: str | None,
    job: str | None,
    tuner: str | None,
    trial: str | None,
    metrics: list[str],
    stage: str,
    now: datetime,
) -> dict[str, Any]:
    """One `spec.versions[]` entry (camelCase) of `gryvia model register`, checked against
    the model. Raises ValueError naming the flag and the fix."""
    from pydantic import ValidationError

    from gryvia_operator.api.modelregistry import ModelVersion

    if (uri is None) == (pvc is None):
        raise ValueError("--uri or --pvc: give exactly one (where the version's files are)")
    if job and tuner:
        raise ValueError("--job or --tuner: the version comes from one of them, not both")
    if trial and not tuner:
        raise ValueError("--trial needs --tuner (the tuner the trial belongs to)")
    if stage in ("Production", "Archived"):
        raise ValueError(
            f"--stage {stage}: register as None or Staging, then `gryvia model promote` "
            "(which applies the promotion policy)"
        )
    body: dict[str, Any] = {
        "version": version,
        "artifacts": {"uri": uri} if uri is not None else {"pvc": parse_pvc(str(pvc))},
        "stage": stage,
        "registeredAt": now.strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    if job:
        body["source"] = {"kind": "GryviaAIJob", "name": job}
    elif tuner:
        body["source"] = {"kind": "GryviaAutoTuner", "name": tuner}
        if trial:
            body["source"]["trial"] = trial
    if metrics:
        body["metrics"] = parse_metrics(metrics)
    try:
        ModelVersion.model_validate(body)
    except ValidationError as exc:
        from gryvia_operator.api.controlled import first_problem

        where, message = first_problem(exc)
        if where == "version":
            raise ValueError(
                f"VERSION {version!r}: use 1-63 letters, digits, '.', '_' or '-', starting "
                "and ending with a letter or digit"
            ) from None
        raise ValueError(f"{where}: {message}") from None
    return body


def build_registry(name: str, namespace: str, model_name: str) -> dict[str, Any]:
    """An empty GryviaModelRegistry body for `register` to add the first version to."""
    from gryvia_operator.api.modelregistry import MODEL_REGISTRY_KIND

    return {
        "apiVersion": MODEL_REGISTRY_KIND.api_version,
        "kind": MODEL_REGISTRY_KIND.kind,
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"modelName": model_name, "versions": []},
    }


def model_row(reg: GryviaModelRegistry, now: datetime) -> list[Any]:
    """NAME MODEL PRODUCTION SERVING PHASE VERSIONS AGE (PRODUCTION from the spec, so it is
    right before the operator has seen a promotion)."""
    st = reg.status
    prod = reg.spec.production()
    return [
        reg.name,
        reg.spec.model_name,
        prod.version if prod else "-",
        (st.serving_version if st else None) or "-",
        (st.phase if st else None) or "-",
        len(reg.spec.versions),
        age(reg.metadata.creation_timestamp, now),
    ]


def model_wide_row(reg: GryviaModelRegistry, now: datetime) -> list[Any]:
    """model_row, then SERVICE, PREVIOUS (rollback target) and MESSAGE."""
    from gryvia_operator.api.modelpolicy import rollback_target

    st = reg.status
    auto = reg.spec.auto_serve
    service = ((auto.service_name if auto else None) or reg.name) if auto else "-"
    return [
        *model_row(reg, now),
        service,
        rollback_target(reg.spec) or "-",
        (st.message if st else None) or "",
    ]


def version_line(v: ModelVersion) -> str:
    """`STAGE  ARTIFACTS  from SOURCE  metric=value ...` of one version."""
    parts = [v.stage, v.artifacts.ref()]
    if v.source is not None:
        parts.append(f"from {v.source.ref()}")
    if v.metrics:
        parts.append(" ".join(f"{k}={val:g}" for k, val in sorted(v.metrics.items())))
    return "  ".join(parts)


def model_details(reg: GryviaModelRegistry) -> list[tuple[str, str]]:
    """(label, value) lines of `gryvia model get`: the registry, its policy and autoServe,
    its status, then one line per version."""
    from gryvia_operator.api.modelpolicy import rollback_target

    spec, st = reg.spec, reg.status
    prod = spec.production()
    lines = [
        ("Name", f"{reg.namespace}/{reg.name}"),
        ("Model", spec.model_name),
        ("Production", prod.version if prod else "-"),
        ("Rollback to", rollback_target(spec) or "-"),
    ]
    policy = spec.promotion_policy
    if policy is not None:
        rules = [f"from {', '.join(policy.from_stages)}"] if policy.from_stages else []
        for rule in policy.metrics or []:
            bounds = [f">= {rule.min:g}" if rule.min is not None else ""]
            bounds.append(f"<= {rule.max:g}" if rule.max is not None else "")
            rules.append(f"{rule.metric} {' and '.join(b for b in bounds if b)}")
        lines.append(("Promotion", "; ".join(rules) or "any"))
    if spec.auto_serve is not None:
        auto = spec.auto_serve
        name = auto.service_name or reg.name
        how = f"template, image {auto.template.image}" if auto.template else "patches it"
        lines.append(("Auto-serve", f"GryviaInferenceService {name} ({how})"))
    if st is not None:
        lines.append(("Phase", st.phase or "-"))
        if spec.auto_serve is not None:
            lines.append(("Serving version", st.serving_version or "-"))
        if st.message:
            lines.append(("Message", st.message))
    for v in spec.versions:
        lines.append((f"Version {v.version}", version_line(v)))
    if not spec.versions:
        lines.append(("Versions", "none; add one with `gryvia model register`"))
    return lines
