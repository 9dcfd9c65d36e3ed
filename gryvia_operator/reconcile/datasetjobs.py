"""The Jobs of a GryviaDataset and what their logs say (pure; docs/datasets.md).

Two Jobs run rclone (the copier image, `COPIER_IMAGE`; rclone's own image has the busybox
tools the scripts use), configured by environment alone (`RCLONE_CONFIG_SRC_*`, rclone's
documented form), with the working directory `/` so that the cache and a `pvc://` source are
reached by relative paths (`cache`, `source/<path>`):

- the check Job lists the source (`rclone lsjson -R --files-only`, with `--hash` for S3,
  whose listing carries each object's MD5 for free) and prints `GRYVIA-DATASET-VERSION
  <16 hex>` (the SHA-256 of the sorted listing: paths, sizes, times, hashes) and
  `GRYVIA-DATASET-SIZE {"count": N, "bytes": B}`;
- the copy Job copies the source into the new version's claim (`rclone copy`, JSON log, a
  stats line every second), lists the source again and fails with exit 4 when it changed
  while it was copied, then prints the size line of what it copied.

Errors are rclone's own JSON log lines (`{"level": "error", "msg": ...}`); `log_error` picks
the last one for the dataset's message.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final, Literal

from gryvia_operator.api.controlled import owner_reference
from gryvia_operator.api.dataset import (
    LABEL_DATASET,
    LABEL_ROLE,
    LABEL_VERSION,
    SECRET_KEYS,
    GryviaDataset,
)
from gryvia_operator.api.storage import GryviaStorage

COPIER_IMAGE: Final = os.environ.get("GRYVIA_DATASET_COPIER_IMAGE", "rclone/rclone:1.60.1")
"""The copier's image (`GRYVIA_DATASET_COPIER_IMAGE` overrides it)."""
VERSION_LINE: Final = "GRYVIA-DATASET-VERSION "
SIZE_LINE: Final = "GRYVIA-DATASET-SIZE "
CACHE_MOUNT: Final = "/cache"
SOURCE_MOUNT: Final = "/source"
Role = Literal["check", "copy"]

_LIST = (
    'list=$(mktemp)\nrclone lsjson -R --files-only --use-json-log $GRYVIA_HASH "$GRYVIA_SOURCE" '
    '> "$list"\n'
    "digest=$(grep '^{' \"$list\" | sed 's/,$//' | sort | sha256sum | cut -c1-16)\n"
)
_SIZE = (
    'awk -F\'"Size":\' \'/^[{]/ {n++; split($2, a, ","); b += a[1]} END '
    '{printf "GRYVIA-DATASET-SIZE {\\"count\\": %d, \\"bytes\\": %.0f}\\n", n, b}\' "$list"\n'
)
CHECK_SCRIPT: Final = (
    "set -eu\n" + _LIST + 'echo "GRYVIA-DATASET-VERSION $digest"\n' + _SIZE + 'rm -f "$list"\n'
)
"""The check Job's script."""
COPY_SCRIPT: Final = (
    "set -eu\n"
    'rclone copy "$GRYVIA_SOURCE" cache --use-json-log --stats 1s --stats-log-level NOTICE '
    "--transfers 8 --checkers 16\n" + _LIST + 'if [ "$digest" != "$GRYVIA_DIGEST" ]; then\n'
    '  echo \'{"level":"error","msg":"the source changed while it was copied: it is checked '
    "and staged again\"}'\n  exit 4\nfi\n"
    'echo "GRYVIA-DATASET-VERSION $digest"\n' + _SIZE + 'rm -f "$list"\n'
)
"""The copy Job's script (`GRYVIA_DIGEST`: the listing digest the check Job saw)."""


def staging_namespace(dataset: GryviaDataset, default: str) -> str:
    """Where the dataset's Jobs and cache claims live: a `pvc://` source's namespace (a pod
    mounts claims of its own namespace only), else `default` (the operator's)."""
    url = dataset.spec.source.url
    if url.startswith("pvc://"):
        return url[len("pvc://") :].split("/", 1)[0]
    return default


