"""The registry spec of datasets: rows by name, cells (the CLI's `dataset list -o wide` with
PHASE and PROGRESS marked), the SIZE sort by bytes, details, the `:` words, and the view on a
fake cluster (a pilot test)."""

from __future__ import annotations

import re
from typing import Any

import pytest

from gryvia_cli.tui import make_app
from gryvia_cli.tui.bindings import resolve_jump
from gryvia_cli.tui.kinds import EVENT_KINDS
from gryvia_cli.tui.registry import BY_KIND, REGISTRY, Ctx
from gryvia_cli.tui.store import ClusterStore
from gryvia_cli.tui.widgets.rowtable import RowTable
from tests.tui.builders import NOW
from tests.tui.fake import FakeSource
from tests.tui.fixed import fixed_cluster
from tests.tui.test_views import described, jump, list_screen
from tests.tui.waits import settle, wait_until


def dataset(name: str, status: dict[str, Any] | None) -> dict[str, Any]:
    body: dict[str, Any] = {
        "apiVersion": "gryvia.io/v1alpha1",
        "kind": "GryviaDataset",
        "metadata": {"name": name, "creationTimestamp": "2026-11-20T10:00:00Z"},
        "spec": {
            "source": {"url": "s3://datasets/" + name},
            "cache": {"storage": "fast-nfs", "size": "200Gi"},
        },
    }
    if status is not None:
        body["status"] = status
    return body


def test_rows_cells_sort_and_details() -> None:
    spec = REGISTRY["datasets"]
    staging = {
        "phase": "Staging",
        "staging": "a-copy-1",
        "stagingVersion": "1a2b3c4d5e6f7a8b",
        "progress": {"bytes": 2**20, "totalBytes": 2**22, "files": 1, "totalFiles": 4},
    }
    ready = {"phase": "Ready", "version": "9f8e7d6c5b4a3210", "sizeBytes": 3 * 2**30, "files": 9}
    ctx = Ctx(ClusterStore(), NOW, [dataset("b", ready), dataset("a", staging)])
    rows = spec.rows(ctx)
    assert list(rows) == ["a", "b"]
    keys = [c.key for c in spec.columns]
    a = dict(zip(keys, spec.cells(rows["a"], ctx), strict=True))
    assert a["phase"] == ("Staging", "info")
    assert a["progress"] == ("staging 25% (1.0 MiB of 4.0 MiB, 1 of 4 files)", "info")
    b = dict(zip(keys, spec.cells(rows["b"], ctx), strict=True))
    assert b["phase"] == ("Ready", "ok") and b["progress"] == ("-", "dim")
    assert b["size"][0] == "3.0 GiB" and b["access"][0] == "all"
    assert spec.sort_values["size"](rows["b"]) == 3 * 2**30
    assert spec.sort_values["size"](rows["a"]) is None
    (section,) = spec.sections(dataset("a", staging), ctx)
    assert dict(section.rows)["Now"].startswith("1a2b3c4d5e6f7a8b: staging 25%")


def test_reached_with_colon_words_and_from_events() -> None:
    for word in ("datasets", "dataset", "gds", "gryviadatasets"):
        assert resolve_jump(word) == "datasets"
    assert EVENT_KINDS["GryviaDataset"] == "datasets"
    assert BY_KIND["datasets"] is REGISTRY["datasets"]


@pytest.mark.tui
async def test_the_view_by_its_word_shows_progress_and_describes_a_row() -> None:
    staging = {
        "phase": "Staging",
        "staging": "a-copy-1",
        "stagingVersion": "1a2b3c4d5e6f7a8b",
        "progress": {"bytes": 2**20, "totalBytes": 2**22, "files": 1, "totalFiles": 4},
    }
    cluster = {**fixed_cluster(), "datasets": [dataset("imagenet-mini", staging)]}
    app = make_app(FakeSource(cluster), clock=lambda: NOW)
    async with app.run_test(size=(200, 40)) as pilot:
        await settle(pilot)
        await jump(pilot, "gds")
        screen = await wait_until(pilot, lambda: list_screen(app, "datasets"), what="datasets")
        table = screen.query_one(RowTable)
        assert table.order == ["imagenet-mini"]
        table.move_to_key("imagenet-mini")
        await pilot.press("d")
        text = await wait_until(pilot, lambda: described(app), what="the dataset described")
        assert re.search(r"^  Now\s+1a2b3c4d5e6f7a8b: staging 25% \(1\.0 MiB", text, re.M)
