"""The output schemas of the `gryvia mcp` tools: pydantic models of the documents the CLI prints
with `-o json` (the top-level fields each command's help documents; items stay objects, as
the CLI writes them). Extra fields are kept, so a field the CLI adds reaches the agent before
this module names it; tests/unit/cli/test_mcp_tools.py checks that the CLI's documents have
exactly these fields."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from gryvia_operator.api.names import CLI_API_VERSION


class Document(BaseModel):
    """A CLI document (apiVersion `names.CLI_API_VERSION`): apiVersion and kind, as every
    `-o json` report has."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    apiVersion: str = Field(description=CLI_API_VERSION)
    kind: str


class QueueDocument(Document):
    """`gryvia queue -o json`: the waiting jobs, oldest first."""

    items: list[dict[str, Any]] = Field(
        description="{position, namespace, name, user, tenant, gpuType, gpus, gpusPerPod, "
        "pods, phase, createdAt, waitingSeconds, reason, blocker, estimatedStart, start, "
        "kueueQueue, flavor, borrowedGPUs} per job (docs/pending.md)"
    )


class CapacityDocument(Document):
    """`gryvia capacity -o json`: GPUs per type and per node, and the demand for them."""

    types: list[dict[str, Any]]
    totals: dict[str, Any]
    unspecifiedPending: int
    nodes: list[dict[str, Any]]
    warnings: list[str]


class CostDocument(Document):
    """`gryvia cost -o json`: spend per team (or per group) in the period, and budgets."""

    period: str
    from_: str = Field(alias="from")
    to: str
    items: list[dict[str, Any]]
    budgets: list[dict[str, Any]]
    total: dict[str, Any]


class UsageDocument(Document):
    """`gryvia usage -o json`: metered GPU-hours and cost per group in [from, to)."""

    groupBy: str
    from_: str | None = Field(alias="from")
    to: str | None
    tenant: str | None
    items: list[dict[str, Any]]
    total: dict[str, Any]
    note: str


class JobStatusDocument(BaseModel):
    """`gryvia status JOB -o json`: the job, its pods and events as the API returned them."""

    model_config = ConfigDict(extra="allow")

    job: dict[str, Any]
    pods: list[dict[str, Any]]
    events: list[dict[str, Any]]
    nodes: list[str]
    gpus: list[dict[str, Any]] | None
    gpusSource: str | None
    cost: dict[str, Any] | None


class ExplainDocument(Document):
    """`gryvia submit --explain -o json` (docs/pending.md): what would happen to each job."""

    exitCode: int = Field(description="0 every job would start now, 3 one never runs, 4 one waits")
    items: list[dict[str, Any]]


class LogDocument(Document):
    """The lines `gryvia logs JOB --tail N` prints, and the notes it prints on stderr."""

    namespace: str
    job: str
    lines: list[str]
    notes: list[str]


class SacctDocument(Document):
    """The lines `gryvia sacct` prints (sacct's layout has no JSON form)."""

    lines: list[str]


class CreatedDocument(Document):
    """`gryvia submit -o json`: the created GryviaAIJobs (kind List)."""

    items: list[dict[str, Any]]


class CancelDocument(Document):
    """`gryvia cancel`: the jobs asked to stop, and those left alone with why."""

    cancelled: list[str]
    skipped: list[dict[str, str]]
