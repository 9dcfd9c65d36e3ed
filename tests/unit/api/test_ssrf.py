"""The SSRF guard: every refused range named, allowed CIDRs, IPv4-mapped addresses, URLs."""

from __future__ import annotations

import pytest

from gryvia_operator.api.ssrf import first_refusal, parse_cidrs, parse_target, refusal


@pytest.mark.parametrize(
    ("address", "label"),
    [
        ("127.0.0.1", "loopback"),
        ("127.9.9.9", "loopback"),
        ("::1", "loopback"),
        ("10.0.0.1", "private (RFC 1918)"),
        ("172.16.5.4", "private (RFC 1918)"),
        ("192.168.1.1", "private (RFC 1918)"),
        ("fd12:3456::1", "unique local (ULA)"),
        ("100.64.0.1", "carrier-grade NAT"),
        ("169.254.169.254", "cloud metadata"),
        ("169.254.10.1", "link-local"),
        ("fe80::1", "link-local"),
        ("224.0.0.251", "multicast"),
        ("ff02::1", "multicast"),
        ("0.0.0.0", "reserved (this network)"),
        ("240.0.0.1", "reserved"),
        ("192.0.2.10", "reserved (not globally routable)"),
        ("::ffff:127.0.0.1", "loopback"),
        ("::ffff:169.254.169.254", "cloud metadata"),
    ],
)
def test_refused_ranges_are_named(address: str, label: str) -> None:
    why = refusal(address)
    assert why is not None
    assert f" is {label}" in why, why


@pytest.mark.parametrize("address", ["8.8.8.8", "1.1.1.1", "2606:4700:4700::1111"])
def test_public_addresses_pass(address: str) -> None:
    assert refusal(address) is None


def test_allowed_cidrs_open_exactly_their_range() -> None:
    allowed = parse_cidrs(["127.0.0.0/8", "10.1.0.0/16", "fd00::/8"])
    assert refusal("127.0.0.1", allowed) is None
    assert refusal("::ffff:127.0.0.1", allowed) is None
    assert refusal("10.1.2.3", allowed) is None
    assert refusal("fd00::5", allowed) is None
    assert refusal("10.2.0.1", allowed) is not None
    assert refusal("::1", allowed) is not None  # IPv4 ranges never allow IPv6 loopback
    assert refusal("169.254.169.254", parse_cidrs(["169.254.169.254"])) is None


def test_bad_cidr_names_the_entry_and_the_form() -> None:
    with pytest.raises(ValueError, match=r"'10.0.0/33'.*like 10.0.0.0/8"):
        parse_cidrs(["127.0.0.0/8", "10.0.0/33"])


def test_first_refusal_names_host_address_and_fix() -> None:
    why = first_refusal("hooks.example", ["8.8.8.8", "10.0.0.1"])
    assert why is not None
    assert why.startswith("hooks.example resolves to 10.0.0.1 is private (RFC 1918)")
    assert "aiOperator.jobHooks.allowedCIDRs" in why
    assert "--job-hook-allowed-cidr" in why
    assert first_refusal("hooks.example", ["8.8.8.8"]) is None
    literal = first_refusal("169.254.169.254", ["169.254.169.254"])
    assert literal is not None and literal.startswith("169.254.169.254 is cloud metadata")


def test_parse_target() -> None:
    assert parse_target("https://h.example/x").port == 443
    assert parse_target("http://[::1]:8080/x").host == "::1"
    with pytest.raises(ValueError, match="http:// or https://"):
        parse_target("ftp://h.example/")
    with pytest.raises(ValueError, match="credentials"):
        parse_target("https://user:pw@h.example/")
