"""The document of `gryvia submit --explain` (Explain, docs/pending.md): what would happen to
each job before it is created."""

from __future__ import annotations

from typing import Literal

from gryvia_cli.schemas.base import CliModel, Document
from gryvia_cli.schemas.queue import Blocker, Estimate


class ServerDryRun(CliModel):
    """The API server's verdict on a dry-run create (schema, CEL, admission webhook)."""

    allowed: bool
    message: str | None
    """The refusal when allowed is false (verdict never)."""
    warnings: list[str]
    """Admission warnings."""


class NodeNow(CliModel):
    """A node that could take one pod now."""

    name: str
    freeGPUs: int


class Placement(CliModel):
    """Whether the job fits now, and where."""

    fitsNow: bool
    nodes: list[NodeNow]


class QuotaBudget(CliModel):
    """The quota's monthly budget with this job's cost for its timeout (one hour without)."""

    monthlyUSD: float
    spentUSD: float
    afterUSD: float | None
    """Null for an unpriced job."""
    hardLimit: bool


class QuotaImpact(CliModel):
    """A GryviaQuota covering the namespace, before and after the job."""

    team: str
    maxGPUs: int | None
    usedGPUs: int
    """GPUs held by admitted or running jobs."""
    afterGPUs: int
    """With this job."""
    budget: QuotaBudget | None


class CostEstimate(CliModel):
    """The job's price (docs/billing.md); unpriced: every amount null and `unpriced` true."""

    currency: str | None
    sku: str | None
    perHour: float | None
    forTimeout: float | None
    """The cost of a run as long as spec.timeout; null without a timeout."""
    timeout: str | None
    unpriced: bool | None = None
    """Only when no SKU prices the job's GPU type."""


class KueueQueue(CliModel):
    """With spec.queueName: the LocalQueue; Kueue picks the flavor at admission."""

    queueName: str
    flavor: str | None


class Explanation(CliModel):
    """What would happen to one job."""

    name: str
    namespace: str
    verdict: Literal["start-now", "wait", "never"]
    exitCode: Literal[0, 3, 4]
    """0 start now, 4 would wait, 3 never runs."""
    serverDryRun: ServerDryRun | None
    """Null when the server check did not run."""
    placement: Placement
    blocker: Blocker
    """status.pending as the operator would write it; null when it starts now."""
    estimatedStart: Estimate
    """status.estimatedStart; null when it starts now."""
    quotas: list[QuotaImpact]
    """Every GryviaQuota covering the namespace."""
    cost: CostEstimate | None
    """Null when no catalog prices anything."""
    kueue: KueueQueue | None
    warnings: list[str]


class Explain(Document):
    """`gryvia submit --explain -o json` (and --dry-run=server): nothing is created."""

    kind: Literal["Explain"]
    exitCode: Literal[0, 3, 4]
    """The command's exit code: 0 every job would start now, 3 one never runs, 4 one waits."""
    items: list[Explanation]
