"""Issue 43 point 4: every computed `-o json` document is what its schema says. Each case runs
the command through the CLI over the fake access layer (the fixtures of the command's own
tests), then checks the printed document three ways: against the committed JSON Schema
(docs/reference/json/<Kind>.schema.json) with jsonschema, by building the pydantic model with
extra fields forbidden (a field added to an as_dict() without the model fails), and by the
model printing back exactly the document (types and presence of every field kept)."""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from pydantic import ValidationError

from gryvia_cli.schemas import DOCUMENTS, SCHEMA_DIR, schema_text
from gryvia_operator.api.names import CLI_API_VERSION
from tests.unit.cli.json_cases import CASES as MORE_CASES
from tests.unit.cli.json_cases_platform import CASES as PLATFORM_CASES

ROOT = Path(__file__).resolve().parents[3]


@cache
def validator(kind: str) -> Draft202012Validator:
    """The committed schema of `kind`, checked as a schema."""
    schema = json.loads((ROOT / SCHEMA_DIR / f"{kind}.schema.json").read_text())
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)


def check(printed: str, kind: str) -> dict[str, Any]:
    """The document in `printed`, after checking it against its schema and its model."""
    doc = json.loads(printed)
    assert (doc["apiVersion"], doc["kind"]) == (CLI_API_VERSION, kind)
    errors = [f"{list(e.absolute_path)}: {e.message}" for e in validator(kind).iter_errors(doc)]
    assert not errors, errors
    model, _ = DOCUMENTS[kind]
    built = model.model_validate(doc, extra="forbid")
    assert built.model_dump(mode="json", by_alias=True) == doc
    return doc


# -- the cases: (kind, a function printing the document) -----------------------------------


def _queue() -> str:
    from tests.unit.cli.helpers import run
    from tests.unit.cli.test_queue_pending import fake

    return run(["queue", "-A", "-o", "json"], fake()).stdout


def _queue_kueue() -> str:
    from tests.unit.cli.helpers import run
    from tests.unit.cli.test_mcp_tools import cluster

    return run(["queue", "-A", "-o", "json"], cluster()).stdout


def _running() -> str:
    from tests.unit.cli.fakes import FakeAccess
    from tests.unit.cli.helpers import run
    from tests.unit.cli.test_running import _job

    fake = FakeAccess(_job("busy", last=80.0), _job("idle", last=3.0), _job("new"))
    return run(["queue", "--running", "-n", "ml", "-o", "json"], fake).stdout


def _capacity() -> str:
    from tests.unit.cli.helpers import run
    from tests.unit.cli.test_mcp_tools import cluster

    return run(["capacity", "-o", "json"], cluster()).stdout


def _capacity_in_maintenance() -> str:
    from tests.unit.cli.helpers import run
    from tests.unit.cli.test_maintenance import _cluster

    fake = _cluster(set())
    run(["maintenance", "start", "gpu-1", "--reason", "XID 79"], fake)
    return run(["capacity", "-o", "json"], fake).stdout


def _explain(tmp_path: Path) -> str:
    from tests.unit.cli.helpers import run
    from tests.unit.cli.test_mcp_tools import cluster, manifest

    path = tmp_path / "jobs.yaml"
    path.write_text(manifest("small", 2) + "---\n" + manifest("huge", 2, "B300"))
    return run(["submit", "-f", str(path), "--explain", "-o", "json"], cluster()).stdout


def _explain_unpriced(tmp_path: Path) -> str:
    from tests.unit.cli.helpers import h100
    from tests.unit.cli.test_tenancy_commands import cluster, run
    from tests.unit.cli.test_unpriced_usage import _job_file

    args = ["submit", "-f", _job_file(tmp_path, "H100"), "-n", "tenant-vision", "--explain"]
    return run([*args, "-o", "json"], cluster().add(h100())).stdout


def _billing(*args: str) -> Callable[[], str]:
    def printed() -> str:
        from tests.unit.cli.test_tenancy_commands import cluster, run
        from tests.unit.cli.test_unpriced_usage import TODAY_NLP_B200, TUESDAY_B200

        fake = cluster().add(TUESDAY_B200, TODAY_NLP_B200)
        return run([*args, "-o", "json"], fake).stdout

    return printed


def _sampled(*args: str) -> Callable[[], str]:
    def printed() -> str:
        from tests.unit.cli.helpers import NOW
        from tests.unit.cli.test_attribution_views import TENANTS, labelled_b_in_tenant_a, metered
        from tests.unit.cli.test_tenancy_commands import TenancyFake, run
        from tests.unit.cli.test_tenancy_core import tenant

        record = metered(labelled_b_in_tenant_a(), TENANTS)
        record["spec"]["activeGPUHours"] = 4.0
        fake = TenancyFake(tenant("a"), tenant("b"), record)
        return run([*args, "-o", "json"], fake, now=NOW).stdout

    return printed


def _invoice_finalized() -> str:
    from tests.unit.cli.test_invoice_finalize import _cluster, run

    fake = _cluster()
    assert run(["invoice", "finalize", "vision", "2026-11"], fake).exit_code == 0
    return run(["invoice", "--month", "2026-11", "-o", "json"], fake).stdout


def _ledger(broken: bool) -> Callable[[], str]:
    def printed() -> str:
        from tests.unit.api.test_invoice import ledger
        from tests.unit.api.test_ledger import record
        from tests.unit.cli.fakes import FakeAccess
        from tests.unit.cli.test_invoice_finalize import run

        entries = ledger([record(n) for n in range(1, 4)])
        if broken:
            entries[1]["spec"]["cost"] = "9.000000"
        return run(["ledger", "verify", "vision", "-o", "json"], FakeAccess(*entries)).stdout

    return printed


