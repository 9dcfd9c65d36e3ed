"""A dataset's staging progress in words (gryvia_operator/api/datasettext.py): binary sizes,
ETAs, and the progress line with known and unknown totals."""

from __future__ import annotations

import pytest

from gryvia_operator.api.dataset import DatasetProgress
from gryvia_operator.api.datasettext import human_bytes, progress_text, short_duration

MIB = 2**20


@pytest.mark.parametrize(
    ("count", "text"),
    [
        (0, "0 B"),
        (-5, "0 B"),
        (1023, "1023 B"),
        (1024, "1.0 KiB"),
        (1536, "1.5 KiB"),
        (int(22.5 * MIB), "22.5 MiB"),
        (2**30 - 1, "1.0 GiB"),  # not 1024.0 MiB
        (3 * 2**40 // 2, "1.5 TiB"),
        (2**70, "1024.0 EiB"),
        (3.3e6, "3.1 MiB"),
    ],
)
def test_human_bytes_in_binary_units_with_one_decimal(count: float, text: str) -> None:
    assert human_bytes(count) == text


def test_short_duration_keeps_the_two_largest_units() -> None:
    assert [short_duration(s) for s in (-3, 0, 8, 60, 125, 3600, 3780, 90000)] == [
        "0s",
        "0s",
        "8s",
        "1m",
        "2m5s",
        "1h",
        "1h3m",
        "1d1h",
    ]


def test_progress_with_every_figure() -> None:
    progress = DatasetProgress(
        bytes=int(22.5 * MIB),
        total_bytes=50 * MIB,
        files=12,
        total_files=100,
        percent=45.0,
        bytes_per_second=3.1 * MIB,
        eta_seconds=8,
    )
    assert progress_text(progress, "Staging") == (
        "staging 45% (22.5 MiB of 50.0 MiB, 12 of 100 files, 3.1 MiB/s, ETA 8s)"
    )


def test_progress_percent_from_the_totals_rounded_down() -> None:
    progress = DatasetProgress(bytes=999, total_bytes=1000, files=3, total_files=4)
    assert progress_text(progress, "Staging") == "staging 99% (999 B of 1000 B, 3 of 4 files)"


def test_progress_with_unknown_totals_has_no_percent() -> None:
    progress = DatasetProgress(bytes=int(22.5 * MIB), files=12, bytes_per_second=1024.0)
    assert progress_text(progress, "Staging") == "staging 22.5 MiB, 12 files, 1.0 KiB/s"
    one = DatasetProgress(bytes=10, files=1, total_bytes=0)
    assert progress_text(one, None) == "staging 10 B of 0 B, 1 file"


def test_without_progress_the_phase_in_words() -> None:
    assert progress_text(None, "Staging") == "staging (starting)"
    assert progress_text(None, "Ready") == "ready"
    assert progress_text(None, "Pending") == "pending"
    assert progress_text(None, None) == "not seen by the operator yet"
    done = DatasetProgress(bytes=100, total_bytes=100, files=2, total_files=2)
    assert progress_text(done, "Ready") == "ready 100% (100 B of 100 B, 2 of 2 files)"
