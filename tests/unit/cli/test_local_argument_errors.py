"""Arguments checked before anything is sent: an invalid object name for the create commands
and a bad local side of `port-forward` are usage errors (exit 2) naming the argument, with no
cluster needed (no fake access is given, so any API call would fail differently)."""

from __future__ import annotations

import socket

import pytest

from tests.unit.cli.helpers import run


@pytest.mark.parametrize(
    ("args", "noun"),
    [
        (["hook", "create", "h[2]", "--url", "http://x", "--event", "Failed"], "hook name"),
        (["priority", "create", "Urgent", "--value", "90"], "priority name"),
        (["checkpoint", "create", "ck_1", "-l", "a=b"], "checkpoint guard name"),
    ],
)
def test_invalid_names_are_refused_before_any_request(args: list[str], noun: str) -> None:
    result = run(args)
    assert result.exit_code == 2, result.output
    assert f"NAME {args[2]!r} is not a valid {noun}" in result.output
    assert "RFC 1123" in result.output


def test_port_forward_names_a_bad_address_and_a_busy_port() -> None:
    bad = run(["port-forward", "job", "8000", "--address", "999.1.1.1"])
    assert bad.exit_code == 2, bad.output
    assert "--address 999.1.1.1: not an address of this machine" in bad.output
    assert "port" not in bad.output.split("hint")[0].replace("port-forward", "")
    with socket.create_server(("127.0.0.1", 0)) as busy:
        port = busy.getsockname()[1]
        taken = run(["port-forward", "job", f"{port}:80"])
    assert taken.exit_code == 2, taken.output
    assert f"local port {port} on 127.0.0.1: cannot listen (Address already in use)" in taken.output
