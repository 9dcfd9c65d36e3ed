"""`python -m gryvia_cli.schemas [DIR]`: write `<Kind>.schema.json` for every document kind
into DIR (docs/reference/json), removing stale schema files there."""

from __future__ import annotations

import sys
from pathlib import Path

from gryvia_cli.schemas import DOCUMENTS, SCHEMA_DIR, schema_text


def main(argv: list[str]) -> int:
    """Write the schemas; return the exit code."""
    out = Path(argv[0] if argv else SCHEMA_DIR)
    out.mkdir(parents=True, exist_ok=True)
    wanted = {f"{kind}.schema.json" for kind in DOCUMENTS}
    for stale in out.glob("*.schema.json"):
        if stale.name not in wanted:
            stale.unlink()
    for kind in DOCUMENTS:
        (out / f"{kind}.schema.json").write_text(schema_text(kind), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
