"""A real dynamic volume provisioner in a sandbox (`gryvia sandbox up --storage`).

Rancher's local-path-provisioner (v0.0.30, built from the Go module proxy by `make
storage-bin`) runs as a process of the sandbox, as its other controllers do, with the sandbox's
admin kubeconfig. It serves the StorageClass `local-path` (`rancher.io/local-path`,
`WaitForFirstConsumer`, reclaim `Delete`; not the default class, so claims without a class
stay as they were). For a claim of the class, once the scheduler picked a node for its first
pod, it runs a helper pod on that node that creates the claim's folder, then creates a
hostPath PersistentVolume of that folder and binds it; when the claim goes, a second helper
pod removes the folder. The sandbox's pod runner runs helper pods as it runs every pod, as
local processes: their command is the setup or teardown script written here (the upstream
manifest's scripts, as files: `setupCommand`/`teardownCommand` in the provisioner's
configuration, since the runner does not mount the ConfigMap the upstream helper reads them
from), and `VOL_DIR` is an absolute path on this host, so `mkdir` and `rm -rf` act on the
folder the PersistentVolume names. Folders live in `<workdir>/storage/volumes/`.

`cluster_objects`, `provisioner_config` and `helper_pod` are pure; `start` does the I/O.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from gryvia_cli.sandbox import binaries
from gryvia_cli.sandbox.bootstrap import kubectl
from gryvia_cli.sandbox.sandboxes import Progress, Sandbox, SandboxError

PROVISIONER = "local-path-provisioner"
"""The executable in the binary cache and the sandbox component's name (its pid and log)."""
PROVISIONER_NAME = "rancher.io/local-path"
"""The `provisioner` of the StorageClass, as upstream names it."""
STORAGE_CLASS = "local-path"
NAMESPACE = "local-path-storage"
"""Where the helper pods run (upstream's namespace)."""
SERVICE_ACCOUNT = "local-path-provisioner-service-account"
FOLDER = "storage"
"""The sandbox's storage folder under its workdir: configuration, scripts, `volumes/`."""

SETUP_SCRIPT = '#!/bin/sh\nset -eu\nmkdir -m 0777 -p "$VOL_DIR"\n'
"""Upstream's `setup` script (deploy/local-path-storage.yaml, v0.0.30)."""
TEARDOWN_SCRIPT = '#!/bin/sh\nset -eu\nrm -rf "$VOL_DIR"\n'
"""Upstream's `teardown` script (deploy/local-path-storage.yaml, v0.0.30)."""


def binary() -> Path:
    """Where the provisioner is built (it may not be there yet)."""
    return binaries.bin_dir() / PROVISIONER


def missing() -> str:
    """Why the provisioner cannot run here ('' when it can)."""
    if not os.access(binary(), os.X_OK):
        return f"{PROVISIONER} is not built: run 'make storage-bin' (about a minute, once)"
    return ""


def folder(box: Sandbox) -> Path:
    """The sandbox's storage folder (configuration, scripts and `volumes/`)."""
    return box.workdir / FOLDER


def volumes_dir(box: Sandbox) -> Path:
    """Where the provisioner creates the claims' folders, one `pvc-<uid>_<ns>_<claim>` each."""
    return folder(box) / "volumes"


def cluster_objects() -> list[dict[str, Any]]:
    """The Namespace, ServiceAccount (the helper pods run as it) and StorageClass the
    provisioner needs, as upstream's manifest has them (the class not marked default)."""
    return [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}},
        {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": {"name": SERVICE_ACCOUNT, "namespace": NAMESPACE},
        },
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "StorageClass",
            "metadata": {"name": STORAGE_CLASS},
            "provisioner": PROVISIONER_NAME,
            "volumeBindingMode": "WaitForFirstConsumer",
            "reclaimPolicy": "Delete",
        },
    ]


