"""The pure decision of a GryviaStorage: its StorageClass, its probe claim, its tenants'
ResourceQuotas, and its status (docs/storage.md).

The probe: when one is due (none yet, `probeSeconds` after the last one ended, or a new
`gryvia.io/probe` request) and the class exists, a claim of `PROBE_SIZE` of the class is made
in the probe namespace, named `gryvia-probe-<storage>-<unix seconds>` so that a new probe
never waits for the last claim's deletion. With a WaitForFirstConsumer class it carries the
annotation the scheduler would set (`volume.kubernetes.io/selected-node`), so the
provisioner acts without a pod. Bound ends it (`bindSeconds` from its creation); not Bound
after `probeTimeoutSeconds` ends it as Pending with the claim's last event. Either way the
claim is deleted; claims of the backend's probe label that are not the current probe are
deleted too (left by an operator stopped mid-probe).

The quotas: for every `spec.quotas` entry, one ResourceQuota `gryvia-storage-<storage>` in
each namespace of the tenant, limiting `<class>.storageclass.storage.k8s.io/requests.storage`
(and `.../persistentvolumeclaims`): Kubernetes' per-class storage quota, enforced by the API
server's admission, so a claim over it is refused at creation with the quota's name.
Everything made carries the backend's owner reference: garbage collection removes it with the
backend.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from gryvia_operator.api.controlled import owner_reference
from gryvia_operator.api.quantity import format_bytes, parse_quantity
from gryvia_operator.api.storage import (
    ANNOTATION_PROBE,
    LABEL_STORAGE,
    PROBE_SIZE,
    GryviaStorage,
    StorageProbe,
)
from gryvia_operator.reconcile.status import set_condition

SELECTED_NODE = "volume.kubernetes.io/selected-node"
"""The claim annotation the scheduler sets for a WaitForFirstConsumer claim (Kubernetes)."""
POLL_SECONDS = 1.0
"""How often a running probe's claim is looked at (bind time is measured to this)."""
QUOTA_SUFFIX = ".storageclass.storage.k8s.io/"
"""`<class>.storageclass.storage.k8s.io/requests.storage`: Kubernetes' per-class quota."""


@dataclass(frozen=True)
class ClaimView:
    """A PersistentVolumeClaim as the storage controller reads it."""

    namespace: str
    name: str
    storage_class: str
    phase: str
    request_bytes: int
    created: datetime | None = None

    @classmethod
    def from_claim(cls, obj: Mapping[str, Any]) -> ClaimView:
        """Project a claim (requests that do not parse count 0)."""
        meta, spec = obj.get("metadata") or {}, obj.get("spec") or {}
        raw = ((spec.get("resources") or {}).get("requests") or {}).get("storage", 0)
        try:
            request = int(parse_quantity(raw))
        except ValueError:
            request = 0
        created = meta.get("creationTimestamp")
        return cls(
            namespace=str(meta.get("namespace") or ""),
            name=str(meta.get("name") or ""),
            storage_class=str(spec.get("storageClassName") or ""),
            phase=str((obj.get("status") or {}).get("phase") or "Pending"),
            request_bytes=request,
            created=datetime.fromisoformat(created.replace("Z", "+00:00")) if created else None,
        )


@dataclass(frozen=True)
class StorageObserved:
    """What one backend's reconcile reads besides the object: its class (None: absent), the
    claims of the class (probe claims left out), its probe claims in the probe namespace,
    the last event of the current probe claim, a Ready node to pin a probe to, the namespaces
    of each tenant, and the ResourceQuotas it made as {(namespace, name): spec.hard}."""

    storage_class: Mapping[str, Any] | None
    claims: Sequence[ClaimView]
    probes: Sequence[ClaimView]
    probe_event: str | None
    node: str | None
    tenant_namespaces: Mapping[str, Sequence[str]]
    quotas: Mapping[tuple[str, str], Mapping[str, str]]
    probe_namespace: str


