"""Cluster DNS as a hosts file, and CRI log records."""

from __future__ import annotations

import datetime as dt
import io
from pathlib import Path

from gryvia_cli.sandbox.crilog import CriLogWriter, cri_line
from gryvia_cli.sandbox.hosts import PodAddress, ServiceInfo, render_hosts


def test_pods_with_subdomain_and_selected_by_services_resolve() -> None:
    pods = [
        PodAddress("ns", "j-0-x", "127.244.0.1", "j-0", "j-headless", {"app": "j"}),
        PodAddress("ns", "j-1-y", "127.244.0.2", "j-1", "j-headless", {"app": "j"}),
        PodAddress("other", "p", "127.244.0.3", "p", "", {"app": "j"}),
    ]
    text = render_hosts(
        pods, [ServiceInfo("ns", "j-headless", {"app": "j"}), ServiceInfo("ns", "external", {})]
    )
    lines = text.splitlines()
    assert (
        "127.244.0.1\tj-0.j-headless.ns.svc.cluster.local j-0.j-headless.ns.svc "
        "j-0.j-headless.ns" in lines
    )
    assert "127.244.0.2\tj-headless.ns.svc.cluster.local j-headless.ns.svc j-headless.ns" in lines
    assert not any("127.244.0.3\tj-headless" in line for line in lines)  # other namespace
    assert not any("external" in line for line in lines)  # no selector, no endpoints
    assert render_hosts(reversed(pods), []) == render_hosts(pods, [])  # stable order


def test_cri_line_format() -> None:
    when = dt.datetime(2026, 11, 29, 15, 0, 1, 250000, tzinfo=dt.UTC)
    assert cri_line("stdout", b"hello", now=when) == b"2026-11-29T15:00:01.250000Z stdout F hello\n"
    assert cri_line("stderr", b"part", partial=True, now=when).split(b" ")[1:3] == [b"stderr", b"P"]


def test_writer_copies_lines_and_marks_partial_tail(tmp_path: Path) -> None:
    writer = CriLogWriter(tmp_path / "c.log")
    writer.pump(io.BytesIO(b"one\ntwo\nno newline"), "stdout").join()
    writer.close()
    records = [line.split(" ", 3) for line in (tmp_path / "c.log").read_text().splitlines()]
    assert [(r[1], r[2], r[3]) for r in records] == [
        ("stdout", "F", "one"),
        ("stdout", "F", "two"),
        ("stdout", "P", "no newline"),
    ]


def test_names_relative_to_a_namespace_resolve_only_there() -> None:
    pods = [
        PodAddress("a", "j-0-x", "127.244.0.1", "j-0", "j-headless", {"app": "j"}),
        PodAddress("b", "j-0-y", "127.244.0.2", "j-0", "j-headless", {"app": "j"}),
    ]
    in_a = render_hosts(pods, [], namespace="a").splitlines()
    assert any(
        line.startswith("127.244.0.1\t") and line.endswith(" j-0.j-headless") for line in in_a
    )
    assert not any(
        line.startswith("127.244.0.2\t") and line.endswith(" j-0.j-headless") for line in in_a
    )
    assert any("j-0.j-headless.b.svc.cluster.local" in line for line in in_a)


def test_a_failed_wait_carries_the_tails_of_the_component_logs(tmp_path: Path) -> None:
    from gryvia_cli.sandbox.bootstrap import log_tails

    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "kwok-controller.log").write_text("".join(f"line {i}\n" for i in range(40)))
    (logs / "empty.log").write_text("")
    text = log_tails(logs, lines=3)
    assert text == "\n--- kwok-controller.log (last 3 lines)\nline 37\nline 38\nline 39"
    assert log_tails(tmp_path / "missing") == ""
