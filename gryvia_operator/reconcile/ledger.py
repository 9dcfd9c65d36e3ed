"""What the ledger writer does next for one tenant: pure (the clock and the stored entries
are passed in).

Exactly once, even when the operator is killed anywhere: an entry's name is fixed by its
usage record (`le-<uid>`), the tenant's chain is read fresh from the API server before each
pass, and a record is marked (annotation `gryvia.io/ledger-entry`) only after its entry
exists. Killed before the entry is created: the record is still unmarked and the next pass
appends it. Killed after the create and before the mark: the next pass finds `le-<uid>` in
the chain and only marks the record. A marked record is never ledgered again (if its entry
is deleted by hand, `gryvia ledger verify` reports the gap).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from gryvia_operator.api.ledger import build_entry, entry_name, head_of


@dataclass(frozen=True)
class Step:
    """Mark `record` (namespace, name) with entry `name`; first create `entry` unless None
    (the entry already exists)."""

    record: tuple[str, str]
    name: str
    entry: dict[str, Any] | None


def _order(record: Mapping[str, Any]) -> tuple[str, str, str, str]:
    spec, meta = record.get("spec") or {}, record.get("metadata") or {}
    return (
        str(spec.get("end") or ""),
        str(spec.get("start") or ""),
        str(meta.get("namespace") or ""),
        str(meta.get("name") or ""),
    )


def plan(
    tenant: str,
    pending: Iterable[Mapping[str, Any]],
    entries: Iterable[Mapping[str, Any]],
    now: dt.datetime,
) -> list[Step]:
    """The steps that ledger `pending` (sealed, unmarked usage records of `tenant`: raw
    objects with metadata name, namespace, uid and spec) after the stored `entries` of the
    tenant's chain, in the order records ended (then started, namespace, name).

    A record already in the chain is only marked; others are appended at head + 1, each
    chained to the one before. Records that cannot be ledgered (no uid, not sealed) are
    skipped: they are not pending.
    """
    chain = [e for e in entries if (e.get("spec") or {}).get("tenant") == tenant]
    known = {
        str(((e.get("spec") or {}).get("usageRecord") or {}).get("uid")): str(
            (e.get("metadata") or {}).get("name")
        )
        for e in chain
    }
    head = head_of(chain)
    sequence, prev = head.sequence, head.hash
    steps = []
    for record in sorted(pending, key=_order):
        meta = record.get("metadata") or {}
        key = (str(meta.get("namespace") or ""), str(meta.get("name") or ""))
        uid = str(meta.get("uid") or "")
        if uid in known:
            steps.append(Step(key, known[uid], None))
            continue
        try:
            entry = build_entry(record, sequence=sequence + 1, prev_hash=prev, recorded_at=now)
        except (ValueError, KeyError):
            continue
        sequence, prev = sequence + 1, entry["spec"]["hash"]
        known[uid] = entry_name(uid)
        steps.append(Step(key, entry_name(uid), entry))
    return steps


def is_pending(record: Mapping[str, Any], annotation: str) -> bool:
    """True when a raw usage record is sealed and not yet marked with its ledger entry."""
    spec = record.get("spec") or {}
    annotations = (record.get("metadata") or {}).get("annotations") or {}
    return spec.get("final") is True and bool(spec.get("end")) and annotation not in annotations