@dataclass
class StoragePlan:
    """The writes and the status: objects to create, merge patches as (kind, namespace, name,
    patch), deletes as (kind, namespace, name), the status, and the seconds until the next
    look (None: the kind's idle pass)."""

    status: dict[str, Any]
    create: list[dict[str, Any]] = field(default_factory=list)
    patch: list[tuple[str, str, str, dict[str, Any]]] = field(default_factory=list)
    delete: list[tuple[str, str, str]] = field(default_factory=list)
    requeue_after: float | None = None


def quota_name(storage: GryviaStorage) -> str:
    """The ResourceQuota a backend puts in each namespace of a limited tenant."""
    return f"gryvia-storage-{storage.name}"[:253]


def probe_name(storage: GryviaStorage, now: datetime) -> str:
    """The probe claim started at `now`."""
    return f"gryvia-probe-{storage.name[:200]}-{int(now.timestamp())}"


def desired_class(storage: GryviaStorage) -> dict[str, Any] | None:
    """The StorageClass a backend describes (None for `existing`)."""
    spec = storage.spec
    provisioner = spec.class_provisioner()
    if spec.backend == "existing" or provisioner is None:
        return None
    parameters: dict[str, str] = {}
    if spec.backend == "nfs" and spec.endpoint:
        server, _, share = spec.endpoint.partition(":")
        parameters = {"server": server, "share": share}
    parameters.update(spec.parameters or {})
    body: dict[str, Any] = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {
            "name": storage.class_name(),
            "labels": {LABEL_STORAGE: storage.name},
            "ownerReferences": [owner_reference(storage, block_deletion=False)],
        },
        "provisioner": provisioner,
        "reclaimPolicy": spec.reclaim_policy,
        "volumeBindingMode": spec.volume_binding_mode,
    }
    if parameters:
        body["parameters"] = parameters
    if spec.mount_options:
        body["mountOptions"] = list(spec.mount_options)
    return body


def desired_quota_hard(storage: GryviaStorage, tenant: str) -> dict[str, str] | None:
    """`spec.hard` of the tenant's ResourceQuota on this backend (None: no limit for it)."""
    for entry in storage.spec.quotas or []:
        if entry.tenant == tenant:
            prefix = storage.class_name() + QUOTA_SUFFIX
            hard = {prefix + "requests.storage": str(entry.requests)}
            if entry.claims is not None:
                hard[prefix + "persistentvolumeclaims"] = str(entry.claims)
            return hard
    return None


def _quota_writes(storage: GryviaStorage, seen: StorageObserved, plan: StoragePlan) -> int:
    """Create, patch and delete the tenants' quotas; the namespaces that hold one."""
    name = quota_name(storage)
    wanted: dict[str, dict[str, str]] = {}
    for entry in storage.spec.quotas or []:
        hard = desired_quota_hard(storage, entry.tenant) or {}
        for ns in seen.tenant_namespaces.get(entry.tenant, ()):
            wanted[ns] = hard
    for ns, hard in sorted(wanted.items()):
        have = seen.quotas.get((ns, name))
        if have is None:
            plan.create.append(
                {
                    "apiVersion": "v1",
                    "kind": "ResourceQuota",
                    "metadata": {
                        "name": name,
                        "namespace": ns,
                        "labels": {LABEL_STORAGE: storage.name},
                        "ownerReferences": [owner_reference(storage, block_deletion=False)],
                    },
                    "spec": {"hard": hard},
                }
            )
        elif dict(have) != hard:
            patch: dict[str, Any] = {key: None for key in have if key not in hard}
            patch.update(hard)
            plan.patch.append(("ResourceQuota", ns, name, {"spec": {"hard": patch}}))
    for ns, have_name in sorted(seen.quotas):
        if ns not in wanted:
            plan.delete.append(("ResourceQuota", ns, have_name))
    return len(wanted)


