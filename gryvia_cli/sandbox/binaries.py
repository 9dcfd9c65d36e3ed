"""Where the locally built Kubernetes binaries live, and how to build them.

The versions are pinned in the wrapper modules' go.mod files under `tools/k8s/`; the build
script `tools/k8s/build.sh` writes the binaries to `$GRYVIA_K8S_CACHE/<kubernetes version>/bin`
(default `~/.cache/gryvia/k8s/...`). `GRYVIA_K8S_BIN_DIR` overrides the folder outright.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

from gryvia_cli.errors import GryviaError

#: Every binary the sandbox and the integration tests run.
BINARIES = (
    "kube-apiserver",
    "kube-controller-manager",
    "kube-scheduler",
    "kubectl",
    "etcd",
    "kwok",
    "kwokctl",
    "helm",
)

#: What the real node of `sandbox up --real-node` runs from the same folder; `make node-bin`
#: builds them (kubelet by build.sh, the rest by build-node.sh). Not in `BINARIES`: the other
#: sandboxes need none of them.
NODE_BINARIES = ("kubelet", "containerd", "containerd-shim-runc-v2", "ctr", "pause")

#: Debian's runc and CNI plugins (bridge, host-local, loopback), which build-node.sh installs.
RUNC = Path("/usr/sbin/runc")
CNI_BIN_DIR = Path("/usr/lib/cni")


class BinariesMissingError(GryviaError):
    """Raised when a needed binary has not been built; the message says how to build it."""


def debian_binary(name: str) -> str | None:
    """A program a Debian package installs (`prometheus`, `docker-registry`): on PATH, else in
    /usr/bin (PATH may lack it under sudo or a minimal environment); None when neither has
    it."""
    found = shutil.which(name)
    if found:
        return found
    debian = Path("/usr/bin") / name
    return str(debian) if os.access(debian, os.X_OK) else None


def repo_root() -> Path | None:
    """Return the source tree holding `tools/k8s/`, or None for an installed package."""
    here = Path(__file__).resolve()
    for parent in here.parents:
        if (parent / "tools" / "k8s" / "build.sh").is_file():
            return parent
    return None


def kubernetes_version() -> str:
    """Return the pinned Kubernetes release (e.g. `v1.36.3`) from tools/k8s/kubernetes/go.mod.

    Raises BinariesMissingError outside a source tree, where the pin cannot be read.
    """
    root = repo_root()
    if root is None:
        raise BinariesMissingError(
            "cannot find tools/k8s/ (not a source checkout): set GRYVIA_K8S_BIN_DIR to the "
            "folder holding kube-apiserver, etcd, kwok and friends"
        )
    gomod = (root / "tools" / "k8s" / "kubernetes" / "go.mod").read_text()
    match = re.search(r"^\s*(?:require\s+)?k8s\.io/kubernetes (v\S+)", gomod, re.MULTILINE)
    if not match:
        raise BinariesMissingError("tools/k8s/kubernetes/go.mod does not pin k8s.io/kubernetes")
    return match.group(1)


def bin_dir() -> Path:
    """Return the folder that holds (or will hold) the built binaries."""
    override = os.environ.get("GRYVIA_K8S_BIN_DIR")
    if override:
        return Path(override)
    cache = os.environ.get("GRYVIA_K8S_CACHE") or str(
        Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "gryvia" / "k8s"
    )
    return Path(cache) / kubernetes_version() / "bin"


def missing() -> list[str]:
    """Return the names of binaries not yet built (empty when all are there)."""
    folder = bin_dir()
    return [name for name in BINARIES if not os.access(folder / name, os.X_OK)]


def node_missing() -> list[str]:
    """Return what the real node lacks: binaries of `NODE_BINARIES` not built, runc and the CNI
    plugins not installed (empty when all are there; `make node-bin`, as root, gets them)."""
    folder = bin_dir()
    absent = [name for name in NODE_BINARIES if not os.access(folder / name, os.X_OK)]
    if not os.access(RUNC, os.X_OK):
        absent.append(str(RUNC))
    absent += [
        str(CNI_BIN_DIR / plugin)
        for plugin in ("bridge", "host-local", "loopback")
        if not os.access(CNI_BIN_DIR / plugin, os.X_OK)
    ]
    return absent


def path_of(name: str) -> Path:
    """Return the path of one binary. Raises BinariesMissingError if it is not built."""
    path = bin_dir() / name
    if not os.access(path, os.X_OK):
        raise BinariesMissingError(
            f"{name} is not built (looked in {path.parent}): run 'make k8s-bin' or "
            "'gryvia sandbox up', which offers to build it"
        )
    return path


def build() -> None:
    """Run tools/k8s/build.sh, streaming its progress to the terminal.

    Raises BinariesMissingError outside a source tree and CalledProcessError if the build fails.
    """
    root = repo_root()
    if root is None:
        raise BinariesMissingError("cannot build: tools/k8s/build.sh is not available")
    subprocess.run([str(root / "tools" / "k8s" / "build.sh")], check=True)
