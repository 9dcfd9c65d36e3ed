"""Pydantic models of every Gryvia CRD: the single source of truth."""

from gryvia_operator.api.aijob import (
    AIJOB_KIND,
    DistributedSpec,
    ElasticSpec,
    GryviaAIJob,
    GryviaAIJobSpec,
    GryviaAIJobStatus,
)
from gryvia_operator.api.base import API_VERSION, GROUP, VERSION, Condition, KindInfo, ObjectMeta
from gryvia_operator.api.budget import BUDGET_KIND, GryviaBudget
from gryvia_operator.api.gpunode import GPUNODE_KIND, GryviaGpuNode
from gryvia_operator.api.gpusku import GPUSKU_KIND, GryviaGpuSku
from gryvia_operator.api.helpers import (
    ACTIVE_PHASES,
    MAX_TOTAL_GPUS,
    PENDING_PHASES,
    TERMINAL_PHASES,
    DurationError,
    JobPhase,
    format_duration,
    normalize_gpu_type,
    parse_duration,
)
from gryvia_operator.api.jobhook import JOBHOOK_KIND, GryviaJobHook
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

__all__ = [
    "ACTIVE_PHASES",
    "AIJOB_KIND",
    "ALL_KINDS",
    "API_VERSION",
    "BUDGET_KIND",
    "GPUNODE_KIND",
    "GPUSKU_KIND",
    "GROUP",
    "JOBHOOK_KIND",
    "MAX_TOTAL_GPUS",
    "PENDING_PHASES",
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
    "GryviaJobHook",
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