def _probe(
    storage: GryviaStorage, seen: StorageObserved, now: datetime, class_ok: bool, plan: StoragePlan
) -> tuple[StorageProbe | None, str | None]:
    """Advance the probe: (the probe now, the request it honoured)."""
    before = storage.status.probe if storage.status else None
    honoured = storage.status.last_probe_request if storage.status else None
    asked = (storage.metadata.annotations or {}).get(ANNOTATION_PROBE)
    current = {c.name: c for c in seen.probes}
    spec = storage.spec
    probe = before
    if before is not None and before.finished_at is None:
        claim = current.get(before.claim)
        waited = (now - before.started_at).total_seconds()
        if claim is not None and claim.phase == "Bound":
            probe = before.model_copy(
                update={"finished_at": now, "result": "Bound", "bind_seconds": round(waited, 3)}
            )
        elif claim is None and waited > 5:
            text = "the probe claim is gone (deleted, or its creation was refused)"
            probe = before.model_copy(
                update={"finished_at": now, "result": "Failed", "message": text}
            )
        elif waited >= spec.probe_timeout_seconds:
            why = seen.probe_event or "no event on the claim"
            text = (
                f"a {PROBE_SIZE} claim of class {storage.class_name()} was not bound after "
                f"{spec.probe_timeout_seconds} s ({why}): check that the provisioner "
                f"{spec.class_provisioner() or (seen.storage_class or {}).get('provisioner')} runs"
            )
            probe = before.model_copy(
                update={"finished_at": now, "result": "Pending", "message": text}
            )
        else:  # the claim's own events do not wake the controller (see handlers.storage)
            plan.requeue_after = min(POLL_SECONDS, max(spec.probe_timeout_seconds - waited, 0.5))
    running = probe is not None and probe.finished_at is None
    due = probe is None or (asked is not None and asked != honoured)
    if probe is not None and probe.finished_at is not None:
        next_at = probe.finished_at + timedelta(seconds=spec.probe_seconds)
        due = due or now >= next_at
        if not due:
            wait = (next_at - now).total_seconds()
            plan.requeue_after = min(plan.requeue_after or wait, wait)
    if not running and due and class_ok:
        probe = StorageProbe(claim=probe_name(storage, now), started_at=now)
        plan.create.append(_probe_claim(storage, seen, probe.claim))
        plan.requeue_after = POLL_SECONDS
        honoured = asked
    keep = probe.claim if probe is not None and probe.finished_at is None else None
    for claim in seen.probes:
        if claim.name != keep:
            plan.delete.append(("PersistentVolumeClaim", claim.namespace, claim.name))
    return probe, honoured


def _probe_claim(storage: GryviaStorage, seen: StorageObserved, name: str) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "name": name,
        "namespace": seen.probe_namespace,
        "labels": {LABEL_STORAGE: storage.name},
        "ownerReferences": [owner_reference(storage, block_deletion=False)],
    }
    binding = (seen.storage_class or {}).get("volumeBindingMode")
    if binding == "WaitForFirstConsumer" and seen.node:
        meta["annotations"] = {SELECTED_NODE: seen.node}
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": meta,
        "spec": {
            "accessModes": [storage.spec.access_modes[0]],
            "storageClassName": storage.class_name(),
            "resources": {"requests": {"storage": PROBE_SIZE}},
        },
    }


def _class_check(storage: GryviaStorage, seen: StorageObserved) -> tuple[bool, str, str]:
    """(usable, reason, message) of the class."""
    name = storage.class_name()
    have = seen.storage_class
    want = storage.spec.class_provisioner()
    if have is None:
        if storage.spec.backend == "existing":
            return (
                False,
                "ClassNotFound",
                (
                    f'StorageClass "{name}" does not exist: create it, or set spec.storageClass to '
                    "a class that exists (kubectl get storageclass)"
                ),
            )
        return False, "ClassCreating", f'creating StorageClass "{name}"'
    got = str(have.get("provisioner") or "")
    if want is not None and got != want:
        return (
            False,
            "ClassConflict",
            (
                f'StorageClass "{name}" exists with provisioner {got}, not {want} of backend '
                f"{storage.spec.backend}: set spec.backend existing to use it as it is, or another "
                "spec.storageClass"
            ),
        )
    return True, "ClassFound", f'StorageClass "{name}" (provisioner {got})'