def _chargeback(command: str) -> Callable[[], str]:
    def printed() -> str:
        from tests.unit.cli.fakes import FakeAccess
        from tests.unit.cli.helpers import run
        from tests.unit.tenancy.test_chargeback import RECORDS

        policy = {
            "apiVersion": "gryvia.io/v1alpha1",
            "kind": "GryviaChargeback",
            "metadata": {"name": "finance"},
            "spec": {"platformSharePercent": "10"},
        }
        kind = {"apiVersion": "gryvia.io/v1alpha1", "kind": "GryviaUsageRecord"}
        fake = FakeAccess(policy, *({**r, **kind} for r in RECORDS))
        return run(["chargeback", command, "2026-11", "-o", "json"], fake).stdout

    return printed


def _maintenance(*args: str) -> Callable[[], str]:
    def printed() -> str:
        from tests.unit.cli.helpers import run
        from tests.unit.cli.test_maintenance import _cluster

        fake = _cluster({"train-0"})
        start = ["maintenance", "start", "gpu-1", "--reason", "XID 79", "--drain"]
        report = run([*start, "--timeout", "1s", "-o", "json"], fake).stdout
        return report if args == ("start",) else run([*args, "-o", "json"], fake).stdout

    return printed


CASES: list[tuple[str, str, Callable[..., str]]] = [
    ("Queue", "blocker and estimate", _queue),
    ("Queue", "plain", _queue_kueue),
    ("RunningJobs", "sampled and not", _running),
    ("Capacity", "plain", _capacity),
    ("Capacity", "node in maintenance", _capacity_in_maintenance),
    ("Explain", "start now and never", _explain),
    ("Explain", "unpriced", _explain_unpriced),
    ("CostReport", "per team, unpriced", _billing("cost", "-p", "week")),
    ("CostReport", "per user", _billing("cost", "--group-by", "user")),
    ("CostReport", "per label", _billing("cost", "--group-by", "label:gryvia.io/team")),
    ("CostReport", "sampled runs", _sampled("cost")),
    ("UsageReport", "sampled, billable false", _sampled("usage")),
    ("UsageReport", "per tenant", _billing("usage", "--from", "2026-11-01")),
    ("UsageReport", "per sku, unpriced", _billing("usage", "--group-by", "sku")),
    ("UsageReport", "per job", _billing("usage", "--group-by", "job")),
    ("FocusReport", "the month", _billing("usage", "--format", "focus")),
    ("InvoiceList", "estimate, unpriced", _billing("invoice", "--month", "2026-11")),
    ("InvoiceList", "finalized", _invoice_finalized),
    ("LedgerVerification", "valid", _ledger(False)),
    ("LedgerVerification", "edited entry", _ledger(True)),
    ("ChargebackReport", "preview", _chargeback("show")),
    ("ChargebackExport", "preview", _chargeback("export")),
    ("MaintenanceReport", "drain refused", _maintenance("start")),
    ("MaintenanceList", "one node", _maintenance("maintenance", "list")),
    *MORE_CASES,
    *PLATFORM_CASES,
]


@pytest.mark.parametrize(("kind", "what", "printed"), CASES, ids=[f"{k}-{w}" for k, w, _ in CASES])
def test_printed_documents_follow_their_schema(
    kind: str, what: str, printed: Callable[..., str], tmp_path: Path
) -> None:
    text = printed(tmp_path) if "tmp_path" in printed.__code__.co_varnames else printed()
    doc = check(text, kind)
    assert doc.get("items", [doc]), f"{kind} ({what}) lists nothing: the case checks no item"


def test_every_kind_has_a_case() -> None:
    assert {kind for kind, _, _ in CASES} == set(DOCUMENTS)


def test_committed_schemas_are_the_generated_ones() -> None:
    folder = ROOT / SCHEMA_DIR
    committed = {p.name for p in folder.glob("*.schema.json")}
    assert committed == {f"{kind}.schema.json" for kind in DOCUMENTS}, "run make docs"
    for kind in DOCUMENTS:
        stale = (folder / f"{kind}.schema.json").read_text() != schema_text(kind)
        assert not stale, f"{kind}.schema.json differs from the models: run make docs"


def test_the_json_output_page_lists_every_kind() -> None:
    page = (ROOT / "docs" / "json-output.md").read_text()
    for kind, (_, command) in DOCUMENTS.items():
        assert f"| `{kind}` | `{command} -o json` | [{kind}.schema.json]" in page, kind


def test_the_version_field_is_the_constant() -> None:
    from gryvia_cli.schemas.base import ApiVersion

    assert ApiVersion.__args__ == (CLI_API_VERSION,)  # type: ignore[attr-defined]
    assert CLI_API_VERSION == "cli.gryvia.io/v1"


def test_a_field_the_model_does_not_name_fails() -> None:
    doc = json.loads(_capacity())
    doc["types"][0]["surprise"] = 1
    with pytest.raises(ValidationError, match="surprise"):
        check(json.dumps(doc), "Capacity")
    doc = json.loads(_capacity())
    doc["unspecifiedPending"] = "three"
    with pytest.raises(AssertionError, match="unspecifiedPending"):
        check(json.dumps(doc), "Capacity")
