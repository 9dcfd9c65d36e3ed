"""The operator's job-record settings (`gryvia sacct` history, docs/slurm.md "sacct
history"): fields of the one `OperatorSettings` object and their flags."""

from __future__ import annotations

import argparse

from pydantic import Field
from pydantic_settings import BaseSettings

from gryvia_operator.api.jobrecord import DEFAULT_RETENTION_DAYS


class JobRecordSettings(BaseSettings):
    """The job-record part of `OperatorSettings` (same `GRYVIA_OPERATOR_` prefix)."""

    job_record_retention_days: int = Field(default=DEFAULT_RETENTION_DAYS, ge=1, le=36500)
    """Days a finished job's GryviaJobRecord is kept; older ones are summed into their
    tenant-month roll-up and deleted."""
    job_record_rollup_seconds: float = Field(default=3600.0, ge=1, le=86400)
    """Seconds between two roll-up passes (one paged LIST of the records each)."""


def add_job_record_arguments(p: argparse.ArgumentParser) -> None:
    """The `--job-record-*` flags of `gryvia-operator`."""
    p.add_argument(
        "--job-record-retention-days",
        type=int,
        help="days a finished job's GryviaJobRecord is kept before it is rolled up into its "
        f"tenant-month sum (env GRYVIA_OPERATOR_JOB_RECORD_RETENTION_DAYS; default "
        f"{DEFAULT_RETENTION_DAYS})",
    )
    p.add_argument(
        "--job-record-rollup-seconds",
        type=float,
        help="seconds between two roll-up passes over the job records (default 3600)",
    )
