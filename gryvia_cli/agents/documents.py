"""The output schemas of the `gryvia mcp` tools. The tools that return a CLI document (queue,
explain, capacity, cost, usage, status) use its model from `gryvia_cli.schemas`, the one
docs/reference/json/ is generated from and the CLI's `-o json` is tested against; the others
(logs, sacct, submit, cancel) have the envelopes below. Extra fields are kept, so a
field the CLI adds reaches the agent before a model names it."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from gryvia_cli.schemas.capacity import Capacity
from gryvia_cli.schemas.explain import Explain
from gryvia_cli.schemas.jobs import JobStatus
from gryvia_cli.schemas.queue import Queue
from gryvia_cli.schemas.spend import CostReport, UsageReport
from gryvia_operator.api.names import CLI_API_VERSION

QueueDocument = Queue
"""`gryvia queue -o json`: the waiting jobs, oldest first."""
CapacityDocument = Capacity
"""`gryvia capacity -o json`: GPUs per type and per node, and the demand for them."""
CostDocument = CostReport
"""`gryvia cost -o json`: spend per team (or per group) in the period, and budgets."""
UsageDocument = UsageReport
"""`gryvia usage -o json`: metered GPU-hours and cost per group in [from, to)."""
ExplainDocument = Explain
"""`gryvia submit --explain -o json` (docs/pending.md): what would happen to each job."""
JobStatusDocument = JobStatus
"""`gryvia status JOB -o json`: the job, its pods and events as the API returned them."""


class Document(BaseModel):
    """The envelope of a tool's answer that is no CLI document: apiVersion
    (`names.CLI_API_VERSION`, `v1` for a list of API objects) and kind."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    apiVersion: str = Field(description=CLI_API_VERSION)
    kind: str


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
