"""The schemas of the documents `gryvia ... -o json` prints for computed views (apiVersion
`cli.gryvia.io/v1`): one pydantic model per kind, the JSON Schemas in docs/reference/json/
generated from them (`python -m gryvia_cli.schemas`), and the MCP tools' output schemas.
Pure: no Kubernetes client, CLI or console framework."""

from __future__ import annotations

import json
from typing import Any

from gryvia_cli.schemas.base import CliModel, Document
from gryvia_cli.schemas.billing import (
    ChargebackExport,
    ChargebackReport,
    InvoiceList,
    LedgerVerification,
)
from gryvia_cli.schemas.capacity import Capacity, MaintenanceList, MaintenanceReport
from gryvia_cli.schemas.cluster import FairShareList, HealthReport, Version
from gryvia_cli.schemas.explain import Explain
from gryvia_cli.schemas.jobs import GpuTraining, JobStatus, NcclReport, SeffReport
from gryvia_cli.schemas.manifests import ValidationReport
from gryvia_cli.schemas.platform import PlatformStatus, SandboxList, SandboxStatus
from gryvia_cli.schemas.queue import Queue, RunningJobs
from gryvia_cli.schemas.spend import CostReport, FocusReport, UsageReport

DOCUMENTS: dict[str, tuple[type[Document], str]] = {
    "Queue": (Queue, "gryvia queue"),
    "RunningJobs": (RunningJobs, "gryvia queue --running"),
    "Capacity": (Capacity, "gryvia capacity"),
    "Explain": (Explain, "gryvia submit --explain"),
    "CostReport": (CostReport, "gryvia cost"),
    "UsageReport": (UsageReport, "gryvia usage"),
    "FocusReport": (FocusReport, "gryvia usage --format focus"),
    "InvoiceList": (InvoiceList, "gryvia invoice"),
    "LedgerVerification": (LedgerVerification, "gryvia ledger verify TENANT"),
    "ChargebackReport": (ChargebackReport, "gryvia chargeback show MONTH"),
    "ChargebackExport": (ChargebackExport, "gryvia chargeback export MONTH"),
    "MaintenanceList": (MaintenanceList, "gryvia maintenance list"),
    "MaintenanceReport": (MaintenanceReport, "gryvia maintenance start NODE"),
    "JobStatus": (JobStatus, "gryvia status JOB"),
    "SeffReport": (SeffReport, "gryvia seff JOB"),
    "GpuTraining": (GpuTraining, "gryvia gpu training --job JOB"),
    "NcclReport": (NcclReport, "gryvia gpu nccl --job JOB"),
    "HealthReport": (HealthReport, "gryvia health"),
    "FairShareList": (FairShareList, "gryvia quota --fair-share"),
    "Version": (Version, "gryvia version"),
    "PlatformStatus": (PlatformStatus, "gryvia status"),
    "SandboxList": (SandboxList, "gryvia sandbox list"),
    "SandboxStatus": (SandboxStatus, "gryvia sandbox status"),
    "ValidationReport": (ValidationReport, "gryvia validate FILE..."),
}
"""Every document kind: its model and the command that prints it."""

SCHEMA_DIR = "docs/reference/json"
"""Where `make docs` writes `<Kind>.schema.json`, relative to the repository root."""


def json_schema(kind: str) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of `kind`, with its `$id` and title."""
    model, command = DOCUMENTS[kind]
    schema = model.model_json_schema(by_alias=True)
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"https://gryvia.io/schemas/cli/v1/{kind}.schema.json",
        **schema,
        "title": kind,
        "description": f"`{command} -o json`. " + str(schema.get("description", "")),
    }


def schema_text(kind: str) -> str:
    """`json_schema(kind)` as the committed file holds it (indented, sorted, one newline)."""
    return json.dumps(json_schema(kind), indent=2, sort_keys=True) + "\n"


__all__ = ["DOCUMENTS", "SCHEMA_DIR", "CliModel", "Document", "json_schema", "schema_text"]