def source_env(dataset: GryviaDataset) -> tuple[list[dict[str, Any]], str, str]:
    """(container env, the rclone path of the source, extra lsjson flags) for the source."""
    src = dataset.spec.source
    url = src.url
    env: list[dict[str, Any]] = []

    def put(name: str, value: str) -> None:
        env.append({"name": name, "value": value})

    if url.startswith("s3://"):
        put("RCLONE_CONFIG_SRC_TYPE", "s3")
        put("RCLONE_CONFIG_SRC_PROVIDER", "Other")
        put("RCLONE_CONFIG_SRC_ENV_AUTH", "true" if src.secret_ref else "false")
        put("RCLONE_CONFIG_SRC_FORCE_PATH_STYLE", "true")
        if src.endpoint:
            put("RCLONE_CONFIG_SRC_ENDPOINT", src.endpoint)
        if src.region:
            put("RCLONE_CONFIG_SRC_REGION", src.region)
        if src.secret_ref is not None:
            for key in SECRET_KEYS:
                ref = {"name": src.secret_ref.name, "key": key}
                env.append({"name": key, "valueFrom": {"secretKeyRef": ref}})
        return env, "src:" + url[len("s3://") :], "--hash"
    if url.startswith(("http://", "https://")):
        put("RCLONE_CONFIG_SRC_TYPE", "http")
        put("RCLONE_CONFIG_SRC_URL", url if url.endswith("/") else url + "/")
        return env, "src:", ""
    path = url[len("pvc://") :].split("/", 2)[2:]
    return env, SOURCE_MOUNT.lstrip("/") + ("/" + path[0] if path and path[0] else ""), ""


def job_name(dataset: GryviaDataset, role: Role, now: datetime) -> str:
    """`gryvia-<role>-<dataset>-<unix seconds>` (at most 63 characters: a Job's pods are
    labelled with its name)."""
    stamp = str(int(now.timestamp()))
    return f"gryvia-{role}-{dataset.name[: 63 - 9 - len(role) - len(stamp)]}-{stamp}"


def cache_claim_name(dataset: GryviaDataset, version: str) -> str:
    """The claim of one staged version in the staging namespace (and, in each consuming
    namespace, the read-only claim of it)."""
    return f"gryvia-dataset-{dataset.name[:200]}-{version}"


def build_job(
    dataset: GryviaDataset,
    role: Role,
    name: str,
    namespace: str,
    *,
    digest: str = "",
    claim: str | None = None,
) -> dict[str, Any]:
    """The check or copy Job (`claim`: the copy's target claim, mounted at /cache)."""
    env, path, hash_flag = source_env(dataset)
    env += [
        {"name": "GRYVIA_SOURCE", "value": path},
        {"name": "GRYVIA_HASH", "value": hash_flag},
        {"name": "GRYVIA_DIGEST", "value": digest},
        {"name": "RCLONE_CONFIG", "value": "/dev/null"},
        {"name": "HOME", "value": "/tmp"},
    ]
    mounts: list[dict[str, Any]] = []
    volumes: list[dict[str, Any]] = []
    if claim is not None:
        mounts.append({"name": "cache", "mountPath": CACHE_MOUNT})
        volumes.append({"name": "cache", "persistentVolumeClaim": {"claimName": claim}})
    if dataset.spec.source.url.startswith("pvc://"):
        source_claim = dataset.spec.source.url[len("pvc://") :].split("/")[1]
        mounts.append({"name": "source", "mountPath": SOURCE_MOUNT, "readOnly": True})
        volumes.append(
            {
                "name": "source",
                "persistentVolumeClaim": {"claimName": source_claim, "readOnly": True},
            }
        )
    labels = {LABEL_DATASET: dataset.name, LABEL_ROLE: role}
    if digest:
        labels[LABEL_VERSION] = digest
    container: dict[str, Any] = {
        "name": "copier",
        "image": COPIER_IMAGE,
        "command": ["sh", "-c", COPY_SCRIPT if role == "copy" else CHECK_SCRIPT],
        "workingDir": "/",
        "env": env,
    }
    if mounts:
        container["volumeMounts"] = mounts
    pod: dict[str, Any] = {"restartPolicy": "Never", "containers": [container]}
    if volumes:
        pod["volumes"] = volumes
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": labels,
            "ownerReferences": [owner_reference(dataset, block_deletion=False)],
        },
        "spec": {
            "backoffLimit": 0,
            "template": {"metadata": {"labels": labels}, "spec": pod},
        },
    }


