"""Build the krew archive of `kubectl gryvia` reproducibly: `python plugins/krew/archive.py DIR`.

The archive holds the shim `kubectl-gryvia` (it runs the pip-installed CLI). File times,
owners and gzip's header time are fixed, so the same sources give the same bytes, and the
sha256 in plugins/krew/gryvia.yaml (checked by tests/unit/test_krew_manifest.py) stays true
until the shim changes.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import sys
import tarfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
VERSION = "v0.1.0"
NAME = f"kubectl-gryvia-{VERSION}.tar.gz"


def build() -> bytes:
    """The archive's bytes: `kubectl-gryvia` (mode 0755) at its root."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        data = (HERE / "kubectl-gryvia").read_bytes()
        info = tarfile.TarInfo("kubectl-gryvia")
        info.size, info.mode, info.mtime = len(data), 0o755, 0
        info.uid = info.gid = 0
        info.uname = info.gname = ""
        tar.addfile(info, io.BytesIO(data))
    out = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=out, mtime=0) as gz:
        gz.write(raw.getvalue())
    return out.getvalue()


def main() -> None:
    """Write the archive into the folder given (default dist/) and print its sha256."""
    folder = Path(sys.argv[1] if len(sys.argv) > 1 else "dist")
    folder.mkdir(parents=True, exist_ok=True)
    data = build()
    (folder / NAME).write_bytes(data)
    print(f"{folder / NAME} sha256 {hashlib.sha256(data).hexdigest()}")


if __name__ == "__main__":
    main()
