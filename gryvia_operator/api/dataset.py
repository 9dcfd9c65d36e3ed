"""GryviaDataset: data staged once onto a storage backend and mounted read-only by jobs of
every tenant its `access` allows (cluster-scoped; docs/datasets.md).

The source is an S3 prefix (`s3://bucket/prefix`, with `endpoint` for a non-AWS server and
a credentials Secret), an HTTP(S) folder (`https://host/path/`) or a folder of a claim
(`pvc://namespace/claim/path`). The cache is a claim of `cache.size` on the GryviaStorage
`cache.storage`, in the staging namespace (the operator's), filled by a copy Job that runs
rclone: it prints the source's listing digest (the dataset's version), its size and file
count, then copies with progress lines the operator reads from the Job's log. Each staged
version has its own claim (`gryvia-dataset-<name>-<version>`), so a job keeps the version it
started with while a new one stages. A check Job every `cache.refreshSeconds` (and on
`gryvia dataset stage`) lists the source again: a new digest stages a new version.

Jobs name datasets in `spec.datasets` (`[{name, mountPath}]`). A pod mounts claims of its own
namespace only, so for each namespace with such a job the operator makes a claim
`gryvia-dataset-<name>` bound to a copy of the staged volume (same volume source, ReadOnlyMany,
reclaim Retain); the pods mount it read-only. A job waits (`status.pending` kind `Dataset`,
with the staging progress) until the dataset is Ready and that claim is Bound.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Final, Literal

from pydantic import Field, StringConstraints

from gryvia_operator.api import resources
from gryvia_operator.api.base import (
    AGE_COLUMN,
    Conditions,
    GryviaModel,
    GryviaResource,
    KindInfo,
    NonNegativeInt32,
    NonNegativeInt64,
    PrinterColumn,
    SchemaExtra,
    Str63,
    Str253,
    Str1024,
)
from gryvia_operator.api.quantity import Quantity

SOURCE_PATTERN: Final = (
    r"^(s3://[a-z0-9][a-z0-9.-]{1,61}[a-z0-9](/[^\s]*)?"
    r"|https?://[^\s/]+(/[^\s]*)?"
    r"|pvc://[a-z0-9]([-a-z0-9]*[a-z0-9])?/[a-z0-9]([-a-z0-9.]*[a-z0-9])?(/[^\s]*)?)$"
)
"""`s3://bucket[/prefix]`, `http(s)://host[/path]` or `pvc://namespace/claim[/path]`."""
DatasetPhase = Literal["Pending", "Staging", "Ready", "Failed", "Invalid"]
"""Pending: waiting for its backend or credentials (`message` says which); Staging: the copy
Job runs (`progress`); Ready: a version is staged; Failed: the last staging failed and no
version is staged (`message` quotes the copier); Invalid: the spec is wrong."""
ANNOTATION_STAGE: Final = "gryvia.io/stage"
"""On a GryviaDataset: any new value asks to check the source now and stage it if it changed
(`gryvia dataset stage` sets it to the time it asked, RFC 3339 UTC)."""
LABEL_DATASET: Final = "gryvia.io/dataset"
"""On everything a dataset makes (claims, volumes, Jobs): the dataset's name."""
LABEL_ROLE: Final = "gryvia.io/dataset-role"
"""On a dataset's Job: `check` or `copy`."""
LABEL_VERSION: Final = "gryvia.io/dataset-version"
"""On a copy Job and the claims of a version: the version."""
SECRET_KEYS: Final = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY")
"""The keys an S3 credentials Secret holds (the AWS SDKs' environment names)."""
DEFAULT_REFRESH_SECONDS: Final = 3600

_Int32 = SchemaExtra({"format": "int32"})
_Url = Annotated[str, StringConstraints(min_length=6, max_length=1024, pattern=SOURCE_PATTERN)]


class SecretReference(GryviaModel):
    """A Secret in the staging namespace holding `AWS_ACCESS_KEY_ID` and
    `AWS_SECRET_ACCESS_KEY`."""

    name: Str253
    """The Secret's name."""


class DatasetSource(GryviaModel):
    """Where the data is."""

    url: _Url
    """`s3://bucket/prefix`, `https://host/path/` or `pvc://namespace/claim/path`."""
    endpoint: Str1024 | None = None
    """S3: the server's URL when it is not AWS (e.g. `http://127.0.0.1:8333`)."""
    region: Str63 | None = None
    """S3: the region (unset: the server's default)."""
    secret_ref: SecretReference | None = None
    """S3: the credentials Secret (unset: anonymous access)."""
    version: Str253 | None = None
    """A version you declare (e.g. a release tag): changing it stages again, whatever the
    listing says."""


class DatasetAccess(GryviaModel):
    """Who may mount it; unset lists allow everyone."""

    tenants: Annotated[list[Str63], Field(max_length=256)] | None = None
    """GryviaTenant names whose namespaces may mount it."""
    namespaces: Annotated[list[Str63], Field(max_length=256)] | None = None
    """Further namespaces that may mount it."""


