"""GryviaLedgerEntry: the hash-chained billing ledger, one entry per sealed usage record.

The rule (docs/billing.md, "Ledger"): one cluster-scoped entry `le-<usage record uid>` per
sealed (`final`) GryviaUsageRecord, chained per tenant: `sequence` is the tenant's head + 1
(1 first) and `prevHash` the head's `hash` ("" for sequence 1). `hash` is the hex SHA-256 of
the fields of `HASHED_FIELDS` joined by `\\n`, in that order, starting with the hash version
`v1`. Amounts (gpuHours, rate, cost) are decimal strings with 6 places, times RFC3339 UTC to
the second. Entries are immutable (CEL here, and the webhook also refuses their deletion).

Pure: the operator (writing entries) and the CLI (`gryvia ledger verify`) share these
functions, so both agree on every byte that is hashed.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from typing import Annotated, Any, Literal

from pydantic import ConfigDict, StringConstraints

from gryvia_operator.api import resources
from gryvia_operator.api.base import (
    AGE_COLUMN,
    GryviaModel,
    GryviaResource,
    KindInfo,
    NonNegativeInt64,
    PrinterColumn,
    Str63,
    Str253,
    cel_rules,
)
from gryvia_operator.api.names import API_VERSION, GROUP, LABEL_TENANT

HASH_VERSION = "v1"
ANNOTATION_LEDGER_ENTRY = f"{GROUP}/ledger-entry"
"""On a sealed GryviaUsageRecord: the name of its ledger entry, once written."""
ENTRY_PREFIX = "le-"
AMOUNT_PLACES = Decimal("0.000001")
ENTRY_IMMUTABLE = "GryviaLedgerEntry spec is immutable: ledger entries are never edited"

Amount = Annotated[str, StringConstraints(pattern=r"^[0-9]+\.[0-9]{6}$", max_length=32)]
"""A non-negative decimal with exactly 6 places, e.g. `0.493600`."""
Timestamp = Annotated[
    str,
    StringConstraints(
        pattern=r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$", max_length=20
    ),
]
"""RFC3339 in UTC to the second, e.g. `2026-12-01T10:00:00Z`."""
HexHash = Annotated[str, StringConstraints(pattern=r"^([0-9a-f]{64})?$", max_length=64)]


class UsageRecordRef(GryviaModel):
    """The sealed GryviaUsageRecord an entry records."""

    namespace: Str253
    name: Str253
    uid: Str63


class GryviaLedgerEntrySpec(GryviaModel):
    """One sealed usage record, chained to the tenant's previous entry by its hash."""

    model_config = ConfigDict(
        json_schema_extra=cel_rules([{"rule": "self == oldSelf", "message": ENTRY_IMMUTABLE}])
    )

    tenant: Annotated[str, StringConstraints(min_length=1, max_length=253)]
    """Tenant whose chain the entry belongs to."""
    sequence: NonNegativeInt64
    """Position in the tenant's chain, 1 first."""
    prev_hash: HexHash = ""
    """`hash` of the entry before (empty for sequence 1)."""
    hash: HexHash
    """Hex SHA-256 of the hashed fields (see `HASHED_FIELDS`)."""
    hash_version: Literal["v1"] = "v1"
    """Version of the hash rule."""
    usage_record: UsageRecordRef
    """The usage record recorded."""
    kind: Str63 = "gpu"
    """Kind of usage (`gpu`)."""
    job: Str253
    """Name of the job that ran."""
    sku: Str253 = ""
    """SKU (or GPU type when no SKU) the run was priced at."""
    start: Timestamp
    """Start of the billed run."""
    end: Timestamp
    """End of the billed run."""
    gpu_hours: Amount
    """GPU-hours, 6 places."""
    rate: Amount
    """Price per GPU-hour, 6 places."""
    cost: Amount
    """gpuHours x rate as metered, 6 places."""
    currency: Annotated[str, StringConstraints(min_length=1, max_length=8)] = "USD"
    """ISO currency code."""
    recorded_at: Timestamp
    """When the entry was written."""


class GryviaLedgerEntry(GryviaResource):
    """A tamper-evident billing ledger entry (immutable; written by the operator)."""

    kind: Literal["GryviaLedgerEntry"] = "GryviaLedgerEntry"
    spec: GryviaLedgerEntrySpec


LEDGER_ENTRY_KIND = KindInfo(
    resource=resources.LEDGER_ENTRY,
    model=GryviaLedgerEntry,
    description=GryviaLedgerEntry.__doc__ or "",
    printer_columns=(
        PrinterColumn("Tenant", ".spec.tenant"),
        PrinterColumn("Seq", ".spec.sequence", "integer"),
        PrinterColumn("Job", ".spec.job"),
        PrinterColumn("Cost", ".spec.cost"),
        PrinterColumn("Currency", ".spec.currency"),
        AGE_COLUMN,
    ),
)
GryviaLedgerEntry.kind_info = LEDGER_ENTRY_KIND

