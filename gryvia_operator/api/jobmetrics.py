"""A job's GPU use as sampled from dcgm-exporter: `status.metrics` of a GryviaAIJob.

The activity of a GPU is DCGM's graphics-engine activity (`DCGM_FI_PROF_GR_ENGINE_ACTIVE`, a
ratio 0..1, written here as a percentage) where the exporter serves the profiling fields, else
`DCGM_FI_DEV_GPU_UTIL` (a percentage); `field` says which one the figures came from. A job's
activity in one sample is the mean over the GPUs its pods hold (dcgm-exporter labels each
GPU's series with the `namespace`, `pod` and `container` that hold it).
"""

from __future__ import annotations

from datetime import datetime

from pydantic import Field

from gryvia_operator.api.base import GryviaModel, NonNegativeInt64, Percent, Str63


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
