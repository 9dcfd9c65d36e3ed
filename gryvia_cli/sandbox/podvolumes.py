"""The pod runner's volumes: a container's PersistentVolumeClaim mounts, as folders.

Volumes are not mounted (pods share the host's file system), so a mount is approximated the
way `workingDir` is: each PVC-backed `volumeMount` of a container becomes a symbolic link at
`<pod folder>/root/<mountPath>` to the claim's folder, which is the bound PersistentVolume's
`hostPath.path` when it has one (what a kubelet mounts), else
`<sandbox state>/volumes/<namespace>/<claim>`. The folder outlives the pod, so what a pod
writes under its mount (its working directory, or HOME) is there for the next pod of the
claim. A program that opens the mount path by its literal absolute name still reaches the
host's path, not the volume.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

ClaimFolder = Callable[[str, str], str | None]
"""`(namespace, claim) -> host folder of the bound PV` (None: not bound, or not hostPath)."""


def claim_mounts(pod: Mapping[str, Any], container: Mapping[str, Any]) -> list[tuple[str, str]]:
    """`(mountPath, claimName)` of each of `container`'s mounts backed by a PVC volume of
    `pod` (subPath joined to the claim's folder: `claimName/subPath`)."""
    claims = {
        str(v.get("name")): str((v.get("persistentVolumeClaim") or {}).get("claimName") or "")
        for v in (pod.get("spec") or {}).get("volumes") or []
        if v.get("persistentVolumeClaim")
    }
    out: list[tuple[str, str]] = []
    for mount in container.get("volumeMounts") or []:
        claim = claims.get(str(mount.get("name")))
        if not claim:
            continue
        sub = str(mount.get("subPath") or "").strip("/")
        out.append((str(mount.get("mountPath") or ""), f"{claim}/{sub}" if sub else claim))
    return out


def rooted(root: Path, path: str) -> Path:
    """`path` (absolute, as the pod names it) under the pod's `root` folder."""
    return root / path.lstrip("/")


def link_claims(
    pod: Mapping[str, Any],
    container: Mapping[str, Any],
    root: Path,
    state: Path,
    claim_folder: ClaimFolder,
) -> None:
    """Link each PVC mount of `container` under `root` to its claim's folder (created when
    missing). An existing link or folder at the mount path is left as it is."""
    namespace = str((pod.get("metadata") or {}).get("namespace") or "default")
    for mount_path, claim in claim_mounts(pod, container):
        name, _, sub = claim.partition("/")
        base = claim_folder(namespace, name)
        folder = Path(base) if base else state / "volumes" / namespace / name
        target = folder / sub if sub else folder
        target.mkdir(parents=True, exist_ok=True)
        link = rooted(root, mount_path)
        if link.is_symlink() or link.exists():
            continue
        link.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileExistsError):
            link.symlink_to(target, target_is_directory=True)
