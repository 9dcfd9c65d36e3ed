"""Pydantic models of every Gryvia CRD: the single source of truth.

Names are exported lazily (PEP 562): importing one helper, e.g. `gryvia_operator.api.helpers`,
does not build every model, which keeps the CLI's start-up fast.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gryvia_operator.api.aijob import (
        AIJOB_KIND,
        DistributedSpec,
        ElasticSpec,
        GryviaAIJob,
        GryviaAIJobSpec,
        GryviaAIJobStatus,
    )
    from gryvia_operator.api.base import (
        API_VERSION,
        GROUP,
        VERSION,
        Condition,
        KindInfo,
        ObjectMeta,
    )
    from gryvia_operator.api.budget import BUDGET_KIND, GryviaBudget
    from gryvia_operator.api.gpunode import GPUNODE_KIND, GryviaGpuNode
    from gryvia_operator.api.gpusku import GPUSKU_KIND, GryviaGpuSku
    from gryvia_operator.api.gputype import normalize_gpu_type
    from gryvia_operator.api.helpers import (
        ACTIVE_PHASES,
        MAX_TOTAL_GPUS,
        PENDING_PHASES,
        TERMINAL_PHASES,
        DurationError,
        JobPhase,
        format_duration,
        parse_duration,
    )
    from gryvia_operator.api.invoice import INVOICE_KIND, GryviaInvoice
    from gryvia_operator.api.jobhook import JOBHOOK_KIND, GryviaJobHook
    from gryvia_operator.api.ledger import LEDGER_ENTRY_KIND, GryviaLedgerEntry
    from gryvia_operator.api.priority import PRIORITY_KIND, GryviaPriority
    from gryvia_operator.api.quota import QUOTA_KIND, GryviaQuota
    from gryvia_operator.api.registry import ALL_KINDS, kind_info, parse_object
    from gryvia_operator.api.reservation import RESERVATION_KIND, GryviaReservation
    from gryvia_operator.api.tenant import TENANT_KIND, GryviaTenant
    from gryvia_operator.api.usagerecord import USAGE_RECORD_KIND, GryviaUsageRecord
    from gryvia_operator.api.validation import (
        FieldError,
        ValidationResult,
        inventory_warnings,
        validate_job,
        validate_object,
    )

_EXPORTS: dict[str, str] = {
    "ACTIVE_PHASES": "gryvia_operator.api.helpers",
    "AIJOB_KIND": "gryvia_operator.api.aijob",
    "ALL_KINDS": "gryvia_operator.api.registry",
    "API_VERSION": "gryvia_operator.api.base",
    "BUDGET_KIND": "gryvia_operator.api.budget",
    "Condition": "gryvia_operator.api.base",
    "DistributedSpec": "gryvia_operator.api.aijob",
    "DurationError": "gryvia_operator.api.helpers",
    "ElasticSpec": "gryvia_operator.api.aijob",
    "FieldError": "gryvia_operator.api.validation",
    "GPUNODE_KIND": "gryvia_operator.api.gpunode",
    "GPUSKU_KIND": "gryvia_operator.api.gpusku",
    "GROUP": "gryvia_operator.api.base",
    "GryviaAIJob": "gryvia_operator.api.aijob",
    "GryviaAIJobSpec": "gryvia_operator.api.aijob",
    "GryviaAIJobStatus": "gryvia_operator.api.aijob",
    "GryviaBudget": "gryvia_operator.api.budget",
    "GryviaGpuNode": "gryvia_operator.api.gpunode",
    "GryviaGpuSku": "gryvia_operator.api.gpusku",
    "GryviaInvoice": "gryvia_operator.api.invoice",
    "GryviaJobHook": "gryvia_operator.api.jobhook",
    "GryviaLedgerEntry": "gryvia_operator.api.ledger",
    "INVOICE_KIND": "gryvia_operator.api.invoice",
    "LEDGER_ENTRY_KIND": "gryvia_operator.api.ledger",
    "GryviaPriority": "gryvia_operator.api.priority",
    "GryviaQuota": "gryvia_operator.api.quota",
    "GryviaReservation": "gryvia_operator.api.reservation",
    "GryviaTenant": "gryvia_operator.api.tenant",
    "GryviaUsageRecord": "gryvia_operator.api.usagerecord",
    "JOBHOOK_KIND": "gryvia_operator.api.jobhook",
    "JobPhase": "gryvia_operator.api.helpers",
    "KindInfo": "gryvia_operator.api.base",
    "MAX_TOTAL_GPUS": "gryvia_operator.api.helpers",
    "ObjectMeta": "gryvia_operator.api.base",
    "PENDING_PHASES": "gryvia_operator.api.helpers",
    "PRIORITY_KIND": "gryvia_operator.api.priority",
    "QUOTA_KIND": "gryvia_operator.api.quota",
    "RESERVATION_KIND": "gryvia_operator.api.reservation",
    "TENANT_KIND": "gryvia_operator.api.tenant",
    "TERMINAL_PHASES": "gryvia_operator.api.helpers",
    "USAGE_RECORD_KIND": "gryvia_operator.api.usagerecord",
    "VERSION": "gryvia_operator.api.base",
    "ValidationResult": "gryvia_operator.api.validation",
    "format_duration": "gryvia_operator.api.helpers",
    "inventory_warnings": "gryvia_operator.api.validation",
    "kind_info": "gryvia_operator.api.registry",
    "normalize_gpu_type": "gryvia_operator.api.gputype",
    "parse_duration": "gryvia_operator.api.helpers",
    "parse_object": "gryvia_operator.api.registry",
    "validate_job": "gryvia_operator.api.validation",
    "validate_object": "gryvia_operator.api.validation",
}
"""Where each exported name lives."""


def __getattr__(name: str) -> Any:
    """Import the module that defines `name` on first access."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])


__all__ = [
    "ACTIVE_PHASES",
    "AIJOB_KIND",
    "ALL_KINDS",
    "API_VERSION",
    "BUDGET_KIND",
    "GPUNODE_KIND",
    "GPUSKU_KIND",
    "GROUP",
    "INVOICE_KIND",
    "JOBHOOK_KIND",
    "LEDGER_ENTRY_KIND",
    "MAX_TOTAL_GPUS",
    "PENDING_PHASES",
    "PRIORITY_KIND",
    "QUOTA_KIND",
    "RESERVATION_KIND",
    "TENANT_KIND",
    "TERMINAL_PHASES",
    "USAGE_RECORD_KIND",
    "VERSION",
    "Condition",
    "DistributedSpec",
    "DurationError",
    "ElasticSpec",
    "FieldError",
    "GryviaAIJob",
    "GryviaAIJobSpec",
    "GryviaAIJobStatus",
    "GryviaBudget",
    "GryviaGpuNode",
    "GryviaGpuSku",
    "GryviaInvoice",
    "GryviaJobHook",
    "GryviaLedgerEntry",
    "GryviaPriority",
    "GryviaQuota",
    "GryviaReservation",
    "GryviaTenant",
    "GryviaUsageRecord",
    "JobPhase",
    "KindInfo",
    "ObjectMeta",
    "ValidationResult",
    "format_duration",
    "inventory_warnings",
    "kind_info",
    "normalize_gpu_type",
    "parse_duration",
    "parse_object",
    "validate_job",
    "validate_object",
]