def provisioner_config(volumes: Path, setup: Path, teardown: Path) -> dict[str, Any]:
    """The provisioner's `config.json`: claims under `volumes`, created and removed by the
    executables `setup` and `teardown` (run as the helper pods' command with
    `-p PATH -s BYTES -m MODE -a create|delete` and env VOL_DIR, VOL_MODE, VOL_SIZE_BYTES).

    `sharedFileSystemPath`, not a per-node path map: every sandbox node is this one host, so a
    folder is reachable from every node, which is what upstream's shared-file-system mode
    describes. Its volumes have no node affinity and may be ReadWriteMany or ReadOnlyMany
    (the node-path mode allows ReadWriteOnce only), as the NFS backends of a real cluster."""
    return {
        "sharedFileSystemPath": str(volumes),
        "setupCommand": str(setup),
        "teardownCommand": str(teardown),
    }


def helper_pod() -> dict[str, Any]:
    """The helper pod template (upstream's `helperPod.yaml` without its priority class; the
    image is not pulled here, the command is the setup or teardown script)."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "helper-pod"},
        "spec": {
            "containers": [
                {"name": "helper-pod", "image": "busybox", "imagePullPolicy": "IfNotPresent"}
            ]
        },
    }


def write_files(box: Sandbox) -> tuple[Path, Path]:
    """Write the scripts, configuration and helper pod template under `folder(box)`; return
    (config file, helper pod file)."""
    base = folder(box)
    volumes_dir(box).mkdir(parents=True, exist_ok=True)
    setup, teardown = base / "setup", base / "teardown"
    for path, text in ((setup, SETUP_SCRIPT), (teardown, TEARDOWN_SCRIPT)):
        path.write_text(text)
        path.chmod(0o755)
    config = base / "config.json"
    config.write_text(json.dumps(provisioner_config(volumes_dir(box), setup, teardown), indent=2))
    pod = base / "helperPod.yaml"
    pod.write_text(json.dumps(helper_pod(), indent=2))  # JSON is YAML
    return config, pod


def argv(box: Sandbox, config: Path, pod: Path) -> list[str]:
    """The provisioner's command line for `box` (its admin kubeconfig, files from
    `write_files`)."""
    return [
        str(binary()),
        "start",
        "--kubeconfig",
        str(box.kubeconfig),
        "--config",
        str(config),
        "--helper-pod-file",
        str(pod),
        "--namespace",
        NAMESPACE,
        "--service-account-name",
        SERVICE_ACCOUNT,
        "--provisioner-name",
        PROVISIONER_NAME,
    ]


def running(box: Sandbox) -> bool:
    """True while `box`'s provisioner process runs."""
    return bool(box.alive().get(PROVISIONER))


READY_LINE = b"Started provisioner controller"
"""What the provisioner logs once its informers synced (sig-storage-lib-external-provisioner
v10's controller; from then on it provisions)."""


def start(box: Sandbox, progress: Progress, timeout: float = 30.0) -> None:
    """Create the provisioner's objects in `box`, start it (no-op when it runs already) and
    wait until it says it serves. Raises SandboxError when it is not built, exits, or is not
    serving within `timeout` seconds (its log: `<workdir>/logs/local-path-provisioner.log`)."""
    if running(box):
        return
    if why := missing():
        raise SandboxError(why)
    progress(
        f"starting {PROVISIONER} (StorageClass {STORAGE_CLASS}, folders in {volumes_dir(box)})"
    )
    kubectl(
        box,
        "apply",
        "-f",
        "-",
        stdin=json.dumps({"apiVersion": "v1", "kind": "List", "items": cluster_objects()}),
    )
    config, pod = write_files(box)
    log = box.workdir / "logs" / f"{PROVISIONER}.log"
    seen = log.stat().st_size if log.exists() else 0  # a restart appends to the same log
    proc = box.start(PROVISIONER, argv(box, config, pod))
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SandboxError(f"{PROVISIONER} exited with {proc.returncode}: see {log}")
        if READY_LINE in log.read_bytes()[seen:]:
            return
        time.sleep(0.1)
    raise SandboxError(f"{PROVISIONER} did not start serving within {timeout:.0f}s: see {log}")
