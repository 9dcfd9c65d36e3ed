"""The sandbox's pod network, planned: address ranges, device and namespace names, commands.

Pure. Each sandbox gets one Linux bridge and one /16 of the CGNAT shared address space
(100.64.0.0/10, never routed on the internet), chosen so that it overlaps no route or address
of the machine (other sandboxes' bridges included). The bridge holds the range's first address;
each pod gets a network namespace with a veth pair into the bridge, the next free address, and
a default route via the bridge. Nothing is NATed or forwarded off the machine.

Names are derived from the sandbox's folder (`net_id`, 6 hex digits), so leftovers of a
crashed sandbox can be found and removed by prefix: the bridge `gs<id>-<name>`, pod veths
`gv<id><offset>` (host side; `eth0` inside the pod), pod namespaces `gryvia-<id>-<offset>`,
where offset is the pod address's offset in the range, in hex. Interface names fit Linux's
15 characters.
"""

from __future__ import annotations

import hashlib
import ipaddress
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

POOL = ipaddress.IPv4Network("100.64.0.0/10")
PREFIX = 16
NETWORK_FILE = "network.json"  # in the sandbox's state folder
IFNAME_MAX = 15
POD_IFNAME = "eth0"


class NetworkPlanError(ValueError):
    """No address range or address is free, or a recorded plan cannot be read."""


def net_id(workdir: str) -> str:
    """Return the 6-hex-digit id of the sandbox living in folder `workdir` (an absolute path):
    the same folder always gives the same id, so leftovers are found again."""
    return hashlib.sha256(workdir.encode()).hexdigest()[:6]


def bridge_name(name: str, nid: str) -> str:
    """Return the bridge's interface name for sandbox `name` with id `nid` (<= 15 chars; the
    name is cut, without a trailing '-')."""
    return f"gs{nid}-{name}"[:IFNAME_MAX].rstrip("-")


def parse_taken(routes: Iterable[Mapping[str, Any]]) -> list[ipaddress.IPv4Network]:
    """Return the IPv4 networks in use on this machine from `ip -4 -j route show table all`
    entries (`dst` such as "10.0.0.0/24" or "10.0.0.1"); the default route is left out, since
    a more specific route to a sandbox's bridge does not disturb it."""
    out = []
    for route in routes:
        dst = str(route.get("dst", ""))
        if not dst or dst == "default":
            continue
        try:
            out.append(ipaddress.IPv4Network(dst, strict=False))
        except ValueError:
            continue
    return out


def choose_subnet(
    nid: str, taken: Iterable[ipaddress.IPv4Network], pool: ipaddress.IPv4Network = POOL
) -> ipaddress.IPv4Network:
    """Return the first /16 of `pool`, starting at one derived from `nid` and wrapping around,
    that overlaps none of `taken`. Raises NetworkPlanError when all are taken."""
    taken = list(taken)
    candidates = list(pool.subnets(new_prefix=PREFIX))
    start = int(nid, 16) % len(candidates)
    for subnet in candidates[start:] + candidates[:start]:
        if not any(subnet.overlaps(t) for t in taken):
            return subnet
    raise NetworkPlanError(f"every /{PREFIX} of {pool} overlaps a route of this machine")


@dataclass(frozen=True)
class SandboxNet:
    """One sandbox's network: its id, bridge and address range (the bridge has the first)."""

    net_id: str
    bridge: str
    subnet: ipaddress.IPv4Network

    @property
    def gateway(self) -> str:
        """The bridge's address: the pods' default route."""
        return str(self.subnet.network_address + 1)

    def offset(self, ip: str) -> int:
        """Return `ip`'s offset in the range. Raises NetworkPlanError when outside it."""
        addr = ipaddress.IPv4Address(ip)
        if addr not in self.subnet:
            raise NetworkPlanError(f"{ip} is not in {self.subnet}")
        return int(addr) - int(self.subnet.network_address)

    def netns(self, ip: str) -> str:
        """Return the name of the network namespace of the pod with address `ip`."""
        return f"gryvia-{self.net_id}-{self.offset(ip):04x}"

    def veth(self, ip: str) -> str:
        """Return the host-side veth name of the pod with address `ip` (<= 15 chars)."""
        return f"gv{self.net_id}{self.offset(ip):04x}"

    def to_json(self) -> str:
        """Return the plan as the JSON text recorded in the state folder."""
        return json.dumps({"netId": self.net_id, "bridge": self.bridge, "subnet": str(self.subnet)})

    @classmethod
    def from_json(cls, text: str) -> SandboxNet:
        """Read a plan written by `to_json`. Raises NetworkPlanError when malformed."""
        try:
            data = json.loads(text)
            return cls(
                str(data["netId"]), str(data["bridge"]), ipaddress.IPv4Network(data["subnet"])
            )
        except (ValueError, KeyError, TypeError) as exc:
            raise NetworkPlanError(f"unreadable network plan: {exc}") from exc


