"""The pod network plan: ranges per sandbox, addresses per pod, names, `ip` commands."""

from __future__ import annotations

import ipaddress
from pathlib import Path

import pytest

from gryvia_cli.sandbox.netplan import (
    POOL,
    AddressPool,
    NetworkPlanError,
    SandboxNet,
    bridge_name,
    choose_subnet,
    leftovers_batch,
    net_id,
    netns_argv,
    parse_taken,
    plan_network,
    pod_down_batch,
    pod_up_batches,
)
from gryvia_cli.sandbox.processes import HOSTS_SHIM, namespaced_argv

NET = SandboxNet("0a1b2c", "gs0a1b2c-demo", ipaddress.IPv4Network("100.70.0.0/16"))
ROUTES = [
    {"dst": "default", "gateway": "192.0.2.1", "dev": "eth0"},
    {"dst": "192.0.2.0/24", "dev": "eth0"},
    {"type": "local", "dst": "127.0.0.1", "dev": "lo", "table": "local"},
    {"dst": "100.64.0.0/16", "dev": "gsffffff-other"},
]


def test_ids_and_names_are_stable_and_fit_linux_interface_names() -> None:
    nid = net_id("/home/u/.local/state/gryvia/sandbox/clusters/sandbox")
    assert nid == net_id("/home/u/.local/state/gryvia/sandbox/clusters/sandbox")
    assert nid != net_id("/tmp/other/clusters/sandbox")  # same name, other home
    assert len(nid) == 6 and int(nid, 16) >= 0
    long = bridge_name("a-very-long-sandbox-name-of-32-ch", nid)
    assert long == f"gs{nid}-a-very" and len(long) == 15
    assert bridge_name("x", nid) == f"gs{nid}-x"
    assert bridge_name("bench-1234", nid) == f"gs{nid}-bench"
    ip = "100.70.1.2"
    assert NET.offset(ip) == 258
    assert NET.netns(ip) == "gryvia-0a1b2c-0102"
    assert NET.veth(ip) == "gv0a1b2c0102" and len(NET.veth("100.70.255.254")) <= 15
    assert NET.gateway == "100.70.0.1"
    with pytest.raises(NetworkPlanError):
        NET.offset("100.71.0.2")


def test_taken_networks_come_from_routes_without_the_default_route() -> None:
    assert parse_taken(ROUTES) == [
        ipaddress.IPv4Network("192.0.2.0/24"),
        ipaddress.IPv4Network("127.0.0.1/32"),
        ipaddress.IPv4Network("100.64.0.0/16"),
    ]


def test_each_sandbox_gets_a_range_no_route_or_other_sandbox_uses() -> None:
    taken = parse_taken(ROUTES)
    first = plan_network("a", "/h/clusters/a", taken)
    assert first.subnet.subnet_of(POOL) and first.subnet.prefixlen == 16
    assert not any(first.subnet.overlaps(t) for t in taken)
    # the second sandbox sees the first one's bridge route and gets another range
    second = plan_network("b", "/h/clusters/b", [*taken, first.subnet])
    assert second.subnet != first.subnet
    # the choice starts at a range derived from the id and wraps around
    assert choose_subnet("000000", []) == ipaddress.IPv4Network("100.64.0.0/16")
    assert choose_subnet("00003f", []) == ipaddress.IPv4Network("100.127.0.0/16")
    wide = [ipaddress.IPv4Network("100.127.0.0/16")]
    assert choose_subnet("00003f", wide) == ipaddress.IPv4Network("100.64.0.0/16")
    with pytest.raises(NetworkPlanError, match="overlaps a route"):
        choose_subnet("000001", [ipaddress.IPv4Network("100.64.0.0/10")])


def test_plan_round_trips_through_the_state_file() -> None:
    assert SandboxNet.from_json(NET.to_json()) == NET
    with pytest.raises(NetworkPlanError):
        SandboxNet.from_json('{"netId": "x"}')


def test_address_pool_skips_the_bridge_and_reuses_only_released_addresses() -> None:
    pool = AddressPool(ipaddress.IPv4Network("10.9.0.0/29"))  # 10.9.0.2 .. 10.9.0.6
    got = [pool.allocate() for _ in range(5)]
    assert got == ["10.9.0.2", "10.9.0.3", "10.9.0.4", "10.9.0.5", "10.9.0.6"]
    with pytest.raises(NetworkPlanError, match="in use"):
        pool.allocate()
    pool.release("10.9.0.4")
    pool.release("10.9.0.3")
    assert pool.allocate() == "10.9.0.3"  # wraps around, first free after the last given
    assert pool.allocate() == "10.9.0.4"
    pool.release("10.9.0.6")
    pool.release("10.9.0.2")
    assert pool.allocate() == "10.9.0.6"  # resumes after the last given, not at the start


def test_pod_commands_give_a_namespace_veth_loopback_and_default_route() -> None:
    host, inside = pod_up_batches(NET, "100.70.0.9")
    assert host == [
        "netns add gryvia-0a1b2c-0009",
        "link add gv0a1b2c0009 type veth peer name eth0 netns gryvia-0a1b2c-0009",
        "link set gv0a1b2c0009 master gs0a1b2c-demo up",
    ]
    assert inside == [
        "link set lo up",
        "addr add 100.70.0.9/16 dev eth0",
        "link set eth0 up",
        "route add default via 100.70.0.1",
    ]
    assert pod_down_batch(NET, "100.70.0.9") == [
        "link del gv0a1b2c0009",
        "netns del gryvia-0a1b2c-0009",
    ]
    assert netns_argv("gryvia-0a1b2c-0009", ["sh", "-c", "x"]) == [
        "nsenter",
        "--net=/run/netns/gryvia-0a1b2c-0009",
        "--",
        "sh",
        "-c",
        "x",
    ]


def test_leftovers_are_found_by_prefix_and_only_for_this_sandbox() -> None:
    links = ["lo", "eth0", "gs0a1b2c-demo", "gv0a1b2c0002", "gv0a1b2c0003", "gsffffff-x", "gvfff"]
    namespaces = ["gryvia-0a1b2c-0002", "gryvia-ffffff-0002", "mine"]
    assert leftovers_batch("0a1b2c", links, namespaces) == [
        "link del gv0a1b2c0002",
        "link del gv0a1b2c0003",
        "netns del gryvia-0a1b2c-0002",
        "link del gs0a1b2c-demo",
    ]
    pods = leftovers_batch("0a1b2c", links, namespaces, pods_only=True)
    assert "link del gs0a1b2c-demo" not in pods and len(pods) == 3


def test_a_container_enters_the_pod_network_then_its_mount_and_uts_namespaces() -> None:
    argv = netns_argv(
        NET.netns("100.70.0.9"), namespaced_argv(["python3", "-V"], Path("/h/ns"), "p-0")
    )
    assert argv == [
        "nsenter",
        "--net=/run/netns/gryvia-0a1b2c-0009",
        "--",
        "unshare",
        "--mount",
        "--uts",
        "--propagation",
        "private",
        "--",
        "sh",
        "-c",
        HOSTS_SHIM,
        "/h/ns",
        "p-0",
        "python3",
        "-V",
    ]
