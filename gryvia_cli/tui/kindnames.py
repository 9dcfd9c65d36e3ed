"""The names of the kinds the console watches, in a module with no heavy imports: the
cluster seam (`source`, `kubesource`) needs them before the store (and pydantic) load, so
`gryvia tui` can start its first list while the rest of the console is still importing."""

from __future__ import annotations

from typing import Literal, get_args

Kind = Literal[
    "jobs",
    "gpunodes",
    "nodes",
    "pods",
    "skus",
    "tenants",
    "quotas",
    "usage",
    "budgets",
    "reservations",
]
"""A kind the console lists and watches (the store keeps one table of each)."""
KINDS: tuple[Kind, ...] = get_args(Kind)
