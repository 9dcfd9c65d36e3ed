"""The pod runner's calls to the API server, as a kubelet makes them: pod status patches,
final pod deletion, ConfigMap/Secret reads for env, and kwok `Logs`, `Exec` and `PortForward`
objects for `kubectl logs`, `exec` and `port-forward`.

API errors are logged, never raised: the runner reports what it can and carries on.
"""

from __future__ import annotations

import base64
import contextlib
import logging
from pathlib import Path
from typing import Any

from kubernetes import client
from kubernetes.client.exceptions import ApiException

from gryvia_cli.sandbox import podstatus
from gryvia_cli.sandbox.podstatus import KWOK_GROUP, KWOK_VERSION

log = logging.getLogger("gryvia.sandbox.runner")


class PodApi:
    """The few API calls the runner makes, through one `kubernetes.client.ApiClient`."""

    def __init__(self, api: client.ApiClient) -> None:
        self.core = client.CoreV1Api(api)
        self.custom = client.CustomObjectsApi(api)

    def patch_status(self, pod: dict[str, Any], status: dict[str, Any]) -> None:
        """Patch the pod's status (a pod deleted meanwhile is ignored)."""
        meta = pod["metadata"]
        try:
            self.core.patch_namespaced_pod_status(
                meta["name"], meta["namespace"], {"status": status}
            )
        except ApiException as exc:
            if exc.status != 404:
                log.warning("status of %s/%s: %s", meta["namespace"], meta["name"], exc.reason)

    def delete_now(self, pod: dict[str, Any]) -> None:
        """Finish the pod's deletion (grace 0, this very uid), as the kubelet does once its
        containers are gone."""
        meta = pod["metadata"]
        with contextlib.suppress(ApiException):
            self.core.delete_namespaced_pod(
                meta["name"],
                meta["namespace"],
                grace_period_seconds=0,
                body=client.V1DeleteOptions(
                    grace_period_seconds=0, preconditions=client.V1Preconditions(uid=meta["uid"])
                ),
            )

    def lookup(self, kind: str, namespace: str, name: str, key: str | None) -> Any:
        """Return key `key` of ConfigMap or Secret (`kind`) `namespace/name`, its whole data
        when `key` is None, or None when missing (Secret values decoded)."""
        try:
            if kind == "ConfigMap":
                data = self.core.read_namespaced_config_map(name, namespace).data or {}
            else:
                raw = self.core.read_namespaced_secret(name, namespace).data or {}
                data = {k: base64.b64decode(v).decode() for k, v in raw.items()}
        except ApiException:
            return None
        return data if key is None else data.get(key)

    def claim_folder(self, namespace: str, claim: str) -> str | None:
        """The host folder of the PersistentVolume bound to claim `namespace/claim` when it is
        a hostPath volume; None when unbound, missing, of another type, or unreadable."""
        try:
            pvc = self.core.read_namespaced_persistent_volume_claim(claim, namespace)
            volume = pvc.spec.volume_name if pvc.spec else None
            if not volume:
                return None
            pv = self.core.read_persistent_volume(volume)
        except ApiException:
            return None
        host = pv.spec.host_path if pv.spec else None
        return str(host.path) if host is not None and host.path else None

    def create_logs(self, pod: dict[str, Any], logs_dir: Path) -> None:
        """Create empty log files for the pod's containers and the kwok Logs object serving
        them (replacing one left by an earlier pod of the same name)."""
        for n in podstatus.container_names(pod):
            logs_dir.mkdir(parents=True, exist_ok=True)
            (logs_dir / f"{n}.log").touch()
        self.put_kwok_object("logs", podstatus.build_logs_object(pod, logs_dir))

    def put_kwok_object(self, plural: str, body: dict[str, Any]) -> None:
        """Create the namespaced kwok object `body` (`plural`: logs, execs, portforwards),
        replacing one of the same name (left by an earlier pod of that name, or this pod's
        previous version). A pod deleted meanwhile is ignored; other errors are logged."""
        meta = body["metadata"]
        ns, name = meta["namespace"], meta["name"]
        try:
            try:
                self.custom.create_namespaced_custom_object(
                    KWOK_GROUP, KWOK_VERSION, ns, plural, body
                )
            except ApiException as exc:
                if exc.status != 409:
                    raise
                self.custom.delete_namespaced_custom_object(
                    KWOK_GROUP, KWOK_VERSION, ns, plural, name
                )
                self.custom.create_namespaced_custom_object(
                    KWOK_GROUP, KWOK_VERSION, ns, plural, body
                )
        except ApiException as exc:
            log.warning("%s of %s/%s: %s", plural, ns, name, exc.reason)

    def patch_kwok_spec(self, plural: str, body: dict[str, Any]) -> None:
        """Replace the spec of the existing kwok object `body` in place (a merge patch, so
        kwok never sees it missing), creating it when it is gone. Errors are logged."""
        meta = body["metadata"]
        ns, name = meta["namespace"], meta["name"]
        try:
            self.custom.patch_namespaced_custom_object(
                KWOK_GROUP, KWOK_VERSION, ns, plural, name, {"spec": body["spec"]}
            )
        except ApiException as exc:
            if exc.status == 404:
                self.put_kwok_object(plural, body)
            else:
                log.warning("%s of %s/%s: %s", plural, ns, name, exc.reason)
