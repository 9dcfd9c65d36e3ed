"""`gryvia cost|usage|invoice` and the submit cost estimate through CliRunner with a fake
access layer (tests/integration/cli/test_tenancy_cli.py covers the real API server)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from gryvia_cli.kube import resources as r
from tests.builders import job_yaml
from tests.unit.cli.helpers import h100, make_node
from tests.unit.cli.test_tenancy_commands import NLP, RECORDS, TenancyFake, cluster, run

# -- cost --------------------------------------------------------------------------------------


def _cost(period: str) -> dict[str, Any]:
    result = run(["cost", "--period", period, "-o", "json"], cluster())
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    return {i["team"]: i for i in data["items"]} | {"_": data}


def test_cost_period_changes_the_window() -> None:
    day, week, month = _cost("day"), _cost("week"), _cost("month")
    assert day["vision"]["spent"] == 32.0
    assert week["vision"]["spent"] == 96.0
    assert month["vision"]["spent"] == 96.0
    assert month["nlp"]["spent"] == 10.0 and week["nlp"]["spent"] == 0.0
    assert month["ml"]["spent"] == 0.0 and month["ml"]["budget"] is None
    assert day["_"]["from"].startswith("2026-11-18T00:00")
    assert week["_"]["from"].startswith("2026-11-16T00:00")
    assert month["_"]["from"].startswith("2026-11-01T00:00")
    assert month["vision"]["budget"] == 1000 and day["vision"]["budget"] == pytest.approx(33.33)
    assert month["vision"]["remaining"] == 904.0


def test_cost_table_for_one_team_and_errors() -> None:
    result = run(["cost", "vision", "-p", "week"], cluster())
    assert result.exit_code == 0, result.output
    header, row = result.stdout.splitlines()
    assert header.split() == ["TEAM", "SPENT", "BUDGET", "REMAINING", "%", "USED", "PROJECTED"]
    assert row.split()[:3] == ["vision", "96.00", "USD"]
    assert "Period: week, 2026-11-16 00:00 to 2026-11-23 00:00 UTC" in result.stderr
    assert "prorated to the week" in result.stderr
    assert run(["cost", "-p", "year"], cluster()).exit_code == 2
    missing = run(["cost", "nope"], cluster())
    assert missing.exit_code == 1
    assert "no quota or tenant for team nope" in missing.output


# -- usage -------------------------------------------------------------------------------------


def test_usage_table_total_and_note() -> None:
    result = run(["usage", "--from", "2026-11-01", "--to", "2026-11-30"], cluster())
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["TENANT", "GPU", "HOURS", "COST", "JOBS"]
    assert lines[1].split() == ["vision", "24.0000", "96.0000", "USD", "2"]
    assert lines[2].split() == ["nlp", "4.0000", "10.0000", "USD", "1"]
    assert lines[3].split() == ["total", "28.0000", "106.0000", "USD", "3"]
    assert "costs are estimates" in result.stderr


def test_usage_to_date_covers_the_whole_day_and_filters() -> None:
    data = json.loads(
        run(
            [
                "usage",
                "--tenant",
                "vision",
                "--to",
                "2026-11-16",
                "--group-by",
                "day",
                "-o",
                "json",
            ],
            cluster(),
        ).stdout
    )
    assert [i["day"] for i in data["items"]] == ["2026-10-30", "2026-11-16"]
    assert data["total"] == {"gpuHours": 96.0, "cost": 384.0, "currency": "USD", "jobs": 2}
    assert data["to"] == "2026-11-17T00:00:00+00:00" and data["note"]
    by_sku = yaml.safe_load(
        run(["usage", "--group-by", "sku", "-o", "yaml", "--from", "2026-11-01"], cluster()).stdout
    )
    assert [(i["sku"], i["cost"]) for i in by_sku["items"]] == [("a100-80g", 96.0), ("l40", 10.0)]


def test_usage_csv_and_bad_dates() -> None:
    text = run(["usage", "--group-by", "sku", "-o", "csv"], cluster()).stdout
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0] == ["sku", "gpu_hours", "cost", "currency", "jobs"]
    assert rows[-1][0] == "total"
    bad = run(["usage", "--from", "last week"], cluster())
    assert bad.exit_code == 2 and "use YYYY-MM-DD or RFC 3339" in bad.output
    backwards = run(["usage", "--from", "2026-11-10", "--to", "2026-11-01"], cluster())
    assert backwards.exit_code == 2 and "is not before" in backwards.output


def test_usage_falls_back_to_the_tenant_namespace_when_forbidden() -> None:
    class Narrow(TenancyFake):
        def list_objects(self, res: r.Resource, namespace: str | None = None, **kw: Any) -> Any:
            if res is r.USAGE_RECORD and namespace is None:
                from gryvia_cli.errors import ForbiddenError

                raise ForbiddenError("forbidden: cannot list gryviausagerecords")
            return super().list_objects(res, namespace, **kw)

    # the tenant exists (usage of a tenant that does not is `unattributed` since issue 13)
    result = run(["usage", "--tenant", "nlp", "-o", "json"], Narrow(NLP, *RECORDS))
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["total"]["jobs"] == 1
    assert "reading tenant-nlp" in result.stderr
    assert run(["usage"], Narrow(*RECORDS)).exit_code == 1


# -- invoice -----------------------------------------------------------------------------------


def test_invoice_table_json_and_csv() -> None:
    result = run(["invoice"], cluster())
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "━━━ Invoice INV-nlp-202611 (estimate) ━━━" in out
    assert "━━━ Invoice INV-vision-202611 (estimate) ━━━" in out
    assert "Period:   2026-11-01 to 2026-11-30 (UTC)" in out
    for header in ("SKU", "GPU TYPE", "JOBS", "GPU HOURS", "RATE/H", "AMOUNT"):
        assert header in out
    assert "Subtotal: 96.00 USD (2 job(s))" in out
    assert "estimates" in result.stderr
    data = json.loads(run(["invoice", "--tenant", "vision", "-o", "json"], cluster()).stdout)
    assert [i["number"] for i in data["items"]] == ["INV-vision-202611"]
    assert data["items"][0]["lines"][0]["amount"] == 96.0
    october = json.loads(run(["invoice", "--month", "2026-10", "-o", "json"], cluster()).stdout)
    assert october["items"][0]["subtotal"] == 320.0
    rows = list(csv.reader(io.StringIO(run(["invoice", "-o", "csv"], cluster()).stdout)))
    assert rows[0][0] == "invoice" and rows[0][-1] == "currency"
    assert [row[4] for row in rows[1:]].count("TOTAL") == 2
    assert run(["invoice", "--month", "11/2026"], cluster()).exit_code == 2
    assert "No usage in 2026-09" in run(["invoice", "--month", "2026-09"], cluster()).stderr


def test_global_json_output_applies_to_reports() -> None:
    data = json.loads(run(["-o", "json", "invoice"], cluster()).stdout)
    assert data["kind"] == "InvoiceList"
    assert json.loads(run(["-o", "json", "usage"], cluster()).stdout)["kind"] == "UsageReport"


# -- submit estimate ---------------------------------------------------------------------------


def _manifest(tmp_path: Path, gpus: int, gpu_type: str, extra: str = "") -> str:
    path = tmp_path / "job.yaml"
    path.write_text(job_yaml("train", gpus=gpus, gpu_type=gpu_type, command=None, extra=extra))
    return str(path)


def _a100(name: str) -> dict[str, Any]:
    return make_node(name).gpus(8).product("NVIDIA-A100-SXM4-80GB").obj()


def test_submit_prints_the_cost_estimate_and_budget_warning(tmp_path: Path) -> None:
    fake = cluster().add(_a100("a100-0"), h100())
    path = _manifest(tmp_path, 8, "A100-80G", "  timeout: 6h\n")
    result = run(["submit", "-f", path, "-n", "tenant-vision"], fake)
    assert result.exit_code == 0, result.output
    err = result.stderr
    assert "estimated cost: 32.00 USD/hour (8 GPUs x 4.00 USD per GPU-hour, SKU a100-80g)" in err
    assert "estimated cost for its timeout (6h): 192.00 USD" in err
    assert (
        "budget impact on quota vision-quota (team vision): 850.00 spent + 192.00 = 1042.00 "
        "of 1000.00 USD (over the limit)"
    ) in err
    assert "the estimate would take a hard budget over its limit" in err
    assert "admission gate on refuses the job" in err
    lists = [c for c in fake.calls if c[0] == "list"]
    for kind in ("GryviaGpuSku", "GryviaTenant", "GryviaQuota", "GryviaBudget"):
        assert lists.count(("list", kind)) == 1, kind


def test_submit_says_when_no_sku_prices_the_gpu_type(tmp_path: Path) -> None:
    fake = cluster().add(h100())
    # the tenant may only use a100-80g: H100 has no price for it
    result = run(["submit", "-f", _manifest(tmp_path, 2, "H100"), "-n", "tenant-vision"], fake)
    assert result.exit_code == 0, result.output
    assert "no catalog price for GPU type H100" in result.stderr
    before = len(fake.calls)
    elsewhere = run(["submit", "-f", _manifest(tmp_path, 2, "H100"), "-n", "ml"], fake)
    assert "estimated cost: 16.00 USD/hour" in elsewhere.stderr
    assert "would cross" not in elsewhere.stderr
    assert ("list", "GryviaTenant") not in fake.calls[before:]  # no tenant- namespace
