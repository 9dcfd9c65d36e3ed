"""The Kueue fair-share view of `gryvia quota` (issue 19): nominal, used, borrowed and lent GPUs
per team and GPU type from Gryvia's ClusterQueues, pure and through CliRunner."""

from __future__ import annotations

import json
from typing import Any

import yaml

from gryvia_cli.core.fairshare import borrowing_notes, fair_share, gpu_count
from tests.unit.cli.test_tenancy_commands import TenancyFake, run

MANAGED = {"app.kubernetes.io/managed-by": "gryvia-operator"}


def _flavor(name: str, gpu: str | None) -> dict[str, Any]:
    spec = {"nodeLabels": {"gryvia.io/gpu": gpu}} if gpu else {}
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ResourceFlavor",
        "metadata": {"name": name},
        "spec": spec,
    }


def _cq(
    team: str,
    nominal: dict[str, int],
    used: dict[str, tuple[int, int]],
    lending: dict[str, int] | None = None,
) -> dict[str, Any]:
    flavors = []
    for name, gpus in nominal.items():
        gpu: dict[str, Any] = {"name": "nvidia.com/gpu", "nominalQuota": str(gpus)}
        if lending and name in lending:
            gpu["lendingLimit"] = str(lending[name])
        flavors.append({"name": name, "resources": [gpu, {"name": "cpu", "nominalQuota": "1k"}]})
    usage = [
        {
            "name": name,
            "resources": [
                {"name": "nvidia.com/gpu", "total": str(total), "borrowed": str(borrowed)},
                {"name": "cpu", "total": "0"},
            ],
        }
        for name, (total, borrowed) in used.items()
    ]
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ClusterQueue",
        "metadata": {
            "name": f"gryvia-{team}",
            "labels": {**MANAGED, "gryvia.io/tenant": team},
        },
        "spec": {"cohortName": "gryvia", "resourceGroups": [{"flavors": flavors}]},
        "status": {"flavorsReservation": usage, "flavorsUsage": usage},
    }


FLAVORS = [
    _flavor("gryvia-h100", "H100"),
    _flavor("gryvia-a100-80g", "A100-80G"),
    _flavor("gryvia-default", None),
]
VISION = _cq(
    "vision",
    {"gryvia-a100-80g": 8, "gryvia-h100": 16, "gryvia-default": 0},
    {"gryvia-h100": (24, 8)},
)
NLP = _cq("nlp", {"gryvia-a100-80g": 0, "gryvia-h100": 16, "gryvia-default": 0}, {})


def test_gpu_count_reads_kueue_quantities() -> None:
    assert [gpu_count(q) for q in ("16", 16, "1k", None, "x")] == [16, 16, 1000, 0, 0]


def test_vision_borrows_what_nlp_lends() -> None:
    rows = {(r.team, r.gpu_type): r for r in fair_share([VISION, NLP], FLAVORS)}
    vision, nlp = rows[("vision", "H100")], rows[("nlp", "H100")]
    assert (vision.nominal, vision.used, vision.borrowed, vision.lent) == (16, 24, 8, 0)
    assert (nlp.nominal, nlp.used, nlp.borrowed, nlp.lent) == (16, 0, 0, 8)
    assert rows[("vision", "A100-80G")].nominal == 8
    # a flavor without quota and use (nlp's A100, the CPU-only default) is not a row
    assert ("nlp", "A100-80G") not in rows and ("vision", "any") not in rows
    assert borrowing_notes(rows.values()) == [
        "vision borrows 8 H100 GPUs in cohort gryvia, lent by nlp (8)"
    ]


def test_lent_is_shared_in_proportion_to_unused_lendable_quota() -> None:
    borrower = _cq("a", {"gryvia-h100": 0}, {"gryvia-h100": (7, 7)})
    big = _cq("b", {"gryvia-h100": 16}, {"gryvia-h100": (4, 0)})  # 12 unused
    capped = _cq("c", {"gryvia-h100": 16}, {}, lending={"gryvia-h100": 6})  # 6 lendable
    rows = {r.team: r for r in fair_share([borrower, big, capped], FLAVORS)}
    assert (rows["b"].lendable, rows["c"].lendable) == (12, 6)
    assert rows["b"].lent + rows["c"].lent == 7
    assert (rows["b"].lent, rows["c"].lent) == (5, 2)  # 4.67 and 2.33, largest remainder


def test_a_queue_without_per_type_limits_shows_its_default_flavor() -> None:
    plain = _cq("ops", {"gryvia-default": 32}, {"gryvia-default": (8, 0)})
    (row,) = fair_share([plain], FLAVORS)
    assert (row.team, row.gpu_type, row.nominal, row.used) == ("ops", "any", 32, 8)


def test_quota_fair_share_table_and_json() -> None:
    fake = TenancyFake(VISION, NLP, *FLAVORS)
    table = run(["quota", "--fair-share"], fake)
    assert table.exit_code == 0, table.output
    lines = [line.split() for line in table.stdout.splitlines() if line.strip()]
    assert lines[0][:2] == ["TEAM", "GPU"]
    assert ["vision", "H100", "16", "24", "8", "0", "gryvia"] in lines
    assert ["nlp", "H100", "16", "0", "0", "8", "gryvia"] in lines
    assert "vision borrows 8 H100 GPUs in cohort gryvia, lent by nlp (8)" in table.output
    data = json.loads(run(["quota", "--fair-share", "-o", "json", "vision"], fake).stdout)
    assert data["kind"] == "FairShareList"
    assert {(i["team"], i["gpuType"], i["borrowed"]) for i in data["items"]} == {
        ("vision", "A100-80G", 0),
        ("vision", "H100", 8),
    }
    as_yaml = yaml.safe_load(run(["quota", "--fair-share", "-o", "yaml"], fake).stdout)
    nlp = next(i for i in as_yaml["items"] if (i["team"], i["gpuType"]) == ("nlp", "H100"))
    assert (nlp["nominal"], nlp["lent"], nlp["clusterQueue"]) == (16, 8, "gryvia-nlp")


def test_quota_without_kueue() -> None:
    fake = TenancyFake()
    fake.missing = {"ClusterQueue", "ResourceFlavor"}
    wanted = run(["quota", "--fair-share"], fake)
    assert wanted.exit_code != 0
    assert "no Kueue ClusterQueues" in wanted.output
    plain = run(["quota"], fake)
    assert plain.exit_code == 0, plain.output
    assert "Kueue fair share" not in plain.output