HASHED_FIELDS = (
    "hashVersion",
    "tenant",
    "sequence",
    "prevHash",
    "usageRecord.namespace",
    "usageRecord.name",
    "usageRecord.uid",
    "kind",
    "job",
    "sku",
    "start",
    "end",
    "gpuHours",
    "rate",
    "cost",
    "currency",
    "recordedAt",
)
"""The hashed fields of an entry's spec, in order (dots: nested keys)."""


def entry_name(record_uid: str) -> str:
    """`le-<usage record uid>`: the one name an entry of that record can have."""
    return f"{ENTRY_PREFIX}{record_uid}"


def amount(value: Any) -> str:
    """A number as the ledger writes it: a decimal string with 6 places, rounded half-up
    (`0.4936` -> `0.493600`). Floats go through `str` (their shortest repr), never binary.
    Raises ValueError for anything that is not a finite non-negative number."""
    try:
        number = Decimal(str(value))
    except InvalidOperation:
        raise ValueError(f"amount {value!r} is not a number") from None
    if not number.is_finite() or number < 0:
        raise ValueError(f"amount {value!r} must be a finite number >= 0")
    return str(number.quantize(AMOUNT_PLACES, rounding=ROUND_HALF_UP))


def timestamp(value: dt.datetime | str) -> str:
    """RFC3339 UTC to the second (`2026-12-01T10:00:00Z`) from an aware datetime or an
    RFC3339 string. Raises ValueError for a naive datetime or unreadable text."""
    if isinstance(value, str):
        value = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    if value.tzinfo is None:
        raise ValueError(f"time {value!r} has no time zone; ledger times are UTC")
    return value.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _field(spec: Mapping[str, Any], dotted: str) -> str:
    value: Any = spec
    for key in dotted.split("."):
        value = value.get(key, "") if isinstance(value, Mapping) else ""
    if dotted == "hashVersion" and not value:
        value = HASH_VERSION
    return "" if value is None else str(value)


def hash_input(spec: Mapping[str, Any]) -> str:
    """The text hashed for an entry spec (wire names): the `HASHED_FIELDS` joined by `\\n`."""
    return "\n".join(_field(spec, name) for name in HASHED_FIELDS)


def entry_hash(spec: Mapping[str, Any]) -> str:
    """Hex SHA-256 of `hash_input(spec)` (the stored `hash` is not part of it)."""
    return hashlib.sha256(hash_input(spec).encode("utf-8")).hexdigest()


def build_entry(
    record: Mapping[str, Any],
    *,
    sequence: int,
    prev_hash: str,
    recorded_at: dt.datetime,
) -> dict[str, Any]:
    """The GryviaLedgerEntry manifest of a sealed usage record (a raw object with metadata
    name, namespace, uid and spec) at `sequence` after `prev_hash`.

    Raises ValueError naming the problem when the record is not sealed or lacks a field.
    """
    meta = record.get("metadata") or {}
    spec = record.get("spec") or {}
    uid, name = str(meta.get("uid") or ""), str(meta.get("name") or "")
    where = f"GryviaUsageRecord {meta.get('namespace')}/{name}"
    if not uid:
        raise ValueError(f"{where} has no metadata.uid")
    if spec.get("final") is not True or not spec.get("end"):
        raise ValueError(f"{where} is not sealed (spec.final with spec.end); not ledgered yet")
    body: dict[str, Any] = {
        "hashVersion": HASH_VERSION,
        "tenant": str(spec.get("tenant") or ""),
        "sequence": sequence,
        "prevHash": prev_hash,
        "usageRecord": {"namespace": str(meta.get("namespace") or ""), "name": name, "uid": uid},
        "kind": str(spec.get("kind") or "gpu"),
        "job": str(spec.get("job") or ""),
        "sku": str(spec.get("sku") or spec.get("gpuType") or ""),
        "start": timestamp(str(spec["start"])),
        "end": timestamp(str(spec["end"])),
        "gpuHours": amount(spec.get("gpuHours", 0)),
        "rate": amount(spec.get("rate", 0)),
        "cost": amount(spec.get("cost", 0)),
        "currency": str(spec.get("currency") or "USD"),
        "recordedAt": timestamp(recorded_at),
    }
    body["hash"] = entry_hash(body)
    return {
        "apiVersion": API_VERSION,
        "kind": "GryviaLedgerEntry",
        "metadata": {"name": entry_name(uid), "labels": {LABEL_TENANT: body["tenant"]}},
        "spec": body,
    }


# -- verification -------------------------------------------------------------------------


@dataclass(frozen=True)
class Head:
    """The last entry of a chain: its sequence (0: empty chain) and hash ("" when empty)."""

    sequence: int = 0
    hash: str = ""


