"""Job-array throttle (Slurm `%N`): un-suspend the next elements of an array as others finish.

The rule is `gryvia_operator.api.arrays.plan_release`; this handler only lists the array's
elements from the job index and patches `spec.suspend: false` on the ones it returns.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Mapping
from typing import Any

import kopf

from gryvia_operator.api.arrays import (
    element_from_job,
    max_parallel_of,
    plan_release,
)
from gryvia_operator.api.names import LABEL_ARRAY_NAME
from gryvia_operator.controller.kubeapi import KubeError
from gryvia_operator.controller.runtime import Runtime
from gryvia_operator.controller.store import AIJOBS

log = logging.getLogger("gryvia.operator.arrays")


async def release(rt: Runtime, namespace: str, array: str, max_parallel: int | None) -> list[str]:
    """Un-suspend what the throttle allows for one array now; return the released names."""
    elements = []
    for body in rt.indices.all_values(AIJOBS):
        meta = body.get("metadata") or {}
        if (
            meta.get("namespace") == namespace
            and (meta.get("labels") or {}).get(LABEL_ARRAY_NAME) == array
        ):
            elements.append(element_from_job(body))
    names = plan_release(elements, max_parallel)
    for name in names:
        try:
            await rt.api.patch("GryviaAIJob", name, {"spec": {"suspend": False}}, namespace)
        except KubeError as exc:
            log.warning("array %s/%s: releasing %s: %s", namespace, array, name, exc)
    if names:
        log.info("array %s/%s: released %s", namespace, array, ", ".join(names))
    return names


async def release_all(rt: Runtime) -> None:
    """Re-plan every array the job index holds (once this replica starts reconciling: the
    events of the jobs' first list came before it could)."""
    arrays: dict[tuple[str, str], Mapping[str, Any]] = {}
    for body in rt.indices.all_values(AIJOBS):
        meta = body.get("metadata") or {}
        array = (meta.get("labels") or {}).get(LABEL_ARRAY_NAME)
        if array:
            arrays.setdefault((str(meta.get("namespace") or ""), str(array)), body)
    for (namespace, array), body in arrays.items():
        await release(rt, namespace, array, max_parallel_of(body))


def register(registry: kopf.OperatorRegistry, rt: Runtime) -> None:
    """Re-plan an array whenever one of its elements changes (on the replica that
    reconciles; a standby's listener does nothing)."""
    del registry  # the jobs' informer, not kopf: kept for the handler modules' one signature

    def array_event(type: str, body: Mapping[str, Any]) -> Awaitable[Any] | None:
        """An element changed or went away: the array may run another one now."""
        meta = body.get("metadata") or {}
        array = (meta.get("labels") or {}).get(LABEL_ARRAY_NAME, "")
        if not array or not rt.acting:
            return None
        return release(rt, str(meta.get("namespace") or ""), array, max_parallel_of(body))

    rt.job_informer().add_listener("arrays", array_event)
