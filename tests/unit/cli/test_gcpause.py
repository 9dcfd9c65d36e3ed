"""The cycle collector pause around bulk parsing (gryvia_cli.gcpause)."""

from __future__ import annotations

import gc
import threading

from gryvia_cli.gcpause import paused, settle


def test_nested_pauses_restore_the_collector_only_at_the_outermost_end() -> None:
    assert gc.isenabled()
    with paused():
        assert not gc.isenabled()
        with paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the outer block still runs
    assert gc.isenabled()


def test_a_collector_that_was_off_stays_off() -> None:
    gc.disable()
    try:
        with paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_overlapping_pauses_of_two_threads_end_with_the_collector_on() -> None:
    inside, release = threading.Event(), threading.Event()

    def other() -> None:
        with paused():
            inside.set()
            release.wait(10)

    thread = threading.Thread(target=other)
    thread.start()
    assert inside.wait(10)
    with paused():
        release.set()
        thread.join(10)
        assert not gc.isenabled()  # the other thread ended its block first: still paused here
    assert gc.isenabled()


def test_settle_moves_what_exists_into_the_permanent_generation() -> None:
    before = gc.get_freeze_count()
    kept = [{"job": i} for i in range(1000)]
    try:
        settle()
        assert gc.get_freeze_count() >= before + len(kept)
    finally:
        gc.unfreeze()
