"""The ledger writer (opt-in: `--billing-ledger`, chart `billing.ledger.enabled`): one
GryviaLedgerEntry per sealed GryviaUsageRecord, chained per tenant.

An index keeps the sealed records not yet marked with their entry; a loop (every
`LEDGER_SECONDS`, at once when a record is sealed) reads each such tenant's chain from the API
server (not the watch: it must include every entry already written, also by an earlier
process killed a moment ago), and follows `reconcile.ledger.plan`: create the entry, then
mark the record. One writer per operator process; with peering, only the active one runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import defaultdict
from collections.abc import Mapping
from typing import Any

import kopf

from gryvia_operator.api.ledger import ANNOTATION_LEDGER_ENTRY
from gryvia_operator.api.names import LABEL_TENANT
from gryvia_operator.api.resources import by_kind
from gryvia_operator.controller.kubeapi import AlreadyExists, KubeError, NotFound
from gryvia_operator.controller.runtime import Runtime
from gryvia_operator.reconcile.ledger import is_pending, plan

log = logging.getLogger("gryvia.operator.ledger")
PENDING = "gryvia_ledger_pending"
LEDGER_SECONDS = 5.0


class LedgerWriter:
    """The pending-record index (attached at startup), the kick, and what this process
    marked already (until the watch shows the mark)."""

    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        self.kick = asyncio.Event()
        self.index: Mapping[Any, Any] = {}
        self.marked: set[tuple[str, str]] = set()

    def pending(self) -> dict[str, list[dict[str, Any]]]:
        """Pending records by tenant (those this process has just marked left out)."""
        by_tenant: dict[str, list[dict[str, Any]]] = defaultdict(list)
        seen: set[tuple[str, str]] = set()
        for key in list(self.index):
            for record in self.index[key]:
                seen.add(key)
                if key not in self.marked:
                    by_tenant[str(record["spec"].get("tenant") or "")].append(record)
        self.marked &= seen  # the watch dropped the others: their mark is visible
        return by_tenant

    async def loop(self) -> None:
        """Write entries until cancelled; a failed pass is retried after LEDGER_SECONDS."""
        while True:
            self.kick.clear()
            try:
                for tenant, records in self.pending().items():
                    await self.write_tenant(tenant, records)
            except (KubeError, OSError) as exc:
                log.warning("ledger: %s", exc)
            except Exception:  # a bug in one pass must not end the ledger for good
                log.exception("ledger pass failed; retrying in %.0f s", LEDGER_SECONDS)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.kick.wait(), LEDGER_SECONDS)

    async def write_tenant(self, tenant: str, records: list[dict[str, Any]]) -> None:
        """Append `records` to `tenant`'s chain, read fresh from the API server."""
        api = self.rt.api
        entries = await api.list("GryviaLedgerEntry", label_selector=f"{LABEL_TENANT}={tenant}")
        for step in plan(tenant, records, entries, self.rt.clock()):
            if step.entry is not None:
                try:
                    await api.create(step.entry)
                except AlreadyExists:
                    self.kick.set()  # written meanwhile (another process?): re-read the chain
                    return
                self.rt.metrics.writes.labels(kind="GryviaLedgerEntry", verb="create").inc()
                log.info(
                    "ledger: %s sequence %d for %s/%s",
                    step.name,
                    step.entry["spec"]["sequence"],
                    *step.record,
                )
            namespace, name = step.record
            patch = {"metadata": {"annotations": {ANNOTATION_LEDGER_ENTRY: step.name}}}
            with contextlib.suppress(NotFound):
                await api.patch("GryviaUsageRecord", name, patch, namespace)
            self.marked.add(step.record)


def register(registry: kopf.OperatorRegistry, rt: Runtime, writer: LedgerWriter) -> None:
    """Index sealed, unmarked usage records; start the writer once caches are synced."""

    def pending_index(body: Mapping[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
        """Keep the sealed records still to be ledgered (others give nothing)."""
        if not is_pending(body, ANNOTATION_LEDGER_ENTRY):
            return {}
        writer.kick.set()
        meta = body.get("metadata") or {}
        namespace, name = meta.get("namespace"), str(meta.get("name") or "")
        return {
            (namespace or "", name): {
                "metadata": {"name": name, "namespace": namespace, "uid": meta.get("uid")},
                "spec": dict(body.get("spec") or {}),
            }
        }

    records = rt.informer(by_kind("GryviaUsageRecord").path())
    records.add_index(PENDING, pending_index)
    writer.index = records.index(PENDING)