@dataclass(frozen=True)
class Verification:
    """What `verify` found: `problems` (each names the entry), the head, the entry count."""

    tenant: str
    entries: int
    head: Head
    problems: tuple[str, ...] = field(default_factory=tuple)

    @property
    def valid(self) -> bool:
        """True when no problem was found."""
        return not self.problems

    def to_dict(self) -> dict[str, Any]:
        """`{tenant, entries, valid, problems[], headSequence, headHash, hashVersion}`."""
        return {
            "tenant": self.tenant,
            "entries": self.entries,
            "valid": self.valid,
            "problems": list(self.problems),
            "headSequence": self.head.sequence,
            "headHash": self.head.hash,
            "hashVersion": HASH_VERSION,
        }


def _sequence(spec: Mapping[str, Any]) -> int:
    value = spec.get("sequence")
    return value if isinstance(value, int) and not isinstance(value, bool) else -1


def verify(tenant: str, entries: Iterable[Mapping[str, Any]]) -> Verification:
    """Check the chain of `tenant` among `entries` (raw GryviaLedgerEntry objects; other
    tenants' are ignored).

    Finds: an entry whose stored hash does not match its content (edited content), a name
    other than `le-<usageRecord.uid>`, two entries with one sequence or one usage record
    (duplicates), missing sequences (gaps, including a chain not starting at 1), and an entry
    whose `prevHash` is not the hash of the entry before (a broken chain). Each problem names
    the entry (`le-...`, sequence N). The head is the highest sequence's entry.
    """
    mine = [e for e in entries if (e.get("spec") or {}).get("tenant") == tenant]
    mine.sort(key=lambda e: (_sequence(e.get("spec") or {}), str(_name(e))))
    problems: list[str] = []
    by_seq: dict[int, Mapping[str, Any]] = {}
    records = Counter(
        str(((e.get("spec") or {}).get("usageRecord") or {}).get("uid")) for e in mine
    )
    for entry in mine:
        spec, name = entry.get("spec") or {}, _name(entry)
        seq = _sequence(spec)
        label = f"entry {name} (sequence {seq})"
        if seq < 1:
            problems.append(f"{label}: sequence must be a whole number >= 1")
            continue
        if entry_hash(spec) != spec.get("hash"):
            problems.append(f"{label}: content does not match its hash (edited after writing)")
        uid = str((spec.get("usageRecord") or {}).get("uid"))
        if name != entry_name(uid):
            problems.append(f"{label}: name should be {entry_name(uid)}")
        if records[uid] > 1:
            problems.append(f"{label}: usage record uid {uid} is ledgered more than once")
        if seq in by_seq:
            problems.append(f"{label}: duplicate sequence (also {_name(by_seq[seq])})")
            continue
        by_seq[seq] = entry
    top = max(by_seq, default=0)
    missing = [s for s in range(1, top + 1) if s not in by_seq]
    if missing:
        problems.append(f"gap: sequence(s) {_ranges(missing)} missing from the chain")
    for seq in sorted(by_seq):
        spec = by_seq[seq].get("spec") or {}
        before = by_seq.get(seq - 1)
        if seq == 1:
            expected: str | None = ""
        elif before is not None:
            expected = str((before.get("spec") or {}).get("hash") or "")
        else:
            expected = None  # after a gap: nothing to compare with
        if expected is not None and spec.get("prevHash", "") != expected:
            problems.append(
                f"entry {_name(by_seq[seq])} (sequence {seq}): prevHash does not match the "
                f"hash of sequence {seq - 1} (broken chain)"
                if seq > 1
                else f"entry {_name(by_seq[seq])} (sequence 1): prevHash must be empty"
            )
    head_spec = (by_seq[top].get("spec") or {}) if top else {}
    head = Head(top, str(head_spec.get("hash") or ""))
    return Verification(tenant, len(mine), head, tuple(problems))


def head_of(entries: Sequence[Mapping[str, Any]]) -> Head:
    """The head of a chain (the highest sequence; ties: first by name), Head() when empty."""
    best: Mapping[str, Any] | None = None
    for entry in entries:
        spec = entry.get("spec") or {}
        if best is None or _sequence(spec) > _sequence(best):
            best = spec
    if best is None:
        return Head()
    return Head(max(_sequence(best), 0), str(best.get("hash") or ""))


def _name(entry: Mapping[str, Any]) -> str:
    return str((entry.get("metadata") or {}).get("name") or "?")


def _ranges(numbers: Sequence[int]) -> str:
    """`3, 5-7` for [3, 5, 6, 7]."""
    out: list[str] = []
    start = prev = numbers[0]
    for n in [*numbers[1:], None]:
        if n is not None and n == prev + 1:
            prev = n
            continue
        out.append(str(start) if start == prev else f"{start}-{prev}")
        if n is not None:
            start = prev = n
    return ", ".join(out)
