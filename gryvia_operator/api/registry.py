"""The list of every Gryvia kind, and lookups by kind name, plural or short name."""

from __future__ import annotations

from typing import Any

from gryvia_operator.api.aijob import AIJOB_KIND
from gryvia_operator.api.autotuner import AUTOTUNER_KIND
from gryvia_operator.api.base import GryviaResource, KindInfo
from gryvia_operator.api.budget import BUDGET_KIND
from gryvia_operator.api.chargeback import CHARGEBACK_KIND
from gryvia_operator.api.checkpointguard import CHECKPOINT_GUARD_KIND
from gryvia_operator.api.dataset import DATASET_KIND
from gryvia_operator.api.gpunode import GPUNODE_KIND
from gryvia_operator.api.gpusharing import GPU_SHARING_KIND
from gryvia_operator.api.gpusku import GPUSKU_KIND
from gryvia_operator.api.idlepolicy import IDLE_POLICY_KIND
from gryvia_operator.api.inference import INFERENCE_SERVICE_KIND
from gryvia_operator.api.invoice import INVOICE_KIND
from gryvia_operator.api.jobhook import JOBHOOK_KIND
from gryvia_operator.api.jobrecord import JOB_RECORD_KIND
from gryvia_operator.api.ledger import LEDGER_ENTRY_KIND
from gryvia_operator.api.modelregistry import MODEL_REGISTRY_KIND
from gryvia_operator.api.priority import PRIORITY_KIND
from gryvia_operator.api.quota import QUOTA_KIND
from gryvia_operator.api.reservation import RESERVATION_KIND
from gryvia_operator.api.storage import STORAGE_KIND
from gryvia_operator.api.tenant import TENANT_KIND
from gryvia_operator.api.usagerecord import USAGE_RECORD_KIND
from gryvia_operator.api.workflow import WORKFLOW_KIND
from gryvia_operator.api.workspace import WORKSPACE_KIND

ALL_KINDS: tuple[KindInfo, ...] = (
    AIJOB_KIND,
    GPUNODE_KIND,
    GPUSKU_KIND,
    TENANT_KIND,
    QUOTA_KIND,
    USAGE_RECORD_KIND,
    RESERVATION_KIND,
    BUDGET_KIND,
    JOBHOOK_KIND,
    LEDGER_ENTRY_KIND,
    INVOICE_KIND,
    PRIORITY_KIND,
    CHECKPOINT_GUARD_KIND,
    GPU_SHARING_KIND,
    WORKFLOW_KIND,
    AUTOTUNER_KIND,
    WORKSPACE_KIND,
    INFERENCE_SERVICE_KIND,
    MODEL_REGISTRY_KIND,
    IDLE_POLICY_KIND,
    CHARGEBACK_KIND,
    JOB_RECORD_KIND,
    STORAGE_KIND,
    DATASET_KIND,
)
"""Every kind, in the order the CRD reference lists them."""


def kind_info(name: str) -> KindInfo:
    """Find a kind by kind name, plural, singular or short name (case-insensitive).

    Raises KeyError naming the known kinds when nothing matches.
    """
    wanted = name.strip().lower()
    for info in ALL_KINDS:
        if wanted in {info.kind.lower(), info.plural, info.singular, *info.short_names}:
            return info
    known = ", ".join(info.kind for info in ALL_KINDS)
    raise KeyError(f'unknown Gryvia kind "{name}"; known kinds: {known}')


def parse_object(obj: dict[str, Any]) -> GryviaResource:
    """Validate a whole object (`{apiVersion, kind, ...}`) into the model of its kind.

    Raises KeyError for an unknown kind and pydantic.ValidationError for invalid content.
    """
    return kind_info(str(obj.get("kind", ""))).model.model_validate(obj)
