"""A job's data claim and its storage backend: which StorageClass and access mode the claim
`<job>-data` gets from `spec.storage`, what admission says about that name, and the words of
a job that waits for storage (`status.pending` kind `Storage`). Pure: no I/O, no clock.

Source of the rules: issue 41 points 1 and 5. `spec.storage` names a GryviaStorage first (the
claim takes the backend's `class_name()` and first access mode); a name no backend has is
used as a StorageClass name, as before backends existed (admission warns, and denies when no
StorageClass of that name exists either).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from pydantic import ValidationError

from gryvia_operator.api.names import pvc_name
from gryvia_operator.api.storage import GryviaStorage

DEFAULT_ACCESS_MODE: Final = "ReadWriteMany"
"""The access mode of a claim whose `spec.storage` names a plain StorageClass."""
SHARED_PREFIX: Final = "gryvia-data-"
"""A namespace's shared claim of a backend is `gryvia-data-<backend>`."""
HEALTH_HINT: Final = "gryvia health storage"
"""The command that shows a backend's class, provisioner and probe."""
MAX_TEXT: Final = 1024
"""`status.pending.message` and `status.message` are bounded (Str1024)."""
_QUOTA_NAME = re.compile(r"exceeded quota: ([^,\s]+)")


@dataclass(frozen=True)
class DataClaim:
    """What the data claim of a job is made of: `storage_class` (the claim's
    `storageClassName`), `access_mode` (its one access mode) and `backend` (the GryviaStorage
    it came from; None when `spec.storage` is used as a StorageClass name)."""

    storage_class: str
    access_mode: str = DEFAULT_ACCESS_MODE
    backend: str | None = None

    @property
    def shared(self) -> bool:
        """Whether the jobs of a namespace share one claim of this backend: a GryviaStorage
        whose first access mode is ReadWriteMany (what one job writes under `/data`, the next
        reads; the claim outlives the jobs). A ReadWriteOnce backend, or a plain
        StorageClass, gives each job its own claim `<job>-data`, deleted with the job."""
        return self.backend is not None and self.access_mode == DEFAULT_ACCESS_MODE

    def claim_name(self, job_name: str) -> str:
        """The claim a job mounts at `/data`: `gryvia-data-<backend>` when `shared`, else
        `<job>-data` (`api.names.pvc_name`)."""
        return shared_claim_name(str(self.backend)) if self.shared else pvc_name(job_name)


def shared_claim_name(backend: str) -> str:
    """`gryvia-data-<backend>`: the claim the jobs of a namespace share on a ReadWriteMany
    GryviaStorage (a backend's name is the value of label `gryvia.io/storage` on its objects,
    so in practice at most 63 characters: this fits a claim name's 253)."""
    return f"{SHARED_PREFIX}{backend}"


def find_backend(name: str, storages: Iterable[Mapping[str, Any]]) -> GryviaStorage | None:
    """The GryviaStorage called `name` among `storages` (bodies as the index holds them), or
    None; a body that does not parse counts as absent."""
    for body in storages:
        if str((body.get("metadata") or {}).get("name")) != name:
            continue
        try:
            return GryviaStorage.model_validate(body)
        except ValidationError:
            return None
    return None


def data_claim(name: str, backend: GryviaStorage | None) -> DataClaim:
    """The claim for `spec.storage` = `name`: the backend's class and first access mode, or
    `name` as a StorageClass name with ReadWriteMany when there is no backend."""
    if backend is None:
        return DataClaim(name)
    return DataClaim(backend.class_name(), backend.spec.access_modes[0], backend.name)


def job_claim(storage: str | None, storages: Iterable[Mapping[str, Any]]) -> DataClaim | None:
    """The data claim of a job whose `spec.storage` is `storage` (None: no storage, no claim),
    given the GryviaStorage bodies the index holds under that name (`data_claim`,
    `find_backend`)."""
    if not storage:
        return None
    return data_claim(storage, find_backend(storage, storages))


def _fix(name: str) -> str:
    return f"gryvia storage create {name} --backend existing --class {name}"


def storage_admission(
    name: str, storages: Iterable[GryviaStorage], classes: Mapping[str, str] | None
) -> tuple[str | None, list[str]]:
    """(denial or None, warnings) for a job whose `spec.storage` is `name`.

    `storages` are the GryviaStorages known; `classes` the StorageClasses by name ->
    provisioner (None: not known yet, so the class check is skipped). A backend that is not
    Ready: a warning with its status message. No backend: a warning that the name is used as
    a StorageClass name, and a denial when no such class exists (naming the backends there
    are and the fix).
    """
    known = {s.name: s for s in storages}
    backend = known.get(name)
    if backend is not None:
        status = backend.status
        phase = status.phase if status is not None else None
        if phase is not None and phase != "Ready":
            why = (status.message if status is not None else None) or "no reason given"
            return None, [
                f'GryviaStorage "{name}" is {phase}: {why} (the job may wait for its data '
                f"claim; see '{HEALTH_HINT}')"
            ]
        return None, []
    if classes is not None and name not in classes:
        listed = ", ".join(sorted(known)) or "none"
        return (
            f'spec.storage "{name}" names no GryviaStorage and no StorageClass (GryviaStorages: '
            f"{listed}): name one of them, or create the class and then the backend with "
            f"'{_fix(name)}'",
            [],
        )
    return None, [
        f'spec.storage "{name}" names no GryviaStorage; it is used as a StorageClass name (no '
        f"health probe, no tenant storage limits): create one with '{_fix(name)}'"
    ]


def is_quota_refusal(status: int, message: str) -> bool:
    """Whether an API error (HTTP `status`, `message`) is a ResourceQuota refusing a create
    (403 Forbidden, "exceeded quota: ..."; Kubernetes' quota admission plugin)."""
    return status == 403 and "exceeded quota" in message


def quota_refusal_text(claim: str, found: DataClaim, detail: str) -> str:
    """Why the data claim `claim` could not be made (`detail`: the API server's message) and
    the fix: ask for less, or raise the backend's tenant limit (its quota
    `gryvia-storage-<backend>`, `reconcile.storage.quota_name`) or, when another quota of
    the namespace refused it or the class has no backend, that ResourceQuota."""
    start = detail.find("exceeded quota")
    reason = detail[start:] if start >= 0 else detail
    match = _QUOTA_NAME.search(detail)
    quota = match.group(1) if match else None
    if found.backend is not None and quota in (None, f"gryvia-storage-{found.backend}"):
        raise_it = f"raise the tenant's limit in GryviaStorage {found.backend} spec.quotas"
    else:  # another quota of the namespace (or a class without a backend)
        raise_it = f"raise ResourceQuota {quota or '(named above)'}"
    text = (
        f"data claim {claim} (class {found.storage_class}) was refused: {reason}; ask for less "
        f"with spec.storageRequest, or {raise_it}"
    )
    return text[:MAX_TEXT]


def unbound_claim_text(namespace: str, claim: str, storage_class: str, event: str | None) -> str:
    """Why a started job's pods wait: its data claim is not bound (with the claim's last event
    when known), and where to look."""
    last = f"; last event: {event}" if event else ""
    text = (
        f"waits for its data claim {namespace}/{claim} (class {storage_class}) to bind{last}; "
        f"see '{HEALTH_HINT}'"
    )
    return text[:MAX_TEXT]


def storage_blocker(text: str, resource: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """`status.pending` and `status.estimatedStart` of a job that waits for storage."""
    return (
        {"kind": "Storage", "resource": resource[:253], "message": text[:MAX_TEXT]},
        {"unknownReason": text[:MAX_TEXT]},
    )