class DatasetCache(GryviaModel):
    """Where the staged copy lives."""

    storage: Str253
    """The GryviaStorage whose class the cache claims use."""
    size: Quantity
    """Each staged version's claim size (e.g. `2Ti`); the data must fit."""
    refresh_seconds: Annotated[int, Field(ge=0, le=2592000, strict=True), _Int32] = (
        DEFAULT_REFRESH_SECONDS
    )
    """Seconds between two checks of the source (0: only when asked), 0..2592000."""


class DatasetSpec(GryviaModel):
    """A dataset: its source, its cache, who may use it."""

    source: DatasetSource
    cache: DatasetCache
    access: DatasetAccess | None = None
    description: Str1024 | None = None
    """What it is, for people."""
    license: Str253 | None = None
    """Its license (informative)."""


class DatasetProgress(GryviaModel):
    """The copy Job's last progress line."""

    bytes: NonNegativeInt64 = 0
    """Bytes copied so far."""
    total_bytes: NonNegativeInt64 | None = None
    """Bytes to copy."""
    files: NonNegativeInt32 = 0
    """Files copied so far."""
    total_files: NonNegativeInt32 | None = None
    """Files to copy."""
    percent: Annotated[float, Field(ge=0, le=100)] | None = None
    """Bytes copied in percent of the total."""
    bytes_per_second: float | None = None
    """The copier's current speed."""
    eta_seconds: NonNegativeInt64 | None = None
    """The copier's estimate of the time left."""
    updated_at: datetime | None = None
    """When the line was read (UTC)."""


class DatasetStatus(GryviaModel):
    """What is staged, what stages now, and how far it is."""

    phase: DatasetPhase | None = None
    message: Str1024 | None = None
    version: Str63 | None = None
    """The staged version: the source listing's digest (16 hex digits), with the declared
    `source.version` before it when set (`v2-1a2b...`)."""
    source_version: Str63 | None = None
    """The version the last check or copy saw at the source."""
    cache_claim: Str253 | None = None
    """The staged version's claim in the staging namespace."""
    size_bytes: NonNegativeInt64 | None = None
    """Bytes in the staged version."""
    files: NonNegativeInt32 | None = None
    """Files in the staged version."""
    staged_at: datetime | None = None
    """When the staged version was complete (UTC)."""
    copy_seconds: float | None = None
    """How long the staged version's copy took (rclone's own elapsed time, seconds)."""
    staging: Str253 | None = None
    """The copy or check Job that runs now."""
    staging_version: Str63 | None = None
    """The version the running copy Job stages."""
    staging_started_at: datetime | None = None
    """When it started (UTC)."""
    progress: DatasetProgress | None = None
    """How far the running copy Job is."""
    source_error: Str1024 | None = None
    """Why the last check or copy failed (rclone's last error), unset after one succeeds."""
    last_check_at: datetime | None = None
    """When the source was last listed (UTC)."""
    last_stage_request: Str63 | None = None
    """The `gryvia.io/stage` value last honoured."""
    stage_runs: NonNegativeInt32 | None = None
    """Copy Jobs run so far (a re-stage counts one)."""
    namespaces: Annotated[list[Str63], Field(max_length=1024)] | None = None
    """Namespaces with a read-only claim of the staged version."""
    conditions: Conditions | None = None
    """`Staged`, `SourceReadable`."""


class GryviaDataset(GryviaResource):
    """A dataset: a source staged once into a cache on a GryviaStorage, mounted read-only by
    the jobs that name it."""

    kind: Literal["GryviaDataset"] = "GryviaDataset"
    spec: DatasetSpec
    status: DatasetStatus | None = None

    def allows(self, tenant: str | None, namespace: str) -> bool:
        """Whether jobs of `namespace` (of `tenant`, None: no tenant) may mount it."""
        access = self.spec.access
        if access is None or (access.tenants is None and access.namespaces is None):
            return True
        return (tenant is not None and tenant in (access.tenants or [])) or (
            namespace in (access.namespaces or [])
        )


DATASET_KIND = KindInfo(
    resource=resources.DATASET,
    model=GryviaDataset,
    description=GryviaDataset.__doc__ or "",
    printer_columns=(
        PrinterColumn("Source", ".spec.source.url"),
        PrinterColumn("Storage", ".spec.cache.storage"),
        PrinterColumn("Phase", ".status.phase"),
        PrinterColumn("Version", ".status.version"),
        PrinterColumn("Files", ".status.files", "integer"),
        AGE_COLUMN,
        PrinterColumn("Percent", ".status.progress.percent", "number", priority=1),
        PrinterColumn("Bytes", ".status.sizeBytes", "integer", priority=1),
    ),
    omitted=(
        "type, tags, namespace: free-form labels; use metadata.labels",
        "statistics: size and file count are in status (sizeBytes, files)",
        "versioning: each staged version is its own claim (status.version); the source's own "
        "object versions are not tracked",
    ),
)
GryviaDataset.kind_info = DATASET_KIND
