"""A job's GPU use as sampled from dcgm-exporter: `status.metrics` of a GryviaAIJob.

The activity of a GPU is DCGM's graphics-engine activity (`DCGM_FI_PROF_GR_ENGINE_ACTIVE`, a
ratio 0..1, written here as a percentage) where the exporter serves the profiling fields, else
`DCGM_FI_DEV_GPU_UTIL` (a percentage); `field` says which one the figures came from. A job's
activity in one sample is the mean over the GPUs its pods hold (dcgm-exporter labels each
GPU's series with the `namespace`, `pod` and `container` that hold it).
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from pydantic import Field, Strict

from gryvia_operator.api.base import (
    GryviaModel,
    NonNegativeInt32,
    NonNegativeInt64,
    Percent,
    SchemaExtra,
    Str63,
)

RECENT_SAMPLES = 20
"""Samples of each replica's activity `status.metrics.replicas` keeps (a ring, oldest first)."""
MAX_REPLICAS = 64
"""Replicas `status.metrics.replicas` keeps the recent activity of (the lowest-numbered)."""

WholePercent = Annotated[int, Strict(), Field(ge=0, le=100), SchemaExtra({"format": "int32"})]


class ReplicaActivity(GryviaModel):
    """One replica's GPU activity in its newest samples: the line over time the console's Job
    view draws."""

    replica: NonNegativeInt32
    """The replica number (completion index or StatefulSet ordinal of its pod)."""
    recent_activity_percent: list[WholePercent] = Field(max_length=RECENT_SAMPLES)
    """Its activity in up to the last 20 samples that read it (mean over its GPUs, a whole
    percent), oldest first."""


class JobGpuMetrics(GryviaModel):
    """A running job's GPU use: a summary of the samples since it started."""

    field: Str63
    """The DCGM field the activity figures come from (`DCGM_FI_PROF_GR_ENGINE_ACTIVE`, else
    `DCGM_FI_DEV_GPU_UTIL`)."""
    samples: NonNegativeInt64
    """How many samples the summary holds."""
    last_sample_time: datetime
    """When the newest sample was taken (UTC)."""
    last_activity_percent: Percent
    """The newest sample's activity, mean over the job's GPUs, 0..100."""
    mean_activity_percent: Percent
    """Mean activity over all samples, 0..100."""
    p95_activity_percent: Percent | None = None
    """95th percentile of the samples' activity, 0..100 (the upper edge of its histogram bin,
    at most `maxActivityPercent`)."""
    max_activity_percent: Percent | None = None
    """The highest sample's activity, 0..100."""
    tensor_activity_percent: Percent | None = None
    """Mean tensor-pipe activity (`DCGM_FI_PROF_PIPE_TENSOR_ACTIVE`) where served, 0..100."""
    peak_memory_used_bytes: NonNegativeInt64 | None = None
    """The most frame-buffer memory one of its GPUs used (`DCGM_FI_DEV_FB_USED`), bytes."""
    gpus: NonNegativeInt64 | None = None
    """How many GPUs the newest sample read."""
    idle_since: datetime | None = None
    """When its GPUs went idle (a sample under 5 % activity) and stayed idle since (UTC);
    unset while they are active. With a silent log it makes the job `Stalled`."""
    activity_histogram: list[NonNegativeInt64] | None = Field(default=None, max_length=20)
    """Samples per 5 % of activity (20 bins: 0-5 %, 5-10 %, ..., 95-100 %), which the p95 is
    read from (to within one bin)."""
    replicas: list[ReplicaActivity] | None = Field(default=None, max_length=MAX_REPLICAS)
    """Each replica's activity in its newest samples (at most 20 each, the first 64 replicas
    by number), by replica; unset when its pods carry no replica number."""
