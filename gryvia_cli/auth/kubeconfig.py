"""The kubeconfig side of `gryvia login`/`logout`: a user whose exec plugin is `gryvia auth
token`, and a context pairing it with a cluster, written into the file kubectl writes to.

Only these two entries are added, replaced or removed; every other entry and key is kept. The
file is rewritten atomically with mode 0600. No token is ever written here.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Any

import yaml

from gryvia_cli.core.oidc import exec_user
from gryvia_cli.privatefile import write_private


def gryvia_command() -> tuple[str, list[str]]:
    """How kubectl should run gryvia: the `gryvia` on PATH when it is this installation's,
    else this Python with `-m gryvia_cli` (always this installation, found without PATH)."""
    found = shutil.which("gryvia")
    if found and Path(found).resolve().parent == Path(sys.executable).resolve().parent:
        return found, []
    return sys.executable, ["-m", "gryvia_cli"]


def _read(target: Path) -> dict[str, Any]:
    data = yaml.safe_load(target.read_text()) if target.exists() else None
    data = data if isinstance(data, dict) else {}
    data.setdefault("apiVersion", "v1")
    data.setdefault("kind", "Config")
    return data


def _upsert(data: dict[str, Any], section: str, entry: dict[str, Any]) -> bool:
    """Put `entry` into `section`, replacing one of its name; True when one was replaced."""
    entries = [e for e in data.get(section) or [] if isinstance(e, dict)]
    replaced = any(e.get("name") == entry["name"] for e in entries)
    data[section] = [e for e in entries if e.get("name") != entry["name"]] + [entry]
    return replaced


def write_login(
    target: Path,
    *,
    user: str,
    context: str,
    cluster: str,
    namespace: str | None,
    issuer: str,
    client_id: str,
    ca_file: str | None,
    switch: bool,
) -> list[str]:
    """Add or replace user `user` (exec: `gryvia auth token` for `issuer`) and context
    `context` (`cluster` + `user` + `namespace`) in kubeconfig `target`; with `switch` make
    `context` current. Returns what changed, one note per entry."""
    command, prefix = gryvia_command()
    data = _read(target)
    notes = []
    entry = {"name": user, "user": exec_user(command, prefix, issuer, client_id, ca_file)}
    verb = "replaced" if _upsert(data, "users", entry) else "added"
    notes.append(f"{verb} user {user!r} (exec: gryvia auth token) in {target}")
    ctx: dict[str, Any] = {"cluster": cluster, "user": user}
    if namespace:
        ctx["namespace"] = namespace
    verb = "replaced" if _upsert(data, "contexts", {"name": context, "context": ctx}) else "added"
    notes.append(f"{verb} context {context!r} (cluster {cluster!r}) in {target}")
    if switch and data.get("current-context") != context:
        data["current-context"] = context
        notes.append(f"switched current-context to {context!r}")
    write_private(target, yaml.safe_dump(data, sort_keys=False))
    return notes


def login_of(target: Path, user: str) -> tuple[str, str, str | None] | None:
    """(issuer, client id, CA file) of user `user` in `target` when its exec plugin is
    `gryvia auth token`, else None."""
    try:
        data = _read(target)
    except (OSError, yaml.YAMLError):
        return None
    for entry in data.get("users") or []:
        if not isinstance(entry, dict) or entry.get("name") != user:
            continue
        args = list(((entry.get("user") or {}).get("exec") or {}).get("args") or [])
        if "auth" not in args or "token" not in args:
            return None
        opts = {args[i]: args[i + 1] for i in range(len(args) - 1) if args[i].startswith("--")}
        if "--issuer" in opts and "--client-id" in opts:
            return opts["--issuer"], opts["--client-id"], opts.get("--ca-file")
    return None


def remove_login(target: Path, user: str) -> list[str]:
    """Remove user `user` and every context using it from `target`; return what changed. A
    removed current-context gives way to the first other context of its cluster (the one the
    login was made from, usually), else is emptied; either is reported."""
    if not target.exists():
        return []
    data = _read(target)
    notes: list[str] = []
    users = [e for e in data.get("users") or [] if isinstance(e, dict)]
    if any(e.get("name") == user for e in users):
        data["users"] = [e for e in users if e.get("name") != user]
        notes.append(f"removed user {user!r} from {target}")
    contexts = [e for e in data.get("contexts") or [] if isinstance(e, dict)]
    for gone in [e for e in contexts if (e.get("context") or {}).get("user") == user]:
        contexts.remove(gone)
        notes.append(f"removed context {gone.get('name')!r} from {target}")
        if data.get("current-context") == gone.get("name"):
            # back to a context of the same cluster (the one `gryvia login` was run from)
            cluster = (gone.get("context") or {}).get("cluster")
            same = [e for e in contexts if (e.get("context") or {}).get("cluster") == cluster]
            data["current-context"] = str(same[0].get("name")) if same else ""
            notes.append(
                f"switched current-context back to {data['current-context']!r} (same cluster)"
                if same
                else f"unset current-context {gone.get('name')!r}"
            )
    data["contexts"] = contexts
    if notes:
        write_private(target, yaml.safe_dump(data, sort_keys=False))
    return notes
