"""The registry's spec of model registries (GryviaModelRegistry): rows, marked phase, details
(those of `gryvia model get`) and the `:` words."""

from __future__ import annotations

from typing import Any

from gryvia_cli.tui.bindings import resolve_jump
from gryvia_cli.tui.describeref import KIND_OF_WORD
from gryvia_cli.tui.kinds import EVENT_KINDS
from gryvia_cli.tui.registry import BY_KIND, REGISTRY, Ctx
from gryvia_cli.tui.store import ClusterStore
from tests.tui.builders import NOW


def registry(name: str, phase: str | None) -> dict[str, Any]:
    body: dict[str, Any] = {
        "apiVersion": "gryvia.io/v1alpha1",
        "kind": "GryviaModelRegistry",
        "metadata": {"name": name, "namespace": "ml", "creationTimestamp": "2026-11-20T10:00:00Z"},
        "spec": {
            "modelName": "support",
            "versions": [
                {"version": "1", "artifacts": {"uri": "s3://m/1"}, "stage": "Archived"},
                {
                    "version": "2",
                    "artifacts": {"pvc": {"claimName": "ckpt", "path": "/m/2"}},
                    "source": {"kind": "GryviaAutoTuner", "name": "sweep", "trial": "sweep-t3"},
                    "metrics": {"accuracy": 0.94},
                    "stage": "Production",
                },
            ],
            "productionHistory": ["1", "2"],
            "autoServe": {"template": {"image": "acme/srv:$(model.version)"}},
        },
    }
    if phase:
        body["status"] = {"phase": phase, "servingVersion": "1", "message": "rolling out"}
    return body


def test_rows_cells_and_details() -> None:
    spec = REGISTRY["models"]
    ctx = Ctx(ClusterStore(), NOW, [registry("b", "RollingOut"), registry("a", None)])
    rows = spec.rows(ctx)
    assert list(rows) == ["ml/a", "ml/b"]
    keys = [c.key for c in spec.columns]
    cells = dict(zip(keys, spec.cells(rows["ml/b"], ctx), strict=True))
    assert cells["phase"] == ("RollingOut", "info")
    assert cells["production"][0] == "2" and cells["serving"][0] == "1"
    assert cells["previous"][0] == "1" and cells["message"][0] == "rolling out"
    fresh = dict(zip(keys, spec.cells(rows["ml/a"], ctx), strict=True))
    assert fresh["phase"][0] == "-" and fresh["serving"][0] == "-"
    (section,) = spec.sections(rows["ml/b"], ctx)
    details = dict(section.rows)
    assert details["Rollback to"] == "1"
    assert details["Version 2"] == (
        "Production  pvc://ckpt/m/2  from tuner/sweep/sweep-t3  accuracy=0.94"
    )
    assert details["Serving version"] == "1"


def test_reached_with_colon_words_and_from_events() -> None:
    for word in ("models", "model", "gmr", "modelregistries"):
        assert resolve_jump(word) == "models"
    assert KIND_OF_WORD["gmr"] == "modelregistries"
    assert EVENT_KINDS["GryviaModelRegistry"] == "modelregistries"
    assert BY_KIND["modelregistries"] is REGISTRY["models"]
