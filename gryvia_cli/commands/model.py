"""`gryvia model register|list|get|promote|rollback`: GryviaModelRegistries, a model's
versions and their stages; promotion follows the registry's policy (operator flag
--enable-model-registry serves the Production version with autoServe)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, cast

import typer

from gryvia_cli.cli.kindcommands import add_get, add_list
from gryvia_cli.cli.objects import ObjectGroup, TableSpec
from gryvia_cli.cli.options import NamespaceOpt, OutputOpt, YesOpt, confirm
from gryvia_cli.cli.session import Session, session
from gryvia_cli.core.modelregistries import (
    MODEL_COLUMNS,
    MODEL_WIDE_COLUMNS,
    model_details,
    model_row,
    model_wide_row,
)
from gryvia_cli.errors import InvalidInputError, NotFoundError
from gryvia_cli.kube import resources as r
from gryvia_cli.output import info, success

app = typer.Typer(
    help="Model registries: versions, stages, promotion and rollback.", no_args_is_help=True
)
NameArg = Annotated[str, typer.Argument(help="Model registry name.", show_default=False)]
VersionArg = Annotated[str, typer.Argument(help="Version, e.g. 3.", show_default=False)]
MODELS = ObjectGroup(r.MODEL_REGISTRY, "model registry", "model")
STAGE_CHOICES = ("None", "Staging", "Production", "Archived")

if TYPE_CHECKING:
    from gryvia_operator.api.modelpolicy import StageChange
    from gryvia_operator.api.modelregistry import GryviaModelRegistry, Stage


def _model(obj: dict[str, Any]) -> GryviaModelRegistry:
    """The registry validated; an invalid one names its first bad field and the fix
    (`ObjectGroup.validated`)."""
    from gryvia_operator.api.modelregistry import GryviaModelRegistry

    return MODELS.validated(GryviaModelRegistry, obj)


def _write(state: Session, obj: dict[str, Any], change: StageChange) -> dict[str, Any]:
    """Merge-patch the versions and history, on the resourceVersion read (a concurrent
    change fails with a conflict instead of being overwritten)."""
    meta = obj["metadata"]
    patch = _on_version(obj, change.patch())
    return state.access().merge_patch(r.MODEL_REGISTRY, meta["name"], meta["namespace"], patch)


def _on_version(obj: dict[str, Any], spec: dict[str, Any]) -> dict[str, Any]:
    """A merge patch of `spec` that fails with a conflict if `obj` changed since it was read
    (its resourceVersion as a precondition)."""
    rv = (obj.get("metadata") or {}).get("resourceVersion")
    return ({"metadata": {"resourceVersion": rv}} if rv else {}) | {"spec": spec}


@app.command("register")
def register(
    ctx: typer.Context,
    name: NameArg,
    version: VersionArg,
    uri: Annotated[
        str | None, typer.Option("--uri", help="Artifacts' URI, e.g. s3://models/llm/3.")
    ] = None,
    pvc: Annotated[
        str | None, typer.Option("--pvc", help="Artifacts on a PVC a job wrote: CLAIM:/PATH.")
    ] = None,
    job: Annotated[
        str | None, typer.Option("--job", help="The GryviaAIJob that produced it.")
    ] = None,
    tuner: Annotated[
        str | None, typer.Option("--tuner", help="The GryviaAutoTuner that produced it.")
    ] = None,
    trial: Annotated[
        str | None, typer.Option("--trial", help="With --tuner: the trial, e.g. sweep-t3.")
    ] = None,
    metric: Annotated[
        list[str] | None,
        typer.Option("--metric", help="NAME=VALUE, repeated, e.g. --metric accuracy=0.93."),
    ] = None,
    stage: Annotated[str, typer.Option("--stage", help="Initial stage: None or Staging.")] = "None",
    model_name: Annotated[
        str | None,
        typer.Option("--model-name", help="Model name of a new registry [default: NAME]."),
    ] = None,
    namespace: NamespaceOpt = None,
    output: OutputOpt = None,
) -> None:
    """Register a version of a model; creates the registry on its first version.

    Examples:
      gryvia model register llm 3 --uri s3://models/llm/3 --job finetune-3 --metric accuracy=0.93
      gryvia model register llm 4 --pvc checkpoints:/llm/4 --tuner sweep --trial sweep-t2
      gryvia model register llm 5 --uri s3://models/llm/5 --stage Staging
    """
    from gryvia_cli.core.modelregistries import build_registry, build_version

    state = session(ctx)
    ns = state.resolve_namespace(namespace)
    if stage not in STAGE_CHOICES:
        raise InvalidInputError(f"--stage {stage!r}: use None or Staging")
    try:
        entry = build_version(
            version,
            uri=uri,
            pvc=pvc,
            job=job,
            tuner=tuner,
            trial=trial,
            metrics=metric or [],
            stage=stage,
            now=state.now(),
        )
    except ValueError as exc:
        raise InvalidInputError(str(exc)) from None
    access = state.access()
    try:
        obj = access.get(r.MODEL_REGISTRY, name, ns)
    except NotFoundError:
        body = build_registry(name, ns, model_name or name)
        body["spec"]["versions"] = [entry]
        obj = access.create(r.MODEL_REGISTRY, body, ns)
        success(f"model registry {ns}/{name} created with version {version}")
        MODELS.print_written(state, obj, output)
        return
    reg = _model(obj)
    if model_name and model_name != reg.spec.model_name:
        raise InvalidInputError(
            f"--model-name {model_name}: registry {name} holds model {reg.spec.model_name}; "
            "drop --model-name or use another registry"
        )
    if reg.spec.find(version) is not None:
        raise InvalidInputError(
            f"VERSION {version}: already registered in {name}; register a new version "
            "(versions are immutable)"
        )
    versions = [
        v.model_dump(by_alias=True, exclude_none=True, mode="json") for v in reg.spec.versions
    ]
    patch = _on_version(obj, {"versions": [*versions, entry]})
    obj = access.merge_patch(r.MODEL_REGISTRY, name, ns, patch)
    success(f"version {version} registered in model registry {ns}/{name} ({stage})")
    MODELS.print_written(state, obj, output)


add_list(
    app,
    MODELS,
    TableSpec(MODEL_COLUMNS, model_row, MODEL_WIDE_COLUMNS, model_wide_row),
    "List model registries: model, Production and serving versions, phase.",
    "SERVICE, PREVIOUS (the rollback target) and MESSAGE",
    empty="No model registries found.",
)
add_get(
    app,
    MODELS,
    lambda m, _now: model_details(m),
    "Show one model registry: policy, autoServe, status and every version.",
    "llm",
)


@app.command("promote")
def promote(
    ctx: typer.Context,
    name: NameArg,
    version: VersionArg,
    to: Annotated[
        str, typer.Option("--to", help="Stage: Staging, Production, Archived or None.")
    ] = "Production",
    yes: YesOpt = False,
    namespace: NamespaceOpt = None,
) -> None:
    """Move a version to a stage; the promotion policy decides whether it may.

    Promoting to Production archives the current Production version; with autoServe the
    operator then rolls the inference service to the new version.

    Examples:
      gryvia model promote llm 3 --to Staging
      gryvia model promote llm 3 --to Production --yes
    """
    from gryvia_operator.api.modelpolicy import PromotionRefused
    from gryvia_operator.api.modelpolicy import promote as plan_promotion

    if to not in STAGE_CHOICES:
        raise InvalidInputError(f"--to {to!r}: use one of {', '.join(STAGE_CHOICES)}")
    state = session(ctx)
    ns = state.resolve_namespace(namespace)
    obj = MODELS.read(state, name, ns)
    reg = _model(obj)
    try:
        change = plan_promotion(reg.spec, version, cast("Stage", to))
    except PromotionRefused as exc:
        raise InvalidInputError(f"promotion refused: {exc}") from None
    if to == "Production" or change.before != change.after:
        what = f"Make version {version} of {name} Production"
        if change.before and change.before != version:
            what += f" (archiving {change.before})"
        if to != "Production":
            what = f"Move Production version {version} of {name} to {to}"
        if not confirm(what + "?", yes):
            raise typer.Exit(1)
    _write(state, obj, change)
    success(f"version {version} of model registry {ns}/{name} is now {to}")


@app.command("rollback")
def rollback(
    ctx: typer.Context, name: NameArg, yes: YesOpt = False, namespace: NamespaceOpt = None
) -> None:
    """Return to the previous Production version; the current one is archived.

    Examples:
      gryvia model rollback llm --yes
    """
    from gryvia_operator.api.modelpolicy import PromotionRefused
    from gryvia_operator.api.modelpolicy import rollback as plan_rollback

    state = session(ctx)
    ns = state.resolve_namespace(namespace)
    obj = MODELS.read(state, name, ns)
    reg = _model(obj)
    try:
        change = plan_rollback(reg.spec)
    except PromotionRefused as exc:
        raise InvalidInputError(f"rollback refused: {exc}") from None
    if not confirm(
        f"Roll {name} back from version {change.before} to {change.after} "
        f"(archiving {change.before})?",
        yes,
    ):
        raise typer.Exit(1)
    _write(state, obj, change)
    success(f"model registry {ns}/{name} rolled back to version {change.after}")
    info(f"version {change.before} is Archived")
