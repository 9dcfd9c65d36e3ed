"""Metered usage through the API: `Client.usage`, the reads `gryvia usage` runs
(`views.usage`), as one typed result whose `as_dict()` is the command's `-o json`."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gryvia_cli.connection import Connection
    from gryvia_cli.core.billing import UsageRow


@dataclass(frozen=True)
class UsageResult:
    """GPU-hours and estimated cost per group (`group_by`: tenant, sku, day, job, user,
    project or label:KEY) in [start, end) (None: unbounded), of `tenant` only when given:
    `rows` one per group and their `total` (`core.billing.UsageRow`)."""

    rows: list[UsageRow]
    total: UsageRow
    group_by: str
    start: dt.datetime | None
    end: dt.datetime | None
    tenant: str | None

    def as_dict(self) -> dict[str, Any]:
        """The `gryvia usage -o json` document (kind UsageReport)."""
        from gryvia_cli.views.usage import usage_document

        return usage_document(
            self.rows, self.total, self.group_by, self.start, self.end, self.tenant
        )


def read_usage_result(
    conn: Connection,
    tenant: str | None,
    group_by: str,
    start: str | None,
    end: str | None,
) -> UsageResult:
    """The usage `gryvia usage --group-by G --from S --to E [--tenant T]` shows. Raises
    UsageError naming the option a value of `group_by`, `start` or `end` does not fit."""
    from gryvia_cli.views.usage import read_usage, usage_window

    key, lo, hi = usage_window(group_by, start, end)
    rows, total = read_usage(conn, tenant, key, lo, hi)
    return UsageResult(rows, total, key, lo, hi, tenant)
