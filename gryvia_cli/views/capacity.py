"""The capacity report as `gryvia capacity` reads it; `capacity_document` is its `-o json`
document (also what the `capacity` tool of `gryvia mcp` returns)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gryvia_cli.connection import Connection
    from gryvia_cli.core.capacity import CapacityReport


def read_capacity(state: Connection, gpu_type: str | None) -> tuple[CapacityReport, list[str]]:
    """Read jobs and GPU supply (every readable namespace) and compute the report, only
    `gpu_type` when given; return it with the read warnings (unreadable kinds)."""
    from gryvia_cli.core.capacity import compute_capacity
    from gryvia_cli.core.jobs import summarize_job
    from gryvia_cli.views.reads import read_jobs, read_supply

    access = state.access()
    raw, _ = read_jobs(access, None, state.resolve_namespace(None))
    jobs = [summarize_job(j) for j in raw]
    notes: list[str] = []
    supply = read_supply(access, jobs, notes)
    report = compute_capacity(supply.nodes, supply.allocated, jobs, supply.pods, gpu_type=gpu_type)
    return report, notes


def capacity_document(report: CapacityReport, notes: list[str]) -> dict[str, Any]:
    """`gryvia capacity -o json`: {apiVersion: cli.gryvia.io/v1, kind: Capacity, types, totals,
    unspecifiedPending, nodes, warnings} (the shape the capacity command's help documents)."""
    from gryvia_operator.api.names import CLI_API_VERSION

    return {
        "apiVersion": CLI_API_VERSION,
        "kind": "Capacity",
        **report.as_dict(),
        "warnings": notes,
    }
