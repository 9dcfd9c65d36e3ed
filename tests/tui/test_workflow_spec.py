"""The registry spec of workflows without a screen: rows (namespace/name order), cells (the
CLI's `workflow list -o wide` with PHASE and FAILED STEP marked), the detail section (what
`workflow get` prints), the `:` words that reach it and the events that open it."""

from __future__ import annotations

from typing import Any

from gryvia_cli.tui.bindings import resolve_jump
from gryvia_cli.tui.kinds import EVENT_KINDS
from gryvia_cli.tui.registry import BY_KIND, REGISTRY, Ctx
from gryvia_cli.tui.store import ClusterStore
from tests.tui.builders import NOW


def workflow(name: str, ns: str, phase: str | None, failed: str | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {
        "apiVersion": "gryvia.io/v1alpha1",
        "kind": "GryviaWorkflow",
        "metadata": {"name": name, "namespace": ns, "creationTimestamp": "2026-11-20T10:00:00Z"},
        "spec": {
            "steps": [
                {"name": "prepare", "template": {"type": "training", "image": "i", "gpus": 0}},
                {
                    "name": "train",
                    "dependsOn": ["prepare"],
                    "template": {"type": "training", "image": "i", "gpus": 0},
                },
            ]
        },
    }
    if phase:
        body["status"] = {
            "phase": phase,
            "lastRun": 1,
            "failedStep": failed,
            "runs": [
                {
                    "number": 1,
                    "phase": phase,
                    "failedStep": failed,
                    "steps": [
                        {"name": "prepare", "state": "Succeeded", "job": f"{name}-1-prepare"},
                        {"name": "train", "state": "Failed", "job": f"{name}-1-train"},
                    ],
                }
            ],
        }
    return body


def test_rows_cells_and_details() -> None:
    spec = REGISTRY["workflows"]
    polled = [workflow("b", "ml", "Failed", "train"), workflow("a", "ml", None)]
    ctx = Ctx(ClusterStore(), NOW, polled)
    rows = spec.rows(ctx)
    assert list(rows) == ["ml/a", "ml/b"]
    keys = [c.key for c in spec.columns]
    failed = dict(zip(keys, spec.cells(rows["ml/b"], ctx), strict=True))
    assert failed["phase"] == ("Failed", "error")
    assert failed["failed_step"] == ("train", "error")
    assert failed["steps"][0] == "1/2" and failed["run"][0] == "1"
    fresh = dict(zip(keys, spec.cells(rows["ml/a"], ctx), strict=True))
    assert fresh["phase"][0] == "Pending" and fresh["failed_step"] == ("-", "dim")
    (section,) = spec.sections(polled[0], ctx)
    details = dict(section.rows)
    assert details["Run 1"].startswith("Failed at step train")
    assert details["  train"] == "Failed, job b-1-train"
    assert spec.search(rows["ml/b"]) == "ml b failed prepare train"


def test_reached_with_colon_words_and_from_events() -> None:
    for word in ("workflows", "workflow", "wf", "gwf"):
        assert resolve_jump(word) == "workflows"
    assert EVENT_KINDS["GryviaWorkflow"] == "workflows"
    assert BY_KIND["workflows"] is REGISTRY["workflows"]
