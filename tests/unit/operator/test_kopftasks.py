"""kopf's stop leaves alone the tasks created outside its run (the servers' connections)."""

from __future__ import annotations

import asyncio

from kopf._cogs.aiokits import aiotasks
from kopf._core.reactor import running

from gryvia_operator.controller import kopftasks


def test_a_kopf_stop_cancels_its_own_tasks_but_not_a_connection_accepted_meanwhile() -> None:
    async def main() -> None:
        assert kopftasks.install()
        stop, ended, never = asyncio.Event(), asyncio.Event(), asyncio.Event()
        tasks: dict[str, asyncio.Task[None]] = {}

        async def root() -> None:  # kopf's root task: ends when the stop flag is raised
            await stop.wait()
            ended.set()

        async def kopf_run() -> None:
            with kopftasks.kopf_context():
                existing = await aiotasks.all_tasks()
                tasks["handler"] = asyncio.create_task(never.wait())  # kopf's own
                await running.run_tasks([asyncio.create_task(root())], ignored=existing)

        run = asyncio.create_task(kopf_run())
        await asyncio.sleep(0)  # kopf has started
        # what aiohttp does for a connection accepted while kopf runs (outside its context)
        connection = asyncio.create_task(never.wait())
        tasks["handler"].cancel()  # a sub-task kopf's root task would stop in its own way
        stop.set()
        await run
        assert ended.is_set()
        assert not connection.done(), "kopf's stop cancelled a task that is not kopf's"
        connection.cancel()

    asyncio.run(main())


def test_tasks_created_inside_a_kopf_run_are_kopfs() -> None:
    async def main() -> None:
        assert kopftasks.install()
        never = asyncio.Event()
        with kopftasks.kopf_context():
            inside = asyncio.create_task(never.wait())
        outside = asyncio.create_task(never.wait())
        listed = await aiotasks.all_tasks()
        assert inside in listed and outside not in listed
        inside.cancel()
        outside.cancel()

    asyncio.run(main())
