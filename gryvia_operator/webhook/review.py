"""Admission decisions for GryviaAIJobs and GryviaUsageRecords.

AdmissionReview in, AdmissionReview out; pure (the node inventory is passed in).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from gryvia_operator.api import (
    GryviaAIJob,
    GryviaGpuSku,
    GryviaQuota,
    GryviaTenant,
    inventory_warnings,
    submitter,
    validate_job,
)
from gryvia_operator.api import messages as msg
from gryvia_operator.api.jobstorage import storage_admission
from gryvia_operator.api.mig import type_listed
from gryvia_operator.api.names import ANNOTATION_SUBMITTER
from gryvia_operator.api.pending import never_fits
from gryvia_operator.api.pricing import select_rate
from gryvia_operator.api.storage import GryviaStorage

ADMISSION_API = "admission.k8s.io/v1"
AIJOB_PATH = "/validate-gryvia-io-v1alpha1-gryviaaijob"
AIJOB_MUTATE_PATH = "/mutate-gryvia-io-v1alpha1-gryviaaijob"
USAGE_RECORD_PATH = "/validate-gryvia-io-v1alpha1-gryviausagerecord"


class ReviewError(ValueError):
    """The request body is not an AdmissionReview (the server answers HTTP 400)."""


@dataclass(frozen=True)
class Verdict:
    """allowed, the denial message, and warnings shown to the user either way."""

    allowed: bool
    message: str = ""
    warnings: tuple[str, ...] = field(default_factory=tuple)
    patch: tuple[dict[str, Any], ...] = field(default_factory=tuple)
    """JSONPatch operations (mutating webhooks only)."""


@dataclass(frozen=True)
class PolicyContext:
    """The quota policy a new job is checked against: the quotas covering its namespace, its
    tenant (for `tenant-<x>` namespaces) and the catalog. `ready` False means the policy
    objects could not be read: the check fails open with a warning. `storages` and
    `storage_classes` (name -> provisioner; None: not known) are what a job's spec.storage
    may name (`api.jobstorage.storage_admission`)."""

    quotas: tuple[GryviaQuota, ...] = ()
    tenant: GryviaTenant | None = None
    skus: tuple[GryviaGpuSku, ...] = ()
    ready: bool = True
    storages: tuple[GryviaStorage, ...] = ()
    storage_classes: Mapping[str, str] | None = None


def policy_denials(job: GryviaAIJob, policy: PolicyContext) -> list[str]:
    """Reasons the quota policy refuses `job` (the quota and tenant rules below), on create
    and on a spec update (`admit_aijob`).

    Allowed types are the union of the quotas' `allowedGPUTypes` (case-insensitive; an unset
    or `any` type is refused when types are restricted, so it cannot bypass them); the per-job
    limit is the smallest positive `maxGPUsPerJob`; a job with a submitter may not ask for more
    than the smallest positive `maxGPUsPerUser` (it could never start); a tenant with
    `allowedSkus` needs an enabled SKU for the type. CPU-only jobs pass.
    """
    total = job.spec.total_gpus()
    if total == 0:
        return []
    reasons = []
    gpu_type = job.spec.gpu_type or "any"
    allowed = sorted({t for q in policy.quotas for t in q.spec.gpu_quota.allowed_gpu_types or []})
    if allowed and not any(type_listed(gpu_type, t) for t in allowed):
        reasons.append(
            f'GPU type "{gpu_type}" is not allowed for this namespace (allowed: '
            f"{', '.join(allowed)})"
        )
    limits = [q.spec.gpu_quota.max_gpus_per_job for q in policy.quotas]
    per_job = min((m for m in limits if m), default=0)
    if per_job and total > per_job:
        reasons.append(f"{total} GPUs exceeds the per-job limit of {per_job}")
    user = (job.metadata.annotations or {}).get(ANNOTATION_SUBMITTER, "")
    per_user = min(
        (m for q in policy.quotas if (m := q.spec.gpu_quota.max_gpus_per_user)), default=0
    )
    if user and per_user and total > per_user:
        reasons.append(f"{total} GPUs exceeds the per-user limit of {per_user} (user {user})")
    tenant = policy.tenant
    if (
        tenant is not None
        and tenant.spec.allowed_skus
        and job.spec.gpu_type_constrained
        and select_rate(gpu_type, policy.skus, tenant.spec.allowed_skus) is None
    ):
        reasons.append(
            f'tenant "{tenant.name}" has no enabled catalog SKU for GPU type "{gpu_type}" '
            f"(allowed SKUs: {', '.join(tenant.spec.allowed_skus)})"
        )
    return reasons


def request_of(review: Any) -> Mapping[str, Any]:
    """The `request` of an AdmissionReview; raises ReviewError when there is none."""
    if not isinstance(review, Mapping) or not isinstance(review.get("request"), Mapping):
        raise ReviewError("expected an admission.k8s.io/v1 AdmissionReview with a request")
    request: Mapping[str, Any] = review["request"]
    if not request.get("uid"):
        raise ReviewError("the AdmissionReview request has no uid")
    return request


def admit_aijob(
    request: Mapping[str, Any],
    inventory: Iterable[tuple[str, int]] | None = None,
    policy: PolicyContext | None = None,
) -> Verdict:
    """Every static rule via validate_job, all violations in one denial; node warnings; the
    quota policy (`policy_denials`) on CREATE and on every UPDATE that changes the spec.

    The submitter annotations (`api.submitter`): a CREATE whose values are not the
    requester's own (`userInfo`) is refused, and so is an UPDATE that adds, changes or removes
    them, whoever sends it.

    DELETE is always allowed, and so is an UPDATE that leaves the spec and the submitter
    alone (labels, the cancel annotation, finalizers), so a job admitted while the webhook was
    down can still be cancelled. An UPDATE whose only spec change is `suspend` (a run control,
    as cancel is; the operator releases array elements this way) skips the quota policy: the
    operator's gate
    still judges the job when it runs. Any other spec change is judged as a new job would be,
    so a job the policy refuses (Rejected while the webhook was down, or since the quota
    changed) cannot be patched through, and a job cannot be patched into a disallowed GPU type
    or size (the CRD's CEL rule GPU_SHAPE_IMMUTABLE also holds those fields while the webhook
    is down). A job's spec.storage (on CREATE and when an UPDATE changes it) is checked against the
    storage backends and classes of `policy` (`api.jobstorage.storage_admission`: warnings,
    and a denial when it names neither).
    """
    operation = request.get("operation")
    if operation == "DELETE":
        return Verdict(True)
    obj = request.get("object")
    old = request.get("oldObject")
    if operation == "CREATE" and (denial := submitter.forged(obj, request.get("userInfo"))):
        return Verdict(False, denial)
    if operation == "UPDATE" and (denial := submitter.changed(obj, old)):
        return Verdict(False, denial)
    changed: set[str] = set()
    if operation == "UPDATE" and isinstance(obj, Mapping) and isinstance(old, Mapping):
        changed = _changed_spec_fields(obj.get("spec"), old.get("spec"))
        if not changed:
            return Verdict(True)
    result = validate_job(obj if isinstance(obj, Mapping) else {})
    warnings = [w.message for w in result.warnings]
    if not result.ok:
        return Verdict(False, result.denial("GryviaAIJob"), tuple(warnings))
    job = GryviaAIJob.model_validate(obj)
    if inventory is not None:
        warnings += [w.message for w in inventory_warnings(job, inventory)]
    judged = operation == "CREATE" or (operation == "UPDATE" and bool(changed - RUN_CONTROLS))
    if policy is not None and judged:
        if not policy.ready:
            warnings.append("quota policy not checked: quotas and tenants are not loaded yet")
        else:
            reasons = policy_denials(job, policy)
            if reasons:
                return Verdict(
                    False, "not allowed by quota policy: " + "; ".join(reasons), tuple(warnings)
                )
    if inventory is not None and judged and policy is not None and policy.ready:
        warnings += never_warning(job, inventory, policy)
    storage = job.spec.storage
    named = operation == "CREATE" or bool(changed & {"storage", "*"})
    if storage and named and policy is not None and policy.ready:
        refusal, notes = storage_admission(storage, policy.storages, policy.storage_classes)
        warnings += notes
        if refusal is not None:
            return Verdict(False, refusal, tuple(warnings))
    return Verdict(True, msg.ALLOWED, tuple(warnings))


def never_warning(
    job: GryviaAIJob, inventory: Iterable[tuple[str, int]], policy: PolicyContext
) -> list[str]:
    """The fail-fast warning (`api.pending.never_fits`, with the catalog and quotas of
    `policy`) for a job that can never fit: it is admitted, and waits as Pending with
    status.pending.kind NoSuchGPUType or TooLarge."""
    spec = job.spec
    skus, limits = policy.skus, [q.spec.gpu_quota.max_gpus for q in policy.quotas]
    found = never_fits(
        spec.gpu_type,
        spec.gpus_per_pod(),
        spec.pod_count(),
        inventory,
        [s.spec.gpu_type for s in skus if s.spec.enabled],
        min(limits, default=None),
    )
    if found is None:
        return []
    return [f"this job can never run ({found.kind}): {found.message}"]


RUN_CONTROLS = frozenset({"suspend"})
"""Spec fields that start or stop a run without changing what the quota policy judges."""


def _changed_spec_fields(new: Any, old: Any) -> set[str]:
    """Top-level spec keys whose values differ between `new` and `old` (either may be absent
    or malformed: a spec that is not a mapping counts as wholly changed)."""
    if new == old:
        return set()
    if not isinstance(new, Mapping) or not isinstance(old, Mapping):
        return {"*"}
    return {k for k in set(new) | set(old) if new.get(k) != old.get(k)}


def mutate_aijob(request: Mapping[str, Any]) -> Verdict:
    """The mutating webhook: on CREATE, stamp the submitter annotations from the request's
    `userInfo` (`api.submitter.stamp_patch`), refusing a manifest that names someone else
    (`api.submitter.forged`); on UPDATE, put back the ones the new object leaves out
    (`api.submitter.restore_patch`: `kubectl replace` or server-side apply of the original
    manifest), leaving a changed value for the validating webhook to refuse. Any other
    operation passes unchanged."""
    operation, obj = request.get("operation"), request.get("object")
    if operation == "UPDATE":
        return Verdict(True, patch=tuple(submitter.restore_patch(obj, request.get("oldObject"))))
    if operation != "CREATE":
        return Verdict(True)
    user = request.get("userInfo")
    if denial := submitter.forged(obj, user):
        return Verdict(False, denial)
    return Verdict(True, patch=tuple(submitter.stamp_patch(obj, user)))


def admit_usage_record(request: Mapping[str, Any]) -> Verdict:
    """Deny a change of a GryviaUsageRecord's spec once the stored record is final."""
    if request.get("operation") != "UPDATE":
        return Verdict(True)
    old, new = request.get("oldObject"), request.get("object")
    old_spec = old.get("spec") if isinstance(old, Mapping) else None
    new_spec = new.get("spec") if isinstance(new, Mapping) else None
    if isinstance(old_spec, Mapping) and old_spec.get("final") is True and new_spec != old_spec:
        reason = msg.DENIED.format(kind="GryviaUsageRecord", reasons=msg.USAGE_RECORD_FINAL)
        return Verdict(False, reason)
    return Verdict(True)


