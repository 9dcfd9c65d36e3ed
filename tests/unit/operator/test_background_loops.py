"""A background loop of the operator that ends with an exception is logged by name."""

from __future__ import annotations

import asyncio
import logging

import pytest

from gryvia_operator.controller.runtime import _report_end


def test_a_loop_that_raises_is_logged_and_a_cancelled_one_is_not(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def broken() -> None:
        raise RuntimeError("403 Forbidden: gryviagpuskus")

    async def forever() -> None:
        await asyncio.Event().wait()

    async def main() -> None:
        failed = asyncio.create_task(broken(), name="metering")
        failed.add_done_callback(_report_end)
        stopped = asyncio.create_task(forever(), name="quota")
        stopped.add_done_callback(_report_end)
        await asyncio.sleep(0)
        stopped.cancel()
        await asyncio.gather(failed, stopped, return_exceptions=True)

    with caplog.at_level(logging.ERROR, logger="gryvia.operator"):
        asyncio.run(main())
    lines = [r.getMessage() for r in caplog.records]
    assert lines == ["background loop metering stopped: 403 Forbidden: gryviagpuskus"]
