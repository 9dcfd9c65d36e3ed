"""The sandbox's kubeconfig: one context `gryvia-<name>`, and merging it into the user's file."""

from __future__ import annotations

import os
import shlex
from pathlib import Path
from typing import Any

import yaml

from gryvia_cli.privatefile import write_private


def write_sandbox_kubeconfig(kwok_file: Path, dest: Path, context: str) -> None:
    """Copy kwokctl's kubeconfig to `dest` with cluster, user and context renamed `context`."""
    data = yaml.safe_load(kwok_file.read_text())
    cluster = data["clusters"][0]["cluster"]
    user = data["users"][0]["user"]
    out = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": context, "cluster": cluster}],
        "users": [{"name": context, "user": user}],
        "contexts": [
            {
                "name": context,
                "context": {"cluster": context, "user": context, "namespace": "default"},
            }
        ],
        "current-context": context,
    }
    write_private(dest, yaml.safe_dump(out, sort_keys=False))


def export_line(path: Path) -> str:
    """The shell line that points kubectl and gryvia at the kubeconfig `path` alone."""
    return f"export KUBECONFIG={shlex.quote(str(path))}"


def default_target() -> Path:
    """The file kubectl writes to: the first path in KUBECONFIG, else ~/.kube/config."""
    env = os.environ.get("KUBECONFIG", "")
    first = next((p for p in env.split(os.pathsep) if p), "")
    return Path(first) if first else Path.home() / ".kube" / "config"


def merge(source: Path, target: Path, *, switch: bool = True) -> list[str]:
    """Merge the single-context kubeconfig `source` into `target`; return what changed.

    Entries of the same name are replaced (and reported); other contexts are never touched.
    With `switch`, current-context becomes the sandbox's (reported with the previous one).
    The file is rewritten atomically with mode 0600.
    """
    src = yaml.safe_load(source.read_text())
    dst: dict[str, Any] = {}
    if target.exists():
        dst = yaml.safe_load(target.read_text()) or {}
    dst.setdefault("apiVersion", "v1")
    dst.setdefault("kind", "Config")
    notes: list[str] = []
    for section in ("clusters", "users", "contexts"):
        entries = [e for e in dst.get(section) or [] if isinstance(e, dict)]
        for new in src[section]:
            if any(e.get("name") == new["name"] for e in entries):
                notes.append(f"replaced {section[:-1]} {new['name']!r} in {target}")
            entries = [e for e in entries if e.get("name") != new["name"]] + [new]
        dst[section] = entries
    context = src["current-context"]
    previous = dst.get("current-context")
    if switch and previous != context:
        dst["current-context"] = context
        notes.append(
            f"switched current-context from {previous!r} to {context!r}"
            if previous
            else f"set current-context to {context!r}"
        )
    write_private(target, yaml.safe_dump(dst, sort_keys=False))
    return notes


def server_of(path: Path) -> str | None:
    """The server URL of the first cluster in the kubeconfig `path`, None when unreadable."""
    try:
        data = yaml.safe_load(path.read_text()) or {}
        return str(data["clusters"][0]["cluster"]["server"])
    except (OSError, yaml.YAMLError, KeyError, IndexError, TypeError):
        return None


def remove(context: str, target: Path, *, server: str | None = None) -> list[str]:
    """Remove cluster, user and context named `context` from `target`; return what changed.

    With `server`, nothing is removed unless the cluster named `context` points at that
    server (another sandbox home may own an entry of the same name).
    """
    if not target.exists():
        return []
    dst = yaml.safe_load(target.read_text()) or {}
    if server is not None:
        named = [c for c in dst.get("clusters") or [] if isinstance(c, dict)]
        mine = [c for c in named if c.get("name") == context]
        if not any((c.get("cluster") or {}).get("server") == server for c in mine):
            return []
    notes: list[str] = []
    for section in ("clusters", "users", "contexts"):
        before = dst.get(section) or []
        after = [e for e in before if not (isinstance(e, dict) and e.get("name") == context)]
        if len(after) != len(before):
            dst[section] = after
            notes.append(f"removed {section[:-1]} {context!r} from {target}")
    if dst.get("current-context") == context:
        dst["current-context"] = ""
        notes.append(f"unset current-context {context!r}")
    if notes:
        write_private(target, yaml.safe_dump(dst, sort_keys=False))
    return notes