def response(request: Mapping[str, Any], verdict: Verdict) -> dict[str, Any]:
    """The AdmissionReview answering `request`."""
    body: dict[str, Any] = {"uid": request.get("uid", ""), "allowed": verdict.allowed}
    if not verdict.allowed:
        body["status"] = {"code": 403, "reason": "Forbidden", "message": verdict.message}
    elif verdict.message:
        body["status"] = {"code": 200, "message": verdict.message}
    if verdict.warnings:
        body["warnings"] = list(verdict.warnings)
    if verdict.allowed and verdict.patch:
        body["patchType"] = "JSONPatch"
        body["patch"] = base64.b64encode(json.dumps(list(verdict.patch)).encode()).decode()
    return {"apiVersion": ADMISSION_API, "kind": "AdmissionReview", "response": body}


def review_aijob(
    review: Any,
    inventory: Iterable[tuple[str, int]] | None = None,
    policy: Callable[[str], PolicyContext] | None = None,
) -> dict[str, Any]:
    """Answer an AdmissionReview for a GryviaAIJob; `policy(namespace)` gives the quota policy.
    Raises ReviewError for a malformed body."""
    request = request_of(review)
    context = policy(str(request.get("namespace") or "")) if policy is not None else None
    return response(request, admit_aijob(request, inventory, context))


def review_aijob_mutation(review: Any) -> dict[str, Any]:
    """Answer the mutating AdmissionReview for a GryviaAIJob (`mutate_aijob`). Raises
    ReviewError for a malformed body."""
    request = request_of(review)
    return response(request, mutate_aijob(request))


def review_usage_record(review: Any) -> dict[str, Any]:
    """Answer an AdmissionReview for a GryviaUsageRecord. Raises ReviewError when malformed."""
    request = request_of(review)
    return response(request, admit_usage_record(request))
