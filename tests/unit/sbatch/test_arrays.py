"""The `%N` throttle: which suspended array elements to release."""

from __future__ import annotations

from gryvia_cli.sbatch.arrays import ArrayElement, element_from_job, plan_release


def elements(states: str) -> list[ArrayElement]:
    """One element per letter: r running, s suspended, d done."""
    return [
        ArrayElement(f"a-{i}", i, suspended=state == "s", finished=state == "d")
        for i, state in enumerate(states)
    ]


def test_nothing_is_released_while_the_limit_is_reached() -> None:
    assert plan_release(elements("rrssss"), 2) == []


def test_finished_elements_free_slots_lowest_index_first() -> None:
    assert plan_release(elements("drssss"), 2) == ["a-2"]
    assert plan_release(elements("ddssss"), 2) == ["a-2", "a-3"]
    assert plan_release(elements("dddsds"), 3) == ["a-3", "a-5"]


def test_no_limit_releases_everything_waiting() -> None:
    assert plan_release(elements("rss"), None) == ["a-1", "a-2"]


def test_elements_are_read_from_jobs() -> None:
    job = {
        "metadata": {"name": "e-7", "labels": {"gryvia.io/array-index": "7"}},
        "spec": {"suspend": True},
        "status": {"phase": "Succeeded"},
    }
    assert element_from_job(job) == ArrayElement("e-7", 7, suspended=True, finished=True)
