"""The pod runner's cluster DNS files: one hosts file per namespace with running pods, kept in
step with the pods' addresses and the Services (rendering: `hosts.render_hosts`).

Pods bind-mount their namespace's file over /etc/hosts, so a file is rewritten in place (same
inode), and only when its content changes. Thread-safe.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from gryvia_cli.sandbox import hosts


class HostsFiles:
    """The hosts files under `folder` (`<folder>/<namespace>`), from pods and Services."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._pods: dict[str, hosts.PodAddress] = {}
        self._services: dict[str, hosts.ServiceInfo] = {}
        self._lock = threading.Lock()
        self._dirty = threading.Event()
        folder.mkdir(parents=True, exist_ok=True)

    def path(self, namespace: str) -> Path:
        """The hosts file of `namespace` (what its pods mount as /etc/hosts)."""
        return self.folder / namespace

    def add_pod(self, uid: str, address: hosts.PodAddress) -> None:
        """A pod got its address: write its namespace's file now (before it starts)."""
        with self._lock:
            self._pods[uid] = address
        self.write()

    def drop_pod(self, uid: str) -> None:
        """A pod lost its address (stopped or deleted); the files follow within a second."""
        with self._lock:
            self._pods.pop(uid, None)
        self._dirty.set()

    def on_service(self, kind: str, svc: dict[str, Any]) -> None:
        """Track one Service watch event (ADDED, MODIFIED, DELETED)."""
        meta = svc["metadata"]
        key = f"{meta['namespace']}/{meta['name']}"
        with self._lock:
            if kind == "DELETED":
                self._services.pop(key, None)
            else:
                selector = (svc.get("spec") or {}).get("selector") or {}
                self._services[key] = hosts.ServiceInfo(meta["namespace"], meta["name"], selector)
        self._dirty.set()

    def loop(self, stop: threading.Event) -> None:
        """Rewrite the files after changes until `stop` is set (run on its own thread)."""
        while not stop.is_set():
            if self._dirty.wait(1.0):
                self._dirty.clear()
                self.write()

    def write(self) -> None:
        """Write one hosts file per namespace with pods: names relative to that namespace
        resolve there, as a pod's DNS search path (`<ns>.svc.cluster.local`) makes them."""
        with self._lock:
            pods = list(self._pods.values())
            services = list(self._services.values())
        for namespace in sorted({p.namespace for p in pods}):
            data = hosts.render_hosts(pods, services, namespace=namespace).encode()
            path = self.path(namespace)
            path.touch()
            # Rewrite in place: pods bind-mount this very inode as their /etc/hosts.
            with path.open("r+b") as fh:
                if fh.read() != data:
                    fh.seek(0)
                    fh.write(data)
                    fh.truncate()
