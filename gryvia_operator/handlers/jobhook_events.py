"""The kopf wiring of job hooks: the GryviaJobHook watch keeps the controller's copies of the
hooks (`JobHooks.hooks`), and any hook or job change runs a delivery pass
(`handlers/jobhook.py`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import kopf

from gryvia_operator.api import GROUP, VERSION
from gryvia_operator.controller.runtime import Runtime
from gryvia_operator.handlers.jobhook import PLURAL, JobHooks


def register(registry: kopf.OperatorRegistry, rt: Runtime, hooks: JobHooks) -> None:
    """Keep the hooks seen by the watch, and run a pass when a hook or a job changes."""

    @kopf.on.event(GROUP, VERSION, PLURAL, id="gryvia_jobhook_events", registry=registry)
    async def jobhook_event(
        type: str, body: kopf.Body, namespace: str | None, name: str, **_: Any
    ) -> None:
        key = (namespace or "", name)
        if type == "DELETED":
            hooks.hooks.pop(key, None)
            hooks.checked.pop(key, None)
            hooks.resumed.pop(key, None)
            hooks.gone.add(str((body.get("metadata") or {}).get("uid")))
            return
        meta = body.get("metadata") or {}
        hooks.hooks[key] = {
            "apiVersion": body.get("apiVersion"),
            "kind": body.get("kind"),
            "metadata": {
                k: meta.get(k)
                for k in ("name", "namespace", "uid", "generation", "creationTimestamp")
            },
            "spec": dict(body.get("spec") or {}),
            "status": dict(body.get("status") or {}),
        }
        hooks.kick.set()

    def job_event(type: str, body: Mapping[str, Any]) -> None:
        if type == "DELETED":
            hooks.forget_job(str((body.get("metadata") or {}).get("uid")))
        else:
            hooks.kick.set()

    rt.job_informer().add_listener("jobhooks", job_event)
