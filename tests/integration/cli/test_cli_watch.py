"""`list jobs -w`, `queue -w N` and `capacity -w N` against the sandbox: a change shows up in
the running watch within seconds (well before the N-second refresh), and Ctrl-C exits 0."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from tests.builders import make_job
from tests.conftest import SandboxHandle
from tests.support.cli import sigint_as_at_a_terminal
from tests.support.wait import wait_for

DEADLINE = 30.0
"""Seconds a change may take to reach the watch's output (under load, 2 cores)."""


def suspended_job(name: str, gpu_type: str = "T4", gpus: int = 2) -> dict[str, Any]:
    builder = make_job(name).gpus(gpus).gpu_type(gpu_type).image("busybox")
    return builder.command("sleep", "1").suspend().manifest()


def frames(text: str) -> list[dict[str, Any]]:
    """The JSON documents printed one after another (the last one may be incomplete)."""
    decoder, found, index = json.JSONDecoder(), [], 0
    while True:
        start = text.find("{", index)
        if start < 0:
            return found
        try:
            doc, index = decoder.raw_decode(text, start)
        except ValueError:
            return found
        found.append(doc)


class Watch:
    """A running `gryvia ...` whose stdout and stderr are collected by threads."""

    def __init__(self, args: tuple[str, ...], env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "gryvia_cli", *args],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            preexec_fn=sigint_as_at_a_terminal,
        )
        self.out: list[str] = []
        self.err: list[str] = []
        for stream, sink in ((self.proc.stdout, self.out), (self.proc.stderr, self.err)):
            threading.Thread(target=self._drain, args=(stream, sink), daemon=True).start()

    @staticmethod
    def _drain(stream: Any, sink: list[str]) -> None:
        for line in stream:
            sink.append(line)

    @property
    def stdout(self) -> str:
        return "".join(self.out)

    def interrupt(self) -> int:
        """Ctrl-C; the exit code."""
        self.proc.send_signal(signal.SIGINT)
        return self.proc.wait(timeout=30)


@contextmanager
def watching(*args: str, env: dict[str, str]) -> Iterator[Watch]:
    watch = Watch(args, env)
    try:
        yield watch
    finally:
        if watch.proc.poll() is None:
            watch.proc.kill()
            watch.proc.wait()


def test_list_jobs_watch_appends_a_row_per_change(
    sandbox: SandboxHandle, namespace: str, cli_env: dict[str, str]
) -> None:
    sandbox.apply(suspended_job("first"), namespace=namespace, verb="create")
    with watching("list", "jobs", "-n", namespace, "-w", env=cli_env) as watch:
        wait_for(lambda: "first" in watch.stdout, timeout=DEADLINE, what="the first table")
        assert watch.stdout.splitlines()[0].split() == [
            "NAME",
            "USER",
            "TYPE",
            "GPUS",
            "GPU",
            "TYPE",
            "STATUS",
            "AGE",
        ]
        sandbox.apply(suspended_job("second"), namespace=namespace, verb="create")
        line = wait_for(
            lambda: next((ln for ln in watch.out[2:] if ln.startswith("second ")), None),
            timeout=DEADLINE,
            what="a row for the new job",
        )
        assert watch.stdout.index("first") < watch.stdout.index(line)
        assert watch.stdout.count("NAME") == 1  # rows are appended, the header is not repeated
        assert watch.interrupt() == 0, "".join(watch.err)


def test_queue_and_capacity_watch_redraw_on_a_change(
    sandbox: SandboxHandle, namespace: str, cli_env: dict[str, str]
) -> None:
    with (
        watching("queue", "-n", namespace, "-w", "600", env=cli_env) as queue,
        watching("capacity", "--gpu-type", "L4", "-w", "600", "-o", "json", env=cli_env) as cap,
    ):
        wait_for(lambda: queue.err or queue.out, timeout=DEADLINE, what="the first queue")
        wait_for(lambda: '"Capacity"' in cap.stdout, timeout=DEADLINE, what="the first capacity")
        assert "waits" not in queue.stdout
        sandbox.apply(
            suspended_job("waits", gpu_type="L4", gpus=3), namespace=namespace, verb="create"
        )
        wait_for(lambda: "waits" in queue.stdout, timeout=DEADLINE, what="the job in the queue")
        try:
            wait_for(
                lambda: '"suspended": 3' in cap.stdout,  # the first frame had no job
                timeout=DEADLINE,
                what="a capacity redraw with the 3 suspended GPUs",
            )
        except AssertionError as exc:
            raise AssertionError(
                f"{exc}\nstdout: {cap.stdout[-1500:]}\nstderr: {cap.err}"
            ) from None
        assert queue.interrupt() == 0, "".join(queue.err)
        assert cap.interrupt() == 0, "".join(cap.err)
