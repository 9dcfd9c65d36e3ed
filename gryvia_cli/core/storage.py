"""Rows, details and bodies of GryviaStorages: what `gryvia storage create|list|get` writes and
prints, what `gryvia health storage` shows, and the console's `:storage` view (docs/storage.md).
Pure: no cluster access; the clock and the probe stamp are passed in."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any, Final

from gryvia_cli.core import timefmt
from gryvia_cli.core.cells import Marked
from gryvia_cli.core.manifests import manifest_body, new_object
from gryvia_operator.api.storage import GryviaStorage

STORAGE_COLUMNS: Final = (
    "NAME",
    "BACKEND",
    "CLASS",
    "CAPACITY",
    "USED",
    "FREE",
    "CLAIMS",
    "PROVISIONER",
    "STATUS",
)
STORAGE_WIDE_COLUMNS: Final = (*STORAGE_COLUMNS, "RDMA", "PROBE", "AGE", "MESSAGE")
HEALTH_COLUMNS: Final = (
    "NAME",
    "BACKEND",
    "CLASS",
    "CAPACITY",
    "USED",
    "FREE",
    "RDMA",
    "PROVISIONER",
    "PROBE",
    "STATUS",
)
"""`gryvia health storage`: the columns of behaviour.md's table (NAME, BACKEND, CAPACITY, RDMA,
provisioner, STATUS) with CLASS, USED, FREE and PROBE added."""

PHASE_MARKERS: Final = {"Ready": "ok", "NotReady": "error", "Invalid": "error"}
"""Marker of a STATUS cell by phase (`Unknown`, before the operator's first pass: warn)."""
FLAGS: Final = {
    "spec.backend": "--backend",
    "spec.storageClass": "--class",
    "spec.provisioner": "--provisioner",
    "spec.endpoint": "--endpoint",
    "spec.capacity": "--capacity",
    "spec.accessModes": "--access-mode",
    "spec.mountOptions": "--mount-option",
    "spec.quotas": "--quota",
    "spec.probeSeconds": "--probe-seconds",
}
"""The `gryvia storage create` option that sets each spec field (errors name both)."""
_QUOTA_RE = re.compile(r"^(?P<tenant>[^=/\s]+)=(?P<requests>[^/\s]+)(?:/(?P<claims>[^/\s]*))?$")


def parse_quota(text: str) -> dict[str, Any]:
    """One `--quota TENANT=QUANTITY[/CLAIMS]` (`vision=2Ti/20`) as a `spec.quotas` entry
    `{"tenant", "requests"[, "claims"]}`. Raises ValueError naming the option and the form when
    the text has another shape or CLAIMS is not a whole number; the quantity itself is checked
    by the model (`build_storage`)."""
    match = _QUOTA_RE.match(text.strip())
    claims = match.group("claims") if match else None
    if match is None or (claims is not None and not claims.isdigit()):
        raise ValueError(
            f"--quota {text!r}: expected TENANT=QUANTITY[/CLAIMS], e.g. vision=2Ti or vision=2Ti/20"
        )
    entry: dict[str, Any] = {"tenant": match.group("tenant"), "requests": match.group("requests")}
    if claims is not None:
        entry["claims"] = int(claims)
    return entry


def _checked(body: dict[str, Any], source: str = "") -> dict[str, Any]:
    """`body` when GryviaStorage accepts it; else ValueError `[<source>: ]<field> (<option>):
    <message>` (the option only for a field `create` sets)."""
    from pydantic import ValidationError

    from gryvia_operator.api.controlled import first_problem

    try:
        GryviaStorage.model_validate(body)
    except ValidationError as exc:
        where, text = first_problem(exc)
        prefix = f"{source}: " if source else ""
        said = text.split(" ", 1)
        if text.startswith(f"{where}.") and len(said) == 2:  # a rule across fields names one
            raise ValueError(f"{prefix}{_with_flag(said[0], source)} {said[1]}") from None
        named = _with_flag(where, source)
        raise ValueError(f"{prefix}{named + ': ' if named else ''}{text}") from None
    return body


def _with_flag(where: str, source: str) -> str:
    """`spec.capacity (--capacity)` for a field `create` sets (not for a manifest's)."""
    flag = FLAGS.get(".".join(where.split(".")[:2])) if not source else None
    return f"{where} ({flag})" if flag else where


def build_storage(
    name: str,
    *,
    backend: str,
    storage_class: str | None = None,
    provisioner: str | None = None,
    endpoint: str | None = None,
    capacity: str | None = None,
    access_modes: list[str] | None = None,
    mount_options: list[str] | None = None,
    quotas: list[str] | None = None,
    rdma: bool = False,
    probe_seconds: int | None = None,
) -> dict[str, Any]:
    """A GryviaStorage body (cluster-scoped) from `gryvia storage create`'s options, validated
    by the model: unset options are left out (the model's defaults apply); `quotas` are
    `TENANT=QUANTITY[/CLAIMS]` texts. Raises ValueError naming the field and its option
    (`spec.capacity (--capacity): invalid quantity "lots"`), or the model's fix for a backend
    missing a field (`csi` without `--provisioner`, `nfs` without `--endpoint server:/path`)."""
    spec: dict[str, Any] = {"backend": backend}
    optional = {
        "storageClass": storage_class,
        "provisioner": provisioner,
        "endpoint": endpoint,
        "capacity": capacity,
        "accessModes": access_modes or None,
        "mountOptions": mount_options or None,
        "quotas": [parse_quota(q) for q in quotas] if quotas else None,
        "rdma": True if rdma else None,
        "probeSeconds": probe_seconds,
    }
    spec.update({key: value for key, value in optional.items() if value is not None})
    return _checked(new_object("GryviaStorage", name, spec))


def storage_from_manifest(doc: Any, source: str) -> dict[str, Any]:
    """The body `gryvia storage create -f` sends: the manifest `doc` (one GryviaStorage), its
    `metadata.namespace` dropped (the kind is cluster-scoped) and its status left out,
    validated by the model. Raises ValueError `<source>: <field>: <message>`."""
    body = manifest_body(doc, "GryviaStorage", source)
    body.pop("status", None)
    metadata = dict(body.get("metadata") or {})
    metadata.pop("namespace", None)
    body["metadata"] = metadata
    return _checked(body, source)


def probe_stamp(now: datetime) -> str:
    """The `gryvia.io/probe` value that asks for a probe at `now`: RFC 3339 UTC, in seconds
    (`2026-12-06T06:30:00Z`)."""
    return now.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def probe_finished(storage: GryviaStorage, stamp: str) -> bool:
    """Whether the operator honoured the probe request `stamp`: `status.lastProbeRequest` is
    `stamp` and `status.probe.finishedAt` is set, and not before the probe's `startedAt` (a
    finish time older than the start is the last probe's, left by a partial status write)."""
    status = storage.status
    if status is None or status.last_probe_request != stamp or status.probe is None:
        return False
    finished = status.probe.finished_at
    return finished is not None and finished >= status.probe.started_at


def provisioner_state(storage: GryviaStorage) -> str:
    """`answering`, `not answering` (the last finished probe did not bind) or `unknown` (no
    probe has finished yet)."""
    status = storage.status
    answering = status.provisioner_answering if status is not None else None
    if answering is None:
        return "unknown"
    return "answering" if answering else "not answering"


def _text(value: Any) -> str:
    return timefmt.MISSING if value is None or value == "" else str(value)


def _phase(storage: GryviaStorage) -> str:
    status = storage.status
    return (status.phase if status is not None else None) or "Unknown"


def storage_class(storage: GryviaStorage) -> str:
    """The class jobs get: the status's (what the operator found), else the spec's."""
    status = storage.status
    return (status.storage_class if status is not None else None) or storage.class_name()


def storage_row(storage: GryviaStorage, now: datetime) -> list[Any]:
    """The cells of STORAGE_COLUMNS; `-` for what the operator has not reported yet and for an
    undeclared capacity, STATUS `Unknown` before its first pass."""
    status = storage.status
    return [
        storage.name,
        storage.spec.backend,
        storage_class(storage),
        _text(storage.spec.capacity),
        _text(status.used if status is not None else None),
        _text(status.free if status is not None else None),
        _text(status.claims if status is not None else None),
        provisioner_state(storage),
        _phase(storage),
    ]


def probe_cell(storage: GryviaStorage, *, timed_out: bool = False, waited: float = 0) -> str:
    """The PROBE cell: `bound in 0.4s`, `running`, `<result>: <message>`, `-` when none ran;
    with `timed_out`, `no answer in <waited>` (the request was not honoured in time)."""
    if timed_out:
        return f"no answer in {timefmt.human_duration(waited)}"
    status = storage.status
    probe = status.probe if status is not None else None
    if probe is None:
        return timefmt.MISSING
    if probe.finished_at is None:
        return "running"
    if probe.result == "Bound" and probe.bind_seconds is not None:
        return f"bound in {probe.bind_seconds:.1f}s"
    return f"{probe.result or 'ended'}: {probe.message}" if probe.message else probe.result or "-"


def storage_wide_row(storage: GryviaStorage, now: datetime) -> list[Any]:
    """The cells of STORAGE_WIDE_COLUMNS: the row, RDMA, the last probe, AGE, and the status
    message (kept for any phase: a NotReady or Invalid one says what is wrong and the fix)."""
    status = storage.status
    return [
        *storage_row(storage, now),
        "yes" if storage.spec.rdma else "no",
        probe_cell(storage),
        timefmt.age(storage.metadata.creation_timestamp, now),
        _text(status.message if status is not None else None),
    ]


def health_row(storage: GryviaStorage, *, timed_out: bool = False, waited: float = 0) -> list[Any]:
    """The cells of HEALTH_COLUMNS; PROVISIONER is the provisioner's name and whether it
    answers (`rancher.io/local-path answering`), STATUS the phase marked by PHASE_MARKERS."""
    status = storage.status
    name = (status.provisioner if status is not None else None) or storage.spec.class_provisioner()
    return [
        storage.name,
        storage.spec.backend,
        storage_class(storage),
        _text(storage.spec.capacity),
        _text(status.used if status is not None else None),
        _text(status.free if status is not None else None),
        "yes" if storage.spec.rdma else "no",
        f"{name} {provisioner_state(storage)}" if name else provisioner_state(storage),
        probe_cell(storage, timed_out=timed_out, waited=waited),
        Marked(_phase(storage), PHASE_MARKERS.get(_phase(storage), "warn")),
    ]


def health_item(storage: GryviaStorage, *, timed_out: bool = False) -> dict[str, Any]:
    """One backend in `gryvia health storage -o json|yaml`: name, backend, storageClass,
    capacity, used, free, rdma, provisioner, provisionerAnswering, phase, message, probe (the
    status's, camelCase), probeTimedOut, healthy (Ready and the probe answered in time)."""
    status = storage.status
    probe = status.probe if status is not None else None
    return {
        "name": storage.name,
        "backend": storage.spec.backend,
        "storageClass": storage_class(storage),
        "capacity": storage.spec.capacity,
        "used": status.used if status is not None else None,
        "free": status.free if status is not None else None,
        "rdma": storage.spec.rdma,
        "provisioner": status.provisioner if status is not None else None,
        "provisionerAnswering": status.provisioner_answering if status is not None else None,
        "phase": _phase(storage),
        "message": status.message if status is not None else None,
        "probe": probe.model_dump(mode="json", by_alias=True, exclude_none=True) if probe else None,
        "probeTimedOut": timed_out,
        "healthy": storage_healthy(storage) and not timed_out,
    }


def storage_healthy(storage: GryviaStorage) -> bool:
    """Whether the backend's phase is Ready."""
    return _phase(storage) == "Ready"


def storage_details(storage: GryviaStorage, now: datetime) -> list[tuple[str, str]]:
    """(label, value) lines of one backend for the console's detail view and `gryvia storage
    get -o table`: what makes its class, capacity and use, quotas, the provisioner and the
    last probe, then the status."""
    spec, status = storage.spec, storage.status
    made = (
        "made elsewhere (only checked)"
        if spec.backend == "existing"
        else f"made by Gryvia ({spec.class_provisioner()})"
    )
    lines = [
        ("Name", storage.name),
        ("Backend", spec.backend),
        ("Class", f"{storage_class(storage)}, {made}"),
        ("Access modes", ", ".join(spec.access_modes)),
        ("Capacity", _text(spec.capacity)),
    ]
    if spec.endpoint:
        lines.append(("Endpoint", spec.endpoint))
    if spec.mount_options:
        lines.append(("Mount options", ", ".join(spec.mount_options)))
    if spec.rdma:
        lines.append(("RDMA", "yes"))
    for quota in spec.quotas or []:
        claims = f", at most {quota.claims} claims" if quota.claims is not None else ""
        lines.append((f"Quota {quota.tenant}", f"{quota.requests} per namespace{claims}"))
    lines.append(("Probe every", timefmt.human_duration(spec.probe_seconds)))
    if status is None:
        return [*lines, ("Status", "not seen by the operator yet")]
    lines += [
        ("Used", f"{_text(status.used)} by {_text(status.claims)} claims"),
        ("Free", _text(status.free)),
        ("Provisioner", f"{_text(status.provisioner)}, {provisioner_state(storage)}"),
        ("Last probe", probe_cell(storage)),
    ]
    if status.probe is not None and status.probe.finished_at is not None:
        lines.append(("Probed", f"{timefmt.age(status.probe.finished_at, now)} ago"))
    phase = _phase(storage)
    lines.append(("Status", f"{phase}: {status.message}" if status.message else phase))
    return lines
