"""The registry spec of inference services without a screen: rows, cells (the CLI's
`serve list -o wide` with PHASE marked), details (`serve get`), and the `:` words."""

from __future__ import annotations

from typing import Any

from gryvia_cli.tui.bindings import resolve_jump
from gryvia_cli.tui.kinds import EVENT_KINDS
from gryvia_cli.tui.registry import BY_KIND, REGISTRY, Ctx
from gryvia_cli.tui.store import ClusterStore
from tests.tui.builders import NOW


def service(name: str, phase: str | None) -> dict[str, Any]:
    body: dict[str, Any] = {
        "apiVersion": "gryvia.io/v1alpha1",
        "kind": "GryviaInferenceService",
        "metadata": {"name": name, "namespace": "ml", "creationTimestamp": "2026-11-20T10:00:00Z"},
        "spec": {"image": "acme/llm:1.2", "port": 8000, "replicas": 2},
    }
    if phase:
        body["status"] = {
            "phase": phase,
            "replicas": 2,
            "readyReplicas": 2,
            "servingVersion": "1.2",
            "url": "http://b.ml.svc:8000",
        }
    return body


def test_rows_cells_and_details() -> None:
    spec = REGISTRY["inference"]
    polled = [service("b", "Ready"), service("a", None)]
    ctx = Ctx(ClusterStore(), NOW, polled)
    rows = spec.rows(ctx)
    assert list(rows) == ["ml/a", "ml/b"]
    keys = [c.key for c in spec.columns]
    ready = dict(zip(keys, spec.cells(rows["ml/b"], ctx), strict=True))
    assert ready["phase"] == ("Ready", "ok")
    assert ready["ready"][0] == "2/2" and ready["version"][0] == "1.2"
    fresh = dict(zip(keys, spec.cells(rows["ml/a"], ctx), strict=True))
    assert fresh["phase"][0] == "Pending" and fresh["ready"][0] == "0/0"
    (section,) = spec.sections(rows["ml/b"], ctx)
    details = dict(section.rows)
    assert details["Serving version"] == "1.2" and details["URL"] == "http://b.ml.svc:8000"


def test_reached_with_colon_words_and_from_events() -> None:
    for word in ("inference", "serve", "gisvc", "inferenceservices"):
        assert resolve_jump(word) == "inference"
    assert EVENT_KINDS["GryviaInferenceService"] == "inferenceservices"
    assert BY_KIND["inferenceservices"] is REGISTRY["inference"]