def build_cache_claim(
    dataset: GryviaDataset, storage: GryviaStorage, namespace: str, version: str
) -> dict[str, Any]:
    """A new version's claim on the backend (its class and first access mode, `cache.size`)."""
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {
            "name": cache_claim_name(dataset, version),
            "namespace": namespace,
            "labels": {LABEL_DATASET: dataset.name, LABEL_VERSION: version},
            "ownerReferences": [owner_reference(dataset, block_deletion=False)],
        },
        "spec": {
            "accessModes": [storage.spec.access_modes[0]],
            "storageClassName": storage.class_name(),
            "resources": {"requests": {"storage": str(dataset.spec.cache.size)}},
        },
    }


@dataclass(frozen=True)
class CopyStats:
    """One rclone stats line: bytes and files done and to do, speed (B/s), ETA (s), time
    since the copy started (s)."""

    bytes: int
    total_bytes: int | None
    files: int
    total_files: int | None
    speed: float | None
    eta: int | None
    elapsed: float | None = None


def _json_lines(log: str) -> Iterable[Mapping[str, Any]]:
    for line in log.splitlines():
        if line.startswith("{"):
            try:
                parsed = json.loads(line)
            except ValueError:
                continue
            if isinstance(parsed, dict):
                yield parsed


def last_stats(log: str) -> CopyStats | None:
    """The last stats line of a copy log (None: none yet)."""
    found = None
    for entry in _json_lines(log):
        stats = entry.get("stats")
        if isinstance(stats, dict) and "bytes" in stats:
            found = stats
    if found is None:
        return None
    eta = found.get("eta")
    return CopyStats(
        bytes=int(found.get("bytes") or 0),
        total_bytes=int(found["totalBytes"]) if found.get("totalBytes") is not None else None,
        files=int(found.get("transfers") or 0),
        total_files=(
            int(found["totalTransfers"]) if found.get("totalTransfers") is not None else None
        ),
        speed=float(found["speed"]) if found.get("speed") is not None else None,
        eta=int(eta) if isinstance(eta, int | float) else None,
        elapsed=float(found["elapsedTime"]) if found.get("elapsedTime") is not None else None,
    )


def result_lines(log: str) -> tuple[str | None, int | None, int | None]:
    """(version, files, bytes) a finished check or copy printed (None where absent)."""
    version = files = size = None
    for line in log.splitlines():
        if line.startswith(VERSION_LINE):
            version = line[len(VERSION_LINE) :].strip() or None
        elif line.startswith(SIZE_LINE):
            try:
                parsed = json.loads(line[len(SIZE_LINE) :])
                files, size = int(parsed["count"]), int(parsed["bytes"])
            except (ValueError, KeyError, TypeError):
                continue
    return version, files, size


def log_error(log: str) -> str | None:
    """The last error rclone logged (its JSON `msg`), else the last plain line."""
    found = None
    for entry in _json_lines(log):
        if entry.get("level") in ("error", "critical", "fatal"):
            found = str(entry.get("msg") or "").strip() or found
    if found is None:
        plain = [ln for ln in log.splitlines() if ln.strip() and not ln.startswith("{")]
        found = plain[-1].strip() if plain else None
    return found
