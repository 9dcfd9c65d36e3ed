"""Issue 38, failure 3: unpriced GPUs cost 0.00. Usage metered with no price (its GPU type has
no enabled GryviaGpuSku) is a state: reports and previews say `unpriced` and warn, JSON keeps
it machine-readable, and a month with it is finalized only with --allow-unpriced."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

from gryvia_cli.kube import resources as r
from tests.builders import job_yaml
from tests.unit.api.test_invoice import ledger
from tests.unit.api.test_ledger import record as sealed_record
from tests.unit.cli.fakes import FakeAccess
from tests.unit.cli.helpers import h100
from tests.unit.cli.test_invoice_finalize import run as run_in_december
from tests.unit.cli.test_tenancy_commands import cluster, run
from tests.unit.cli.test_tenancy_core import record
from tests.unit.cli.test_tenancy_core import tenant as tenant_obj

FIX = "add or enable a GryviaGpuSku for B200"


def unpriced(tenant: str, job: str, start: str, hours: float, end: str) -> dict[str, Any]:
    """A sealed record of a B200 run as metering writes it when no SKU prices B200: no SKU,
    rate and cost 0 (written before the `unpriced` field existed, so only that tells it)."""
    obj = record(tenant, job, start, hours, rate=0.0, gpu_type="B200", end=end)
    del obj["spec"]["sku"]
    return obj


TUESDAY_B200 = unpriced("vision", "b200", "2026-11-17T09:00:00Z", 16.0, "2026-11-17T11:00:00Z")
TODAY_NLP_B200 = unpriced("nlp", "nb", "2026-11-18T09:00:00Z", 8.0, "2026-11-18T10:00:00Z")


def test_cost_says_unpriced_in_the_cell_and_warns() -> None:
    fake = cluster().add(TUESDAY_B200, TODAY_NLP_B200)
    table = run(["cost", "-p", "day"], fake)
    assert table.exit_code == 0, table.output
    rows = {line.split()[0]: line for line in table.stdout.splitlines()[1:]}
    assert rows["nlp"].split()[1] == "unpriced"  # only unpriced usage today: not 0.00
    assert "0.00" not in rows["nlp"]
    week = run(["cost", "vision", "-p", "week"], fake)
    assert week.stdout.splitlines()[1].split()[1:5] == ["96.00", "USD", "+", "unpriced"]
    assert "16.0000 GPU-hours" in week.stderr and "GPU type B200" in week.stderr
    assert "unpriced" in week.stderr and FIX in week.stderr
    data = json.loads(run(["cost", "-p", "day", "-o", "json"], fake).stdout)
    items = {i["team"]: i for i in data["items"]}
    assert items["nlp"]["spent"] is None and items["nlp"]["unpricedGpuHours"] == 8.0
    assert items["vision"]["spent"] == 32.0 and "unpricedGpuHours" not in items["vision"]


def test_invoice_estimate_has_an_unpriced_line_and_warns() -> None:
    fake = cluster().add(TUESDAY_B200)
    table = run(["invoice", "--tenant", "vision"], fake)
    assert table.exit_code == 0, table.output
    line = next(ln for ln in table.stdout.splitlines() if "B200" in ln)
    assert line.split() == ["unpriced", "B200", "1", "16.0000", "-", "unpriced"]
    assert "Subtotal: 96.00 USD + 16.0000 GPU-hours unpriced (3 job(s))" in table.stdout
    assert "16.0000 GPU-hours" in table.stderr and FIX in table.stderr
    assert "--allow-unpriced" in table.stderr
    data = json.loads(run(["invoice", "--tenant", "vision", "-o", "json"], fake).stdout)
    (inv,) = data["items"]
    lines = {ln["gpuType"]: ln for ln in inv["lines"]}
    assert lines["B200"]["rate"] is None and lines["B200"]["amount"] is None
    assert lines["B200"]["unpricedGpuHours"] == 16.0 and lines["B200"]["sku"] == "unpriced"
    assert "unpricedGpuHours" not in lines["A100-80G"] and lines["A100-80G"]["amount"] == 96.0
    assert inv["subtotal"] == 96.0 and inv["unpricedGpuHours"] == 16.0
    rows = list(csv.reader(io.StringIO(run(["invoice", "-o", "csv"], fake).stdout)))
    (b200,) = [row for row in rows if row[5] == "B200"]
    assert b200[8:10] == ["", "unpriced"]


def test_usage_row_of_unpriced_runs_has_no_cost() -> None:
    fake = cluster().add(TUESDAY_B200)
    table = run(["usage", "--group-by", "sku", "--from", "2026-11-01"], fake)
    assert table.exit_code == 0, table.output
    row = next(ln for ln in table.stdout.splitlines() if ln.startswith("unpriced"))
    assert row.split() == ["unpriced", "16.0000", "unpriced", "1"]
    assert FIX in table.stderr
    data = json.loads(run(["usage", "--group-by", "sku", "-o", "json"], fake).stdout)
    by_sku = {i["sku"]: i for i in data["items"]}
    assert by_sku["unpriced"]["cost"] is None and by_sku["unpriced"]["unpricedGpuHours"] == 16.0
    assert data["total"]["unpricedGpuHours"] == 16.0


def _december(*extra: dict[str, Any]) -> FakeAccess:
    """November 2026 closed: three priced sealed runs and one unpriced B200 run, ledgered."""
    records = [sealed_record(n) for n in range(1, 4)]
    records.append(sealed_record(4, sku="", gpuType="B200", rate=0.0, cost=0.0))
    for rec in records:
        rec.update(kind="GryviaUsageRecord", apiVersion="gryvia.io/v1alpha1")
    return FakeAccess(*records, *ledger(records), tenant_obj("vision"), *extra)


def test_finalize_refuses_unpriced_usage_without_allow_unpriced() -> None:
    fake = _december()
    refused = run_in_december(["invoice", "finalize", "vision", "2026-11"], fake)
    assert refused.exit_code == 1
    assert "unpriced" in refused.output and "B200" in refused.output
    assert "--allow-unpriced" in refused.output
    assert fake.items(r.INVOICE) == []
    allowed = run_in_december(
        ["invoice", "finalize", "vision", "2026-11", "--allow-unpriced"], fake
    )
    assert allowed.exit_code == 0, allowed.output
    (inv,) = fake.items(r.INVOICE)
    assert inv["spec"]["total"] == "1.48" and len(inv["spec"]["lines"]) == 4
    assert "B200" in allowed.stderr and "unpriced" in allowed.stderr


def _job_file(tmp_path: Path, gpu_type: str) -> str:
    path = tmp_path / "job.yaml"
    path.write_text(job_yaml("train", gpus=2, gpu_type=gpu_type, command=None))
    return str(path)


def test_submit_preview_says_unpriced_and_warns(tmp_path: Path) -> None:
    fake = cluster().add(h100())
    # the tenant may only use a100-80g, so nothing prices H100 for it: metered unpriced
    result = run(["submit", "-f", _job_file(tmp_path, "H100"), "-n", "tenant-vision"], fake)
    assert result.exit_code == 0, result.output
    assert "estimated cost: unpriced" in result.stderr
    assert "add or enable a GryviaGpuSku for H100" in result.stderr
    explained = run(
        ["submit", "-f", _job_file(tmp_path, "H100"), "-n", "tenant-vision", "--explain"],
        fake,
    )
    assert "cost: unpriced" in explained.stdout + explained.stderr
    path = _job_file(tmp_path, "H100")
    doc = run(["submit", "-f", path, "-n", "tenant-vision", "--explain", "-o", "json"], fake)
    cost = json.loads(doc.stdout)["items"][0]["cost"]
    assert cost["unpriced"] is True and cost["perHour"] is None
