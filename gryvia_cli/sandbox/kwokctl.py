"""kwokctl, the driver of the sandbox's control plane: its configuration and its invocation.

Every binary kwokctl runs is a local path, so nothing is downloaded (`kwokctl --dry-run`
shows it).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from gryvia_cli.sandbox import binaries
from gryvia_cli.sandbox.sandboxes import Sandbox, SandboxError, home


def kwokctl_config(
    bin_dir: Path,
    ports: Mapping[str, int],
    patches: list[dict[str, Any]] | None = None,
    extra: Mapping[str, Any] | None = None,
) -> str:
    """Return kwokctl's configuration: local binaries, secure port, admission and RBAC on,
    kwok's Logs, Exec and PortForward CRDs, an audit log of creates and deletes of Gryvia objects
    (`data/audit-policy.yaml`), and the node Stages (pods are left to the pod runner).
    `patches` are kwokctl `componentsPatches` (e.g. the API server's OIDC trust, `oidc`),
    merged with APISERVER_PATCH. `ports` sets component ports by option name
    (`ports.component_ports`); a component left out gets kwokctl's pick. `extra` are
    more kwokctl options (the real node's, `realnode.options`)."""
    options: dict[str, Any] = {
        "runtime": "binary",
        "bindAddress": "127.0.0.1",
        "securePort": True,
        "kubeAdmission": True,
        "kubeAuthorization": True,
        "enableCRDs": ["Logs", "ClusterLogs", "Exec", "PortForward"],
        "kubeApiserverBinary": str(bin_dir / "kube-apiserver"),
        "kubeControllerManagerBinary": str(bin_dir / "kube-controller-manager"),
        "kubeSchedulerBinary": str(bin_dir / "kube-scheduler"),
        "kubectlBinary": str(bin_dir / "kubectl"),
        "etcdBinary": str(bin_dir / "etcd"),
        "kwokControllerBinary": str(bin_dir / "kwok"),
        "kubeAuditPolicy": str(_data_file("audit-policy.yaml")),
    }
    options.update(ports)
    options.update(extra or {})
    doc: dict[str, Any] = {
        "apiVersion": "config.kwok.x-k8s.io/v1alpha1",
        "kind": "KwokctlConfiguration",
        "options": options,
    }
    doc["componentsPatches"] = merge_patches([APISERVER_PATCH, *(patches or [])])
    head = yaml.safe_dump(doc, sort_keys=False)
    stages = _data_file("node-stages.yaml").read_text()
    return head + "---\n" + stages


APISERVER_PATCH: dict[str, Any] = {
    "name": "kube-apiserver",
    "extraArgs": [{"key": "enable-aggregator-routing", "value": "true"}],
}
"""Always given: the API server calls webhooks (and aggregated APIs) at an endpoint of their
Service, not its cluster IP (the sandbox has no kube-proxy), so a chart-managed webhook Service
with an EndpointSlice to the host (`webhook.externalAddress`) is reachable."""


def merge_patches(patches: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """kwokctl `componentsPatches` with one entry per component: the `extraArgs` (and other
    lists) of entries naming the same component are concatenated, in order."""
    merged: dict[str, dict[str, Any]] = {}
    for patch in patches:
        into = merged.setdefault(patch["name"], {"name": patch["name"]})
        for key, value in patch.items():
            if key != "name":
                into[key] = [*into.get(key, []), *value]
    return list(merged.values())


def _data_file(name: str) -> Path:
    """A file of the package's `data/` folder, as a path on disk (kwokctl reads it)."""
    return Path(str(resources.files("gryvia_cli.sandbox").joinpath("data", name)))


def config_file(name: str) -> Path:
    """Where `up` writes kwokctl's configuration for sandbox `name` while it starts."""
    return home() / f".{name}-kwokctl.yaml"


def run_kwokctl(
    box: Sandbox, *args: str, config: Path | None = None, check: bool = True
) -> subprocess.CompletedProcess[str]:
    """Run `kwokctl [--config FILE] ARGS --name <box>` with the sandbox home as its workdir.

    Raises SandboxError with the tail of kwokctl's stderr when it fails and `check` is set.
    """
    cmd = [str(binaries.path_of("kwokctl"))]
    if config is not None:
        cmd += ["--config", str(config)]
    cmd += [*args, "--name", box.name]
    env = control_plane_env() | {"KWOK_WORKDIR": str(home())}
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    if check and proc.returncode != 0:
        tail = "\n".join(proc.stderr.strip().splitlines()[-5:])
        raise SandboxError(f"kwokctl {args[0]} {args[1]} failed:\n{tail}")
    return proc


# What kwokctl and the processes it starts (kube-apiserver, kwok-controller, ...) keep of the
# environment of the shell that ran `sandbox up`. kwok-controller runs `exec` into a pod with
# its own environment plus the container's, so anything else (a venv's PS1, KUBECONFIG, cloud
# credentials, proxy settings) would show up inside every pod's shell.
_KEPT_ENV = ("PATH", "HOME", "LANG", "LC_ALL", "TZ", "TMPDIR")


def control_plane_env() -> dict[str, str]:
    """The environment kwokctl runs with: PATH, HOME, locale, TZ, TMPDIR and KWOK_* settings
    from ours, nothing else (so pod exec sessions do not inherit the user's shell)."""
    return {k: v for k, v in os.environ.items() if k in _KEPT_ENV or k.startswith("KWOK_")}


def dry_run_commands(name: str) -> str:
    """Return the commands kwokctl would run for sandbox `name` (`kwokctl --dry-run`)."""
    box = Sandbox(name)
    config_path = config_file(name)
    config_path.parent.mkdir(parents=True, exist_ok=True)
    config_path.write_text(kwokctl_config(binaries.bin_dir(), {}))
    try:
        return run_kwokctl(
            box, "create", "cluster", "--dry-run", "--kubeconfig", os.devnull, config=config_path
        ).stdout
    finally:
        config_path.unlink(missing_ok=True)
