"""Reading a job pod's trainer log: the checkpoint guard reads it for checkpoint lines, the
tuner for its trials' metric lines."""

from __future__ import annotations

from gryvia_operator.api.names import CONTAINER_NAME
from gryvia_operator.controller.kubeapi import KubeError
from gryvia_operator.controller.runtime import Runtime

LOG_TAIL_LINES = 2000
"""Lines of each pod's log read (commit lines, metric lines)."""


async def trainer_log(rt: Runtime, namespace: str, pod: str) -> str | None:
    """The last `LOG_TAIL_LINES` lines of pod `namespace/pod`'s trainer container, or None when
    it has no log (gone, or never started)."""
    try:
        return await rt.api.pod_log(
            pod, namespace, container=CONTAINER_NAME, tail_lines=LOG_TAIL_LINES
        )
    except KubeError:
        return None