def plan_network(name: str, workdir: str, taken: Iterable[ipaddress.IPv4Network]) -> SandboxNet:
    """Return the network of sandbox `name` in folder `workdir`, given the networks `taken`.

    Raises NetworkPlanError when no range is free."""
    nid = net_id(workdir)
    return SandboxNet(nid, bridge_name(name, nid), choose_subnet(nid, taken))


class AddressPool:
    """Hands out pod addresses of one range: the bridge's (first) is never given, addresses
    are reused only after release, and the search resumes after the last one given, so a
    released address rests as long as possible. Not thread-safe: callers hold a lock."""

    def __init__(self, subnet: ipaddress.IPv4Network) -> None:
        self._base = int(subnet.network_address)
        self._size = subnet.num_addresses
        self._used: set[int] = set()
        self._next = 2

    def allocate(self) -> str:
        """Return a free address. Raises NetworkPlanError when every address is in use."""
        for step in range(self._size - 3):  # network, bridge and broadcast are never given
            offset = 2 + (self._next - 2 + step) % (self._size - 3)
            if offset not in self._used:
                self._used.add(offset)
                self._next = offset + 1
                return str(ipaddress.IPv4Address(self._base + offset))
        raise NetworkPlanError("every pod address of the sandbox is in use")

    def release(self, ip: str) -> None:
        """Give `ip` back (no-op when it was not given)."""
        self._used.discard(int(ipaddress.IPv4Address(ip)) - self._base)


# -- commands: `ip -batch -` input, one command per line -----------------------------------


def bridge_up_batch(net: SandboxNet) -> list[str]:
    """Commands that create the bridge with its address, up."""
    return [
        f"link add name {net.bridge} type bridge",
        f"addr add {net.gateway}/{net.subnet.prefixlen} dev {net.bridge}",
        f"link set {net.bridge} up",
    ]


def pod_up_batches(net: SandboxNet, ip: str) -> tuple[list[str], list[str]]:
    """Return (host commands, commands inside the pod's namespace) that give the pod with
    address `ip` its namespace, a veth pair into the bridge, loopback and a default route."""
    ns, veth = net.netns(ip), net.veth(ip)
    host = [
        f"netns add {ns}",
        f"link add {veth} type veth peer name {POD_IFNAME} netns {ns}",
        f"link set {veth} master {net.bridge} up",
    ]
    inside = [
        "link set lo up",
        f"addr add {ip}/{net.subnet.prefixlen} dev {POD_IFNAME}",
        f"link set {POD_IFNAME} up",
        f"route add default via {net.gateway}",
    ]
    return host, inside


def pod_down_batch(net: SandboxNet, ip: str) -> list[str]:
    """Commands (run with `-force`) that remove the pod's veth pair and namespace."""
    return [f"link del {net.veth(ip)}", f"netns del {net.netns(ip)}"]


def leftovers_batch(
    nid: str, links: Iterable[str], namespaces: Iterable[str], *, pods_only: bool = False
) -> list[str]:
    """Commands (run with `-force`) that remove every device and namespace of sandbox `nid`
    among `links` and `namespaces` (names as `ip link` and `ip netns` list them): pod veths
    and namespaces, and the bridge (with its address) unless `pods_only`."""
    out = [f"link del {link}" for link in sorted(links) if link.startswith(f"gv{nid}")]
    out += [f"netns del {ns}" for ns in sorted(namespaces) if ns.startswith(f"gryvia-{nid}-")]
    if not pods_only:
        out += [f"link del {link}" for link in sorted(links) if link.startswith(f"gs{nid}-")]
    return out


def netns_argv(netns: str, argv: Sequence[str]) -> list[str]:
    """Return `argv` run inside network namespace `netns` (`nsenter` execs, keeping the pid)."""
    return ["nsenter", f"--net=/run/netns/{netns}", "--", *argv]
