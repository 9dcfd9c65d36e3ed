"""Writing a file only its owner may read (a kubeconfig holds credentials), atomically: a
reader sees the old text or the new, never half of it."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_private(path: Path, text: str) -> None:
    """Replace `path` with `text` (its folder made when missing): written to a temporary file
    beside it, made mode 0600, then renamed over it. Raises OSError."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(fd, "w") as fh:
        fh.write(text)
    Path(tmp).chmod(0o600)
    Path(tmp).replace(path)
