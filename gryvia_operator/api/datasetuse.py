"""Jobs that name datasets (`spec.datasets`): the mount entries and whether the datasets
can be mounted yet (issue 41 point 2; docs/datasets.md). Pure: no I/O, no clock.

A job may start once every dataset it names exists, allows the job's namespace (its
`access`), is staged (a `version`) and has a read-only claim in the job's namespace (the
namespace is in `status.namespaces`: the dataset controller makes that claim for every
namespace with a live job naming the dataset). Until then the job waits, Pending with
`status.pending` kind `Dataset` and the staging progress.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import StringConstraints, ValidationError

from gryvia_operator.api.base import GryviaModel, Str253
from gryvia_operator.api.dataset import GryviaDataset
from gryvia_operator.api.datasettext import progress_text

MountPath = Annotated[str, StringConstraints(min_length=2, max_length=1024, pattern=r"^/\S+$")]


class DatasetMount(GryviaModel):
    """A dataset a job mounts read-only."""

    name: Str253
    """The GryviaDataset's name."""
    mount_path: MountPath
    """Where the trainer container sees it (absolute, e.g. `/datasets/imagenet`)."""


@dataclass(frozen=True)
class DatasetVolume:
    """A dataset ready for a job: its name, mount path and the claim in the job's namespace."""

    name: str
    mount_path: str
    claim: str


def claim_of(dataset: GryviaDataset) -> str | None:
    """The claim of the staged version (the same name in every consuming namespace)."""
    return dataset.status.cache_claim if dataset.status else None


def dataset_use(
    mounts: Iterable[DatasetMount],
    datasets: Iterable[Mapping[str, Any]],
    namespace: str,
    tenant: str | None,
) -> tuple[tuple[DatasetVolume, ...], str | None]:
    """(the volumes of the datasets that can be mounted, why the job must wait or None).

    `datasets` are GryviaDataset bodies (as an index holds them); `tenant` the job's
    namespace's tenant (None: none)."""
    found: dict[str, GryviaDataset] = {}
    for body in datasets:
        try:
            parsed = GryviaDataset.model_validate(body)
        except ValidationError:
            continue
        found[parsed.name] = parsed
    volumes: list[DatasetVolume] = []
    waits: list[str] = []
    for mount in mounts:
        obj = found.get(mount.name)
        if obj is None:
            waits.append(
                f'spec.datasets names no GryviaDataset "{mount.name}": create it (gryvia '
                f"dataset create {mount.name} --source ... --storage ... --size ...) or fix "
                "the name (gryvia dataset list)"
            )
        elif not obj.allows(tenant, namespace):
            waits.append(
                f"dataset {mount.name} does not allow namespace {namespace}: add its tenant to "
                "the dataset's spec.access.tenants (or the namespace to spec.access.namespaces)"
            )
        elif not (obj.status and obj.status.version):
            status = obj.status
            text = progress_text(
                status.progress if status else None, status.phase if status else None
            )
            why = (
                f" ({status.message})"
                if status and status.message and status.phase != "Staging"
                else ""
            )
            waits.append(f"waits for dataset {mount.name}: {text}{why}")
        elif namespace not in (obj.status.namespaces or []) or not claim_of(obj):
            waits.append(f"waits for dataset {mount.name}'s read-only claim in {namespace}")
        else:
            volumes.append(DatasetVolume(mount.name, mount.mount_path, str(claim_of(obj))))
    return tuple(volumes), ("; ".join(waits)[:1024] or None)


def dataset_blocker(text: str, names: Iterable[str]) -> tuple[dict[str, Any], dict[str, Any]]:
    """`status.pending` and `status.estimatedStart` of a job that waits for datasets."""
    resource = ("datasets " + ", ".join(names))[:253]
    return (
        {"kind": "Dataset", "resource": resource, "message": text[:1024]},
        {"unknownReason": text[:1024]},
    )
