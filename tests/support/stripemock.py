"""stripe-mock, Stripe's own offline API server (a Go module, `make stripe-mock-bin`), as a
local process on a loopback port for the Stripe test-mode tests.

It answers every call of Stripe's API with its fixtures after validating the request against
Stripe's OpenAPI specification; it keeps no state between calls (docs/billing.md, "Stripe
test mode")."""

from __future__ import annotations

import contextlib
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

from gryvia_cli.sandbox import binaries
from tests.support.ports import free_port
from tests.support.wait import wait_for


def stripe_mock_path() -> Path:
    """The built stripe-mock; AssertionError naming the fix when it is not built."""
    path = binaries.bin_dir() / "stripe-mock"
    assert path.is_file(), f"stripe-mock is not built ({path}): run `make stripe-mock-bin`"
    return path


def _listening(port: int) -> bool:
    with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.5):
        return True
    return False


@contextlib.contextmanager
def stripe_mock(log: Path) -> Iterator[str]:
    """Run stripe-mock on 127.0.0.1 (HTTP) for the block; yields its base URL."""
    port = free_port()
    with log.open("ab") as out:
        proc = subprocess.Popen(
            [str(stripe_mock_path()), "-http-addr", f"127.0.0.1:{port}"],
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:

        def up() -> bool:
            assert proc.poll() is None, f"stripe-mock exited with {proc.returncode}; see {log}"
            return _listening(port)

        wait_for(up, timeout=60, interval=0.1, what=f"stripe-mock on port {port}")
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