def reconcile_storage(storage: GryviaStorage, seen: StorageObserved, now: datetime) -> StoragePlan:
    """The writes and status of one backend at `now` (UTC)."""
    plan = StoragePlan(status={})
    wanted_class = desired_class(storage)
    if seen.storage_class is None and wanted_class is not None:
        plan.create.append(wanted_class)
    class_ok, class_reason, class_text = _class_check(storage, seen)
    probe, honoured = _probe(storage, seen, now, class_ok, plan)
    quota_namespaces = _quota_writes(storage, seen, plan)
    used = sum((c.request_bytes for c in seen.claims), 0)
    status: dict[str, Any] = {
        "storageClass": storage.class_name(),
        "classExists": seen.storage_class is not None,
        "provisioner": (seen.storage_class or {}).get("provisioner")
        or storage.spec.class_provisioner(),
        "claims": len(seen.claims),
        "used": format_bytes(used),
        "quotaNamespaces": quota_namespaces,
    }
    if storage.spec.capacity is not None:
        status["free"] = format_bytes(parse_quantity(storage.spec.capacity) - Decimal(used))
    finished = probe if probe is not None and probe.finished_at is not None else None
    if storage.status is not None and finished is None and probe is not None:
        last = storage.status.provisioner_answering  # a probe runs: keep the last verdict
    else:
        last = None if finished is None else finished.result == "Bound"
    if probe is not None:
        status["probe"] = probe.model_dump(mode="json", by_alias=True, exclude_none=True)
    if honoured is not None:
        status["lastProbeRequest"] = honoured
    if last is not None:
        status["provisionerAnswering"] = last
    gen = storage.metadata.generation
    conds = list((storage.status.conditions if storage.status else None) or [])
    raw = [c.model_dump(mode="json", by_alias=True, exclude_none=True) for c in conds]
    raw = set_condition(raw, "ClassAvailable", _tf(class_ok), class_reason, class_text, now, gen)
    answer_reason, answer_text = _answer_text(storage, finished, last, class_ok)
    raw = set_condition(
        raw, "ProvisionerAnswering", _tf(last), answer_reason, answer_text, now, gen
    )
    ready = class_ok and last is True
    message = _summary(storage, status) if ready else (class_text if not class_ok else answer_text)
    raw = set_condition(
        raw, "Ready", _tf(ready), "Ready" if ready else "NotReady", message, now, gen
    )
    status.update(
        {"phase": "Ready" if ready else "NotReady", "message": message[:1024], "conditions": raw}
    )
    plan.status = status
    return plan


def _tf(value: bool | None) -> str:
    return "Unknown" if value is None else ("True" if value else "False")


def _answer_text(
    storage: GryviaStorage, finished: StorageProbe | None, last: bool | None, class_ok: bool
) -> tuple[str, str]:
    if not class_ok and last is None:
        return "NotProbed", "not probed: the class is not usable"
    if last is None:
        return "Probing", "the first probe claim is being bound"
    if last and finished is not None:
        return "ProbeBound", f"a probe claim bound in {finished.bind_seconds} s"
    if last:
        return "ProbeBound", "the last probe claim bound"
    text = (finished.message if finished is not None else None) or "the last probe did not bind"
    return "ProbeNotBound", text


def _summary(storage: GryviaStorage, status: Mapping[str, Any]) -> str:
    text = f"{status['claims']} claims request {status['used']}"
    if storage.spec.capacity is not None:
        text += f" of {storage.spec.capacity} ({status['free']} free)"
    return text
