"""The ledger's hash rule, entry building and `verify` (issue 17, point 4)."""

from __future__ import annotations

import copy
import datetime as dt
import hashlib
from typing import Any

import pytest

from gryvia_operator.api.ledger import (
    HASHED_FIELDS,
    GryviaLedgerEntry,
    amount,
    build_entry,
    entry_hash,
    hash_input,
    timestamp,
    verify,
)

NOW = dt.datetime(2026, 12, 1, 10, 0, 5, 123456, tzinfo=dt.UTC)


def record(n: int, *, tenant: str = "vision", cost: float = 0.4936, **spec: Any) -> dict[str, Any]:
    """A sealed usage record `usage-u<n>` as the API server returns it."""
    body = {
        "tenant": tenant,
        "job": f"job-{n}",
        "jobUID": f"u{n}",
        "sku": "a100-80g",
        "gpuType": "A100-80G",
        "gpus": 1,
        "rate": 4.0,
        "currency": "USD",
        "start": "2026-11-03T10:00:00Z",
        "end": "2026-11-03T10:07:24.123Z",
        "gpuHours": 0.1234,
        "cost": cost,
        "final": True,
        **spec,
    }
    return {
        "metadata": {"name": f"usage-u{n}", "namespace": f"tenant-{tenant}", "uid": f"r{n}"},
        "spec": body,
    }


def chain(count: int, tenant: str = "vision") -> list[dict[str, Any]]:
    """`count` entries chained as the operator writes them."""
    out: list[dict[str, Any]] = []
    prev = ""
    for n in range(1, count + 1):
        entry = build_entry(record(n, tenant=tenant), sequence=n, prev_hash=prev, recorded_at=NOW)
        prev = entry["spec"]["hash"]
        out.append(entry)
    return out


def test_the_hash_is_sha256_of_the_listed_fields_joined_by_newlines_in_order() -> None:
    (entry,) = chain(1)
    spec = entry["spec"]
    expected = "\n".join(
        [
            "v1",
            "vision",
            "1",
            "",
            "tenant-vision",
            "usage-u1",
            "r1",
            "gpu",
            "job-1",
            "a100-80g",
            "2026-11-03T10:00:00Z",
            "2026-11-03T10:07:24Z",
            "0.123400",
            "4.000000",
            "0.493600",
            "USD",
            "2026-12-01T10:00:05Z",
        ]
    )
    assert hash_input(spec) == expected
    assert spec["hash"] == hashlib.sha256(expected.encode()).hexdigest() == entry_hash(spec)
    assert len(HASHED_FIELDS) == 17
    assert entry["metadata"]["name"] == "le-r1"
    assert entry["metadata"]["labels"] == {"gryvia.io/tenant": "vision"}
    GryviaLedgerEntry.model_validate(entry)  # the manifest fits the CRD model


def test_amounts_have_six_places_and_times_are_utc_seconds() -> None:
    assert amount(0.4936) == "0.493600"
    assert amount(1e-7) == "0.000000"
    assert amount("2.0000005") == "2.000001"  # half-up
    assert amount(12) == "12.000000"
    with pytest.raises(ValueError, match="finite number >= 0"):
        amount(-1)
    with pytest.raises(ValueError, match="not a number"):
        amount("abc")
    plus_two = dt.timezone(dt.timedelta(hours=2))
    assert timestamp(dt.datetime(2026, 1, 1, 2, 0, 1, 999, tzinfo=plus_two)) == (
        "2026-01-01T00:00:01Z"
    )
    assert timestamp("2026-11-03T10:07:24.9+00:00") == "2026-11-03T10:07:24Z"
    with pytest.raises(ValueError, match="no time zone"):
        timestamp(dt.datetime(2026, 1, 1))


def test_an_open_record_is_not_ledgered() -> None:
    with pytest.raises(ValueError, match="not sealed"):
        build_entry(record(1, final=False), sequence=1, prev_hash="", recorded_at=NOW)


def test_a_sku_less_record_is_ledgered_under_its_gpu_type() -> None:
    rec = record(1)
    del rec["spec"]["sku"]
    entry = build_entry(rec, sequence=1, prev_hash="", recorded_at=NOW)
    assert entry["spec"]["sku"] == "A100-80G"


def test_a_written_chain_verifies() -> None:
    result = verify("vision", chain(5) + chain(2, tenant="other"))
    assert result.valid, result.problems
    assert result.entries == 5
    assert result.head.sequence == 5
    assert result.to_dict()["headHash"] == chain(5)[-1]["spec"]["hash"]
    assert verify("nobody", chain(3)).to_dict() == {
        "tenant": "nobody",
        "entries": 0,
        "valid": True,
        "problems": [],
        "headSequence": 0,
        "headHash": "",
        "hashVersion": "v1",
    }


def test_edited_content_names_the_entry() -> None:
    entries = chain(4)
    entries[2]["spec"]["cost"] = "0.000001"
    result = verify("vision", entries)
    assert not result.valid
    assert result.problems == (
        "entry le-r3 (sequence 3): content does not match its hash (edited after writing)",
    )


def test_a_rehashed_edit_breaks_the_chain_after_it() -> None:
    """An editor who also recomputes the edited entry's hash breaks the link to the next."""
    entries = chain(4)
    entries[1]["spec"]["cost"] = "9.000000"
    entries[1]["spec"]["hash"] = entry_hash(entries[1]["spec"])
    (problem,) = verify("vision", entries).problems
    assert problem.startswith("entry le-r3 (sequence 3): prevHash does not match")
    assert "broken chain" in problem


def test_gaps_are_reported_as_ranges() -> None:
    entries = chain(7)
    del entries[5]  # sequence 6
    del entries[1:3]  # sequences 2, 3
    result = verify("vision", entries)
    assert result.problems == ("gap: sequence(s) 2-3, 6 missing from the chain",)
    assert result.head.sequence == 7


def test_a_chain_not_starting_at_one_has_a_gap() -> None:
    assert verify("vision", chain(3)[1:]).problems == ("gap: sequence(s) 1 missing from the chain",)


def test_duplicate_sequences_and_records_are_named() -> None:
    entries = chain(3)
    twin = copy.deepcopy(entries[1])
    twin["metadata"]["name"] = "le-r9"
    result = verify("vision", [*entries, twin])
    assert "entry le-r9 (sequence 2): name should be le-r2" in result.problems
    assert "entry le-r2 (sequence 2): usage record uid r2 is ledgered more than once" in (
        result.problems
    )
    assert any(
        p.startswith("entry le-r9 (sequence 2): duplicate sequence (also le-r2)")
        for p in result.problems
    )


def test_a_first_entry_with_a_prev_hash_is_refused() -> None:
    entries = chain(2)
    entries[0]["spec"]["prevHash"] = "a" * 64
    entries[0]["spec"]["hash"] = entry_hash(entries[0]["spec"])
    problems = verify("vision", entries).problems
    assert "entry le-r1 (sequence 1): prevHash must be empty" in problems
