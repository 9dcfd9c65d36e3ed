"""Configuration of the sandbox's real node (`realnode`): the kubelet's, containerd's, the CNI
network's, the registry mirrors', and the pause image as an OCI archive.

Pure: paths and addresses in, file contents out. What each setting is for, and which of them
this machine needs (cgroup v1, no CAP_SYS_RESOURCE), is said beside it; README ("A real node")
has the story.
"""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gryvia_operator.api.names import LABEL_SYSTEM_NODE

NODE_NAME = "system-0"
"""The real node's name (the pod runner leaves its pods to its kubelet)."""
SYSTEM_LABEL = LABEL_SYSTEM_NODE
"""Label and taint key of nodes set aside for Gryvia's own pods (the chart's operator pods
tolerate the taint and prefer the label)."""
SIMULATED_PODS = f"spec.nodeName!=,spec.nodeName!={NODE_NAME}"
"""The field selector of the pods the pod runner runs: scheduled, and not on the real node
(its kubelet runs those)."""
PAUSE_IMAGE = "localhost/gryvia/pause:3.10"
"""The pod sandbox image: Kubernetes' own pause.c, built by `make node-bin`, imported into
containerd (never pulled)."""
MIRRORED = ("ghcr.io", "registry.k8s.io", "docker.io")
"""Registries whose images the sandbox's registry serves (so the chart's default image,
`ghcr.io/gryvia/gryvia-operator`, pulls from it as the FAQ's command line leaves it)."""


@dataclass(frozen=True)
class NodePaths:
    """Where the real node keeps its files, all under one folder of the sandbox."""

    root: Path

    @property
    def etc(self) -> Path:
        """Configuration files."""
        return self.root / "etc"

    @property
    def run(self) -> Path:
        """Sockets and runtime state (containerd's and runc's)."""
        return self.root / "run"

    @property
    def var(self) -> Path:
        """Persistent state: containerd's images and snapshots, the kubelet's root, IPAM."""
        return self.root / "var"

    @property
    def socket(self) -> Path:
        """containerd's CRI socket."""
        return self.run / "containerd.sock"

    @property
    def pki(self) -> Path:
        """The kubelet's client certificate and key."""
        return self.root / "pki"


def kubelet_config(paths: NodePaths, ca_file: Path, port: int, healthz_port: int) -> dict[str, Any]:
    """The KubeletConfiguration (kubelet.config.k8s.io/v1beta1) of the real node.

    `failCgroupV1: false`: Kubernetes 1.35+ refuses cgroup v1 hosts unless told (this machine
    mounts v1 controllers); `cgroupfs` is the driver without systemd. The node registers
    tainted `SYSTEM_LABEL=true:NoSchedule`, so only pods that tolerate it (the chart's operator)
    land on it. Ports are the sandbox's own (`port`, `healthz_port`), so the kubelet never
    takes 10250 from anything else; the read-only port is off."""
    return {
        "apiVersion": "kubelet.config.k8s.io/v1beta1",
        "kind": "KubeletConfiguration",
        "failCgroupV1": False,
        "cgroupDriver": "cgroupfs",
        "failSwapOn": False,
        "containerRuntimeEndpoint": f"unix://{paths.socket}",
        "port": port,
        "readOnlyPort": 0,
        "healthzBindAddress": "127.0.0.1",
        "healthzPort": healthz_port,
        "authentication": {
            "anonymous": {"enabled": False},
            "webhook": {"enabled": True},
            "x509": {"clientCAFile": str(ca_file)},
        },
        "authorization": {"mode": "Webhook"},
        "registerWithTaints": [{"key": SYSTEM_LABEL, "value": "true", "effect": "NoSchedule"}],
        "resolvConf": "",
        "enforceNodeAllocatable": [],
        "evictionHard": {},
        "imageGCHighThresholdPercent": 100,
        "imageGCLowThresholdPercent": 99,
        "localStorageCapacityIsolation": False,
        "maxPods": 20,
        "podPidsLimit": 4096,
        "makeIPTablesUtilChains": False,
        "podLogsDir": str(paths.var / "log" / "pods"),
    }


def scheduler_config() -> dict[str, Any]:
    """The sandbox scheduler's KubeSchedulerConfiguration with a real node: the default
    profile, with the NodeAffinity score plugin weighted 10 (default 2). The chart's operator
    pods prefer `SYSTEM_LABEL` nodes and, with two replicas, different nodes; at equal weights
    spreading ties with the preference and the second replica may land on a simulated node,
    which cannot run an image. Jobs' preferred placement terms (`reconcile.placement`) weigh
    more too, which only sharpens the preferences they state; no placement test runs with a
    real node."""
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [
            {
                "schedulerName": "default-scheduler",
                "plugins": {"score": {"enabled": [{"name": "NodeAffinity", "weight": 10}]}},
            }
        ],
    }


