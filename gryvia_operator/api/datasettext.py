"""A GryviaDataset's staging progress in words, shared by the operator (a waiting job's
pending message) and the CLI (`gryvia dataset list`, `stage --wait`, `gryvia queue`, the
console's `:datasets` view): pure text, no I/O (docs/datasets.md)."""

from __future__ import annotations

from typing import Final

from gryvia_operator.api.dataset import DatasetProgress

BINARY_UNITS: Final = ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB")
"""IEC binary units, each 1024 times the one before."""
PHASE_WORDS: Final = {
    None: "not seen by the operator yet",
    "Pending": "pending",
    "Staging": "staging",
    "Ready": "ready",
    "Failed": "failed",
    "Invalid": "invalid",
}
"""What `progress_text` says for a phase without progress figures."""


def human_bytes(n: int | float) -> str:
    """A byte count in binary units with one decimal: `512 B`, `1.0 KiB`, `22.5 MiB`,
    `1.5 TiB` (IEC units, 1 KiB = 1024 B; bytes themselves have no decimal). Negative counts
    count as 0; a fraction of a byte is rounded to the nearest byte."""
    value = float(max(round(n), 0))
    if value < 1024:
        return f"{int(value)} B"
    unit = 0
    while value >= 1024 and unit < len(BINARY_UNITS) - 1:
        value /= 1024
        unit += 1
    if f"{value:.1f}" == "1024.0" and unit < len(BINARY_UNITS) - 1:
        value, unit = value / 1024, unit + 1  # 1023.96 MiB reads 1.0 GiB, not 1024.0 MiB
    return f"{value:.1f} {BINARY_UNITS[unit]}"


def short_duration(seconds: int | float) -> str:
    """A duration for an ETA: `8s`, `2m5s`, `1h3m`, `2d4h` (the two largest units, the
    smaller left out when 0); negative durations are `0s`."""
    total = max(int(seconds), 0)
    days, rest = divmod(total, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    for big, big_unit, small, small_unit in (
        (days, "d", hours, "h"),
        (hours, "h", minutes, "m"),
        (minutes, "m", secs, "s"),
    ):
        if big:
            return f"{big}{big_unit}{small}{small_unit}" if small else f"{big}{big_unit}"
    return f"{secs}s"


def progress_percent(progress: DatasetProgress) -> float | None:
    """The copier's percent, else bytes copied in percent of the total (capped at 100);
    None when neither is known (no total, or a total of 0)."""
    if progress.percent is not None:
        return progress.percent
    if progress.total_bytes:
        return min(100.0, 100.0 * progress.bytes / progress.total_bytes)
    return None


def progress_text(progress: DatasetProgress | None, phase: str | None) -> str:
    """How far a dataset's staging is, in one line: `staging 45% (22.5 MiB of 50.0 MiB, 12 of
    100 files, 3.1 MiB/s, ETA 8s)`.

    With progress figures, whatever the phase: the percent (the copier's, else bytes of the
    total; left out when the total is unknown), then bytes (`of TOTAL` when known), files
    (`12 of 100 files`, or `12 files` without a total), the speed and the ETA when the
    copier gave them (`staging 22.5 MiB, 12 files` when only counts are known). Without
    progress: `staging (starting)` while Staging, else the phase in words (`PHASE_WORDS`:
    `ready`, `pending`, `not seen by the operator yet` for None). Units are binary
    (`human_bytes`); percents are rounded down, so 100% means done."""
    if progress is None:
        if phase == "Staging":
            return "staging (starting)"
        return PHASE_WORDS.get(phase, (phase or "").lower())
    word = "staging" if phase in (None, "Staging") else PHASE_WORDS.get(phase, phase.lower())
    percent = progress_percent(progress)
    head = f"{word} {int(percent)}%" if percent is not None else word
    copied = human_bytes(progress.bytes)
    if progress.total_bytes is not None:
        copied += f" of {human_bytes(progress.total_bytes)}"
    files = (
        f"{progress.files} of {progress.total_files} files"
        if progress.total_files is not None
        else f"{progress.files} file{'' if progress.files == 1 else 's'}"
    )
    parts = [copied, files]
    if progress.bytes_per_second is not None:
        parts.append(f"{human_bytes(progress.bytes_per_second)}/s")
    if progress.eta_seconds is not None:
        parts.append(f"ETA {short_duration(progress.eta_seconds)}")
    if percent is None:
        return f"{head} {', '.join(parts)}"
    return f"{head} ({', '.join(parts)})"
