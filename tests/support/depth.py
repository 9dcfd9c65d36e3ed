"""How deep the long proofs go: `make test` runs a fixed, seeded part of each; `make test-all`
(GRYVIA_TEST_FULL=1) runs them whole. One switch for every such proof, so both commands run
the same test ids with the same assertions."""

from __future__ import annotations

import os

FULL = os.environ.get("GRYVIA_TEST_FULL", "") == "1"
"""True under `make test-all`."""


def amount(quick: int, full: int) -> int:
    """`full` under `make test-all`, else `quick` (example counts, kill counts, ...)."""
    return full if FULL else quick