def containerd_config(paths: NodePaths, runc: Path, cni_bin: Path) -> str:
    """containerd 2.x's config.toml (version 3) for the real node: its own root, state and
    sockets; the CRI plugin with runc (`runc` binary) and the CNI config in `etc/cni`; the
    pause image pinned; registry hosts from `etc/certs.d` (`hosts_toml`).

    `restrict_oom_score_adj`: this machine's root lacks CAP_SYS_RESOURCE, and runc fails to
    start the pause container ("failed to update /proc/self/oom_score_adj: Permission
    denied") when asked to lower its score."""
    etc, run = paths.etc, paths.run
    return f"""version = 3
root = "{paths.var / "containerd"}"
state = "{run / "containerd"}"

[grpc]
  address = "{paths.socket}"

[ttrpc]
  address = "{paths.socket}.ttrpc"

[plugins]
  [plugins.'io.containerd.cri.v1.images']
    snapshotter = "overlayfs"
    [plugins.'io.containerd.cri.v1.images'.pinned_images]
      sandbox = "{PAUSE_IMAGE}"
    [plugins.'io.containerd.cri.v1.images'.registry]
      config_path = "{etc / "certs.d"}"
  [plugins.'io.containerd.cri.v1.runtime']
    enable_selinux = false
    disable_apparmor = true
    restrict_oom_score_adj = true
    netns_mounts_under_state_dir = true
    [plugins.'io.containerd.cri.v1.runtime'.cni]
      bin_dirs = ["{cni_bin}"]
      conf_dir = "{etc / "cni"}"
    [plugins.'io.containerd.cri.v1.runtime'.containerd]
      default_runtime_name = "runc"
      [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]
        runtime_type = "io.containerd.runc.v2"
        [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
          BinaryName = "{runc}"
          Root = "{run / "runc"}"
          SystemdCgroup = false
  [plugins.'io.containerd.grpc.v1.cri']
    disable_tcp_service = true
    stream_server_address = "127.0.0.1"
    stream_server_port = "0"
"""


def hosts_toml(registry: str, mirror: str) -> str:
    """containerd's `certs.d/<registry>/hosts.toml`: pull and resolve `registry`'s images
    from `mirror` (`host:port`, plain HTTP: the sandbox's registry on loopback) first."""
    return (
        f'server = "https://{registry}"\n\n'
        f'[host."http://{mirror}"]\n'
        '  capabilities = ["pull", "resolve"]\n'
    )


def cni_config(bridge: str, subnet: str, gateway: str, ipam_dir: Path) -> dict[str, Any]:
    """The CNI network (conflist) of the real node's pods: the `bridge` plugin on the
    sandbox's own `bridge` (the node's gateway address `gateway`), host-local addresses from
    `subnet`, and loopback. No masquerade: pods reach only the host (and the API server
    through the node's DNAT rule), as the simulated pods do."""
    return {
        "cniVersion": "1.0.0",
        "name": "gryvia-real-node",
        "plugins": [
            {
                "type": "bridge",
                "bridge": bridge,
                "isGateway": True,
                "ipMasq": False,
                "hairpinMode": True,
                "ipam": {
                    "type": "host-local",
                    "ranges": [[{"subnet": subnet, "gateway": gateway}]],
                    "routes": [{"dst": "0.0.0.0/0"}],
                    "dataDir": str(ipam_dir),
                },
            },
            {"type": "loopback"},
        ],
    }


def kubelet_kubeconfig(server: str, ca_file: Path, cert: Path, key: Path) -> dict[str, Any]:
    """The kubelet's kubeconfig: the API server at `server`, as `system:node:<NODE_NAME>`
    (a client certificate the sandbox's CA signed)."""
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": "sandbox",
                "cluster": {"server": server, "certificate-authority": str(ca_file)},
            }
        ],
        "users": [
            {"name": NODE_NAME, "user": {"client-certificate": str(cert), "client-key": str(key)}}
        ],
        "contexts": [{"name": NODE_NAME, "context": {"cluster": "sandbox", "user": NODE_NAME}}],
        "current-context": NODE_NAME,
    }


def _digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def pause_image_archive(pause: bytes, name: str = PAUSE_IMAGE) -> bytes:
    """An OCI image layout as a tar (what `ctr images import` reads) holding one image,
    `name`: a single layer with `/pause` (the static binary `pause`, mode 0755), run as
    `/pause`. Shapes: OCI image-spec v1 (index, manifest, config, layer)."""
    layer_buf = io.BytesIO()
    with tarfile.open(fileobj=layer_buf, mode="w", format=tarfile.PAX_FORMAT) as layer_tar:
        entry = tarfile.TarInfo("pause")
        entry.size, entry.mode = len(pause), 0o755
        layer_tar.addfile(entry, io.BytesIO(pause))
    layer = layer_buf.getvalue()
    config = json.dumps(
        {
            "architecture": "amd64",
            "os": "linux",
            "config": {"Entrypoint": ["/pause"], "User": "65535:65535"},
            "rootfs": {"type": "layers", "diff_ids": [_digest(layer)]},
        }
    ).encode()
    manifest = json.dumps(
        {
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "config": {
                "mediaType": "application/vnd.oci.image.config.v1+json",
                "digest": _digest(config),
                "size": len(config),
            },
            "layers": [
                {
                    "mediaType": "application/vnd.oci.image.layer.v1.tar",
                    "digest": _digest(layer),
                    "size": len(layer),
                }
            ],
        }
    ).encode()
    index = json.dumps(
        {
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.index.v1+json",
            "manifests": [
                {
                    "mediaType": "application/vnd.oci.image.manifest.v1+json",
                    "digest": _digest(manifest),
                    "size": len(manifest),
                    "platform": {"architecture": "amd64", "os": "linux"},
                    "annotations": {
                        "io.containerd.image.name": name,
                        "org.opencontainers.image.ref.name": name.rsplit(":", 1)[-1],
                    },
                }
            ],
        }
    ).encode()
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as archive:
        files = {"oci-layout": b'{"imageLayoutVersion":"1.0.0"}', "index.json": index}
        files |= {f"blobs/sha256/{_digest(b)[7:]}": b for b in (config, manifest, layer)}
        for path, data in files.items():
            entry = tarfile.TarInfo(path)
            entry.size, entry.mode = len(data), 0o644
            archive.addfile(entry, io.BytesIO(data))
    return out.getvalue()
