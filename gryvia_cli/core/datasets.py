"""GryviaDatasets on the client: the body `gryvia dataset create` writes and its errors (each
naming the field, the flag and the fix), the stage request of `gryvia dataset stage` and when
its `--wait` ends, and the rows and details of `list`, `get` and the console's `:datasets`
view (docs/datasets.md)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from gryvia_cli.core import timefmt
from gryvia_cli.core.manifests import manifest_body, new_object
from gryvia_operator.api.dataset import ANNOTATION_STAGE, GryviaDataset
from gryvia_operator.api.datasettext import human_bytes, progress_text

DATASET_COLUMNS = (
    "NAME",
    "SOURCE",
    "STORAGE",
    "PHASE",
    "VERSION",
    "SIZE",
    "FILES",
    "PROGRESS",
    "AGE",
)
DATASET_WIDE_COLUMNS = (*DATASET_COLUMNS, "ACCESS", "CLAIM", "STAGED", "MESSAGE")

FIELD_FIXES: tuple[tuple[str, str, str], ...] = (
    ("spec.source.url", "--source", "give s3://bucket/prefix, https://host/path/ or "
                                    "pvc://namespace/claim/path"),
    ("spec.source.endpoint", "--endpoint", "give the S3 server's URL (at most 1024 characters), "
                                           "e.g. http://127.0.0.1:8333"),
    ("spec.source.region", "--region", "give a region name of at most 63 characters"),
    ("spec.source.secretRef", "--secret", "name a Secret of the staging namespace (at most "
                                          "253 characters)"),
    ("spec.source.version", "--version", "give a version of at most 253 characters"),
    ("spec.cache.storage", "--storage", "name a GryviaStorage (at most 253 characters)"),
    ("spec.cache.size", "--size", "give a quantity such as 200Gi or 2Ti"),
    ("spec.cache.refreshSeconds", "--refresh-seconds", "give 0 (only when asked) up to "
                                                       "2592000 (30 days)"),
    ("spec.access.tenants", "--tenant", "give tenant names of at most 63 characters"),
    ("spec.access.namespaces", "--namespace-access", "give namespace names of at most 63 "
                                                     "characters"),
    ("spec.description", "--description", "give at most 1024 characters"),
)  # fmt: skip
"""(field path prefix, `gryvia dataset create` flag, the fix) of each field a user sets."""


class DatasetInputError(ValueError):
    """A dataset body the model refuses: `field` (`spec.cache.size`), the flag that sets it
    (None from a manifest), the model's message and the fix; str() is `--size
    (spec.cache.size): invalid quantity "10GB"`."""

    def __init__(self, field: str, flag: str | None, message: str, fix: str) -> None:
        self.field, self.flag, self.message, self.fix = field, flag, message, fix
        super().__init__(f"{flag} ({field}): {message}" if flag else f"{field}: {message}")


def _problem(body: dict[str, Any], flags: bool) -> DatasetInputError | None:
    """The first problem of `body` as a DatasetInputError (None when the model accepts it)."""
    from pydantic import ValidationError

    from gryvia_operator.api.controlled import first_problem
    from gryvia_operator.api.quantity import parse_quantity

    try:
        model = GryviaDataset.model_validate(body)
    except ValidationError as exc:
        field, message = first_problem(exc)
    else:
        if parse_quantity(model.spec.cache.size) > 0:
            return None
        field, message = "spec.cache.size", f"must be more than 0, not {model.spec.cache.size}"
    if message.startswith("String should match pattern"):
        message = "not an s3://, http(s):// or pvc:// URL of the accepted form"
    for prefix, flag, fix in FIELD_FIXES:
        if field == prefix or field.startswith(prefix + "."):
            return DatasetInputError(field, flag if flags else None, message, fix)
    return DatasetInputError(field, None, message, "see docs/datasets.md")


def build_dataset(
    name: str,
    *,
    source: str,
    storage: str,
    size: str,
    endpoint: str | None = None,
    region: str | None = None,
    secret: str | None = None,
    version: str | None = None,
    refresh_seconds: int | None = None,
    tenants: list[str] | None = None,
    namespaces: list[str] | None = None,
    description: str | None = None,
) -> dict[str, Any]:
    """The GryviaDataset body `gryvia dataset create NAME` applies, validated by the model
    (a size must also be more than 0). Unset options are left out (the operator's defaults:
    refresh every 3600 s, access for all); `tenants`/`namespaces` set `spec.access`.

    Raises DatasetInputError naming the field, its flag and the fix."""
    src: dict[str, Any] = {"url": source}
    for key, value in (("endpoint", endpoint), ("region", region), ("version", version)):
        if value is not None:
            src[key] = value
    if secret is not None:
        src["secretRef"] = {"name": secret}
    cache: dict[str, Any] = {"storage": storage, "size": size}
    if refresh_seconds is not None:
        cache["refreshSeconds"] = refresh_seconds
    spec: dict[str, Any] = {"source": src, "cache": cache}
    access = {k: v for k, v in (("tenants", tenants), ("namespaces", namespaces)) if v}
    if access:
        spec["access"] = access
    if description is not None:
        spec["description"] = description
    body = new_object("GryviaDataset", name, spec)
    problem = _problem(body, flags=True)
    if problem is not None:
        raise problem
    return body


def dataset_from_manifest(doc: Any, source: str) -> dict[str, Any]:
    """The body of a GryviaDataset manifest (`gryvia dataset create -f FILE`), apiVersion
    defaulted, validated by the model; cluster-scoped, so a `metadata.namespace` is dropped.
    Raises ValueError when it is not a GryviaDataset, DatasetInputError (field and fix, no
    flag) when the model refuses it."""
    body = manifest_body(doc, "GryviaDataset", source)
    meta = {k: v for k, v in (body.get("metadata") or {}).items() if k != "namespace"}
    body["metadata"] = meta
    if not meta.get("name"):
        raise DatasetInputError("metadata.name", None, "missing", "name the dataset")
    problem = _problem(body, flags=False)
    if problem is not None:
        raise problem
    return body


def stage_request(now: datetime) -> tuple[str, dict[str, Any]]:
    """(value, merge patch) of `gryvia dataset stage`: annotation `gryvia.io/stage` set to
    `now` in RFC 3339 UTC seconds (`2026-12-06T07:00:00Z`)."""
    value = now.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return value, {"metadata": {"annotations": {ANNOTATION_STAGE: value}}}


@dataclass(frozen=True)
class StageWait:
    """Where a stage request stands: `done` once the operator honoured it and the dataset is
    Ready or Failed (or Invalid: it never stages), `ok` on Ready, `text` the line to show
    (the progress while staging) and `message` the dataset's `status.message`."""

    done: bool
    ok: bool
    text: str
    message: str | None


def staging_text(dataset: GryviaDataset) -> str | None:
    """What runs now: the copy's progress while a version copies (`status.stagingVersion`,
    whatever the phase: a Ready dataset stays Ready while its next version copies),
    `checking the source` while a check Job runs (`status.staging` without a version), else
    None."""
    status = dataset.status
    if status is None:
        return None
    if status.staging_version:
        return progress_text(status.progress, "Staging")
    if status.staging:
        return "checking the source"
    return None


def stage_wait(dataset: GryviaDataset, requested: str) -> StageWait:
    """How the stage request `requested` (the annotation's value) of `dataset` stands.

    Done once the operator took it (`status.lastStageRequest` equals it: it records the
    request when it starts the check Job), no check or copy runs any more (`status.staging`
    unset; a changed source's copy starts in the same pass as the check ends) and the phase
    is Ready or Failed; `ok` when Ready without a `status.sourceError` (a failed check or
    copy leaves a dataset with a staged version Ready, with the error). Done and not ok at
    once when the spec is Invalid. Until then the text is the copy's progress, `checking
    the source`, the Pending message (a missing Secret or backend: the operator starts no
    check until it is fixed), or `waiting for the operator to check the source`."""
    status = dataset.status
    phase = status.phase if status is not None else None
    message = status.message if status is not None else None
    if phase == "Invalid":
        return StageWait(True, False, "invalid", message)
    honoured = status is not None and status.last_stage_request == requested
    running = staging_text(dataset)
    if status is not None and honoured and running is None and phase in ("Ready", "Failed"):
        error = status.source_error
        if phase == "Ready" and error:
            return StageWait(
                True, False, "kept its staged version (the check or copy failed)", error
            )
        return StageWait(True, phase == "Ready", progress_text(None, phase), error or message)
    if running is not None:
        text = running
    elif phase == "Pending" and message:
        text = f"pending: {message}"
    else:
        text = "waiting for the operator to check the source"
    return StageWait(False, False, text, message)


def access_text(dataset: GryviaDataset) -> str:
    """Who may mount it: `all`, `none`, or `tenants a,b; namespaces c` (either part alone)."""
    access = dataset.spec.access
    if access is None or (access.tenants is None and access.namespaces is None):
        return "all"
    parts = [
        f"{label} {','.join(names)}"
        for label, names in (("tenants", access.tenants), ("namespaces", access.namespaces))
        if names
    ]
    return "; ".join(parts) or "none"


def _when(value: datetime | None) -> str:
    return f"{value.astimezone(UTC):%Y-%m-%d %H:%M}Z" if value is not None else timefmt.MISSING


def dataset_row(dataset: GryviaDataset, now: datetime) -> list[Any]:
    """The cells of DATASET_COLUMNS: SIZE in binary units, PROGRESS what runs now
    (`staging_text`: the copy's progress, `checking the source`, else `-`); `-` for what the
    operator has not written yet."""
    spec, status = dataset.spec, dataset.status
    phase = status.phase if status is not None else None
    size = status.size_bytes if status is not None else None
    files = status.files if status is not None else None
    progress = staging_text(dataset) or timefmt.MISSING
    return [
        dataset.name,
        spec.source.url,
        spec.cache.storage,
        phase or timefmt.MISSING,
        (status.version if status is not None else None) or timefmt.MISSING,
        human_bytes(size) if size is not None else timefmt.MISSING,
        files if files is not None else timefmt.MISSING,
        progress,
        timefmt.age(dataset.metadata.creation_timestamp, now),
    ]


def dataset_wide_row(dataset: GryviaDataset, now: datetime) -> list[Any]:
    """The cells of DATASET_WIDE_COLUMNS: ACCESS (`access_text`), CLAIM, STAGED (UTC time)
    and MESSAGE after the plain ones."""
    status = dataset.status
    return [
        *dataset_row(dataset, now),
        access_text(dataset),
        (status.cache_claim if status is not None else None) or timefmt.MISSING,
        _when(status.staged_at if status is not None else None),
        (status.message if status is not None else None) or timefmt.MISSING,
    ]


def dataset_details(dataset: GryviaDataset, now: datetime) -> list[tuple[str, str]]:
    """(label, value) lines of one dataset for the console's detail view: source, cache,
    access, then what is staged and what stages now."""
    spec, status = dataset.spec, dataset.status
    src = spec.source
    source = src.url + (f" at {src.endpoint}" if src.endpoint else "")
    if src.secret_ref is not None:
        source += f" (credentials: Secret {src.secret_ref.name})"
    refresh = spec.cache.refresh_seconds
    lines = [
        ("Name", dataset.name),
        ("Source", source),
        ("Declared version", src.version or timefmt.MISSING),
        ("Cache", f"{spec.cache.size} on GryviaStorage {spec.cache.storage}"),
        ("Refresh", f"every {timefmt.human_duration(refresh)}" if refresh else "only when asked"),
        ("Access", access_text(dataset)),
    ]
    if spec.description:
        lines.append(("Description", spec.description))
    if status is None:
        return [*lines, ("Status", "not seen by the operator yet")]
    size = human_bytes(status.size_bytes) if status.size_bytes is not None else "-"
    lines += [
        ("Phase", status.phase or timefmt.MISSING),
        ("Message", status.message or timefmt.MISSING),
        ("Staged version", status.version or timefmt.MISSING),
        ("Staged", f"{size}, {status.files if status.files is not None else '-'} files, "
                   f"{_when(status.staged_at)} in claim {status.cache_claim or '-'}"),
    ]  # fmt: skip
    if status.copy_seconds is not None:
        lines.append(("Copy took", timefmt.format_seconds(status.copy_seconds)))
    running = staging_text(dataset)
    if running is not None:
        version = f"{status.staging_version}: " if status.staging_version else ""
        lines.append(("Now", f"{version}{running}"))
    if status.source_error:
        lines.append(("Source error", status.source_error))
    if status.last_check_at is not None:
        lines.append(("Last check", f"{timefmt.age(status.last_check_at, now)} ago"))
    lines.append(("Mounted in", ", ".join(status.namespaces or []) or "no namespace yet"))
    return lines
