"""`gryvia submit --explain` words a reservation hold as the operator does (issue 20 / 18)."""

from __future__ import annotations

import datetime as dt
from typing import Any

from gryvia_cli.core.explain import explain_job
from gryvia_cli.core.nodes import GpuNode
from tests.builders import make_job

NOW = dt.datetime(2026, 12, 1, 12, 0, tzinfo=dt.UTC)


def node(name: str, reserved_for: str = "", reserved_by: str = "") -> GpuNode:
    return GpuNode(
        name, "H100", 8, 80, "550", "12.4", False, "Ready", "", "Node", True, True, True,
        reserved_for=reserved_for, reserved_by=reserved_by,
    )  # fmt: skip


def job(annotations: dict[str, str] | None = None) -> dict[str, Any]:
    builder = make_job("want").gpus(8).gpu_type("H100").image("x").command("true")
    return (builder.meta(annotations=annotations) if annotations else builder).manifest()


def explain(obj: dict[str, Any], nodes: list[GpuNode]) -> Any:
    return explain_job(
        obj, "ns", nodes=nodes, allocated={}, pods=[], jobs=[], quotas=[], skus=[], cost=None,
        server=None, now=NOW,
    )  # fmt: skip


def test_a_job_that_fits_only_on_others_reserved_nodes_waits_for_the_reservation() -> None:
    nodes = [node("h-1", "rsv-a", "ml"), node("h-0", "rsv-a", "ml")]
    out = explain(job(), nodes)
    assert (out.verdict, out.exit_code, out.nodes_now) == ("wait", 4, ())
    assert out.blocker == {
        "kind": "Reservation",
        "resource": "reservation rsv-a",
        "needed": 8,
        "message": "fits only on nodes reserved for others: h-0 (reservation rsv-a for ml), "
        "h-1 (reservation rsv-a for ml)",
    }
    assert out.estimate == {"unknownReason": out.blocker["message"]}


def test_an_open_node_or_the_job_s_own_reservation_lets_it_start() -> None:
    assert explain(job(), [node("h-0", "rsv-a", "ml"), node("h-1")]).nodes_now == (("h-1", 8),)
    own = explain(job({"gryvia.io/reservation": "rsv-a"}), [node("h-0", "rsv-a", "ml")])
    assert (own.verdict, own.nodes_now) == ("start-now", (("h-0", 8),))


def test_an_owner_without_label_is_another_owner() -> None:
    out = explain(job(), [node("h-0", "rsv-b")])
    assert out.blocker is not None
    assert out.blocker["message"].endswith("h-0 (reservation rsv-b for another owner)")


def test_a_partly_used_reserved_node_is_listed_as_the_operator_lists_it() -> None:
    nodes = [node("h-0", "rsv-a", "ml"), node("h-1", "rsv-a", "ml")]
    out = explain_job(
        job(), "ns", nodes=nodes, allocated={"h-1": 4}, pods=[], jobs=[], quotas=[], skus=[],
        cost=None, server=None, now=NOW,
    )  # fmt: skip
    assert out.blocker is not None and "h-1 (reservation rsv-a for ml)" in out.blocker["message"]
