"""`gryvia health storage`: read every GryviaStorage, ask the operator for a fresh probe of each
(annotation `gryvia.io/probe`), wait until each request is honoured, and print the backends'
table (docs/storage.md)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from gryvia_cli.errors import ForbiddenError
from gryvia_cli.kube import resources as r
from gryvia_cli.output import render_table, warn
from gryvia_cli.views.reads import read_optional

if TYPE_CHECKING:
    from gryvia_operator.api.storage import GryviaStorage

POLL_SECONDS = 1.0
"""How often the wait re-reads the backends while probes run."""
NO_STORAGE = "no storage backends (GryviaStorage) defined"


@dataclass
class StorageHealth:
    """What `health storage` found: the backends (validated `GryviaStorage`s, by name order),
    the names whose probe request was not honoured in time, and how long it waited (s)."""

    storages: list[GryviaStorage]
    timed_out: set[str] = field(default_factory=set)
    waited: float = 0.0

    @property
    def healthy(self) -> bool:
        """Every backend Ready and every probe asked for answered in time (none: healthy)."""
        from gryvia_cli.core.storage import storage_healthy

        return not self.timed_out and all(storage_healthy(s) for s in self.storages)

    def items(self) -> list[dict[str, Any]]:
        """The backends as `-o json|yaml` prints them (`core.storage.health_item`)."""
        from gryvia_cli.core.storage import health_item

        return [health_item(s, timed_out=s.name in self.timed_out) for s in self.storages]


def _read(access: Any) -> list[GryviaStorage]:
    from gryvia_operator.api.parse import parse_all
    from gryvia_operator.api.storage import GryviaStorage

    found, problems = parse_all(GryviaStorage, read_optional(access, r.STORAGE))
    for problem in problems:
        warn(f"skipped an invalid storage backend: {problem}")
    return sorted(found, key=lambda s: s.name)


def check_storage(
    access: Any,
    *,
    probe: bool,
    timeout: float,
    now: Callable[[], Any],
    progress: Callable[[str], None],
) -> StorageHealth:
    """Read the backends; with `probe`, merge-patch `gryvia.io/probe` on each (but an Invalid
    one) to `probe_stamp(now())` and re-read every POLL_SECONDS until each has
    `status.lastProbeRequest` equal to it and `status.probe.finishedAt` set (or turned
    Invalid), at most `timeout` seconds; `progress` hears `waiting for N of M probes (at most
    T s)` each time. A
    refused patch (no permission) is a warning and only the status is read. Raises what the
    access layer raises for other failures."""
    from gryvia_cli.core.storage import probe_stamp
    from gryvia_operator.api.storage import ANNOTATION_PROBE

    storages = _read(access)
    if not probe or not storages:
        return StorageHealth(storages)
    stamp = probe_stamp(now())
    patch = {"metadata": {"annotations": {ANNOTATION_PROBE: stamp}}}
    asked: set[str] = set()
    for storage in storages:
        if storage.status is not None and storage.status.phase == "Invalid":
            continue
        try:
            access.merge_patch(r.STORAGE, storage.name, None, patch)
        except ForbiddenError as exc:
            warn(f"could not ask for probes ({exc.message}); showing the last ones")
            return StorageHealth(storages)
        asked.add(storage.name)
    started = time.monotonic()
    while True:
        waited = time.monotonic() - started
        storages = _read(access)
        by_name = {s.name: s for s in storages}
        pending = {n for n in asked if n in by_name and _waiting(by_name[n], stamp)}
        progress(f"waiting for {len(pending)} of {len(asked)} probes (at most {timeout:.0f}s)")
        if not pending or waited >= timeout:
            return StorageHealth(storages, pending, waited)
        time.sleep(min(POLL_SECONDS, max(timeout - waited, 0.0)))


def _waiting(storage: GryviaStorage, stamp: str) -> bool:
    """Whether the probe request `stamp` is still unanswered and the backend can answer it
    (the operator probes neither an Invalid backend nor one whose class is unusable)."""
    from gryvia_cli.core.storage import probe_finished

    status = storage.status
    if status is not None and (status.phase == "Invalid" or not class_usable(storage)):
        return False
    return not probe_finished(storage, stamp)


def class_usable(storage: GryviaStorage) -> bool:
    """False when the operator said the backend's class cannot be used (condition
    ClassAvailable False for another reason than ClassCreating: a missing `existing` class, a
    class of another provisioner), so it starts no probe; True otherwise."""
    status = storage.status
    for cond in (status.conditions if status is not None else None) or []:
        if cond.type == "ClassAvailable" and cond.status == "False":
            return cond.reason == "ClassCreating"
    return True


def render_storage_health(report: StorageHealth) -> None:
    """Print the backends' table (`core.storage.HEALTH_COLUMNS`), then a warning with the
    status message of each backend not Ready and one per probe not answered in time; a warning
    NO_STORAGE when there are none."""
    from gryvia_cli.core.storage import HEALTH_COLUMNS, health_row

    if not report.storages:
        warn(NO_STORAGE)
        return
    render_table(
        HEALTH_COLUMNS,
        [
            health_row(s, timed_out=s.name in report.timed_out, waited=report.waited)
            for s in report.storages
        ],
    )
    for storage in report.storages:
        status = storage.status
        if status is not None and status.phase != "Ready" and status.message:
            warn(f"storage {storage.name}: {status.phase}: {status.message}")
    for name in sorted(report.timed_out):
        warn(
            f"storage {name}: the probe did not finish within {report.waited:.0f}s "
            "(is the operator running? `gryvia status`; raise --timeout)"
        )
