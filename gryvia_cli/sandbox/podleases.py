"""Pod addresses of the sandbox's pod runner: leased with a network namespace on the sandbox
bridge (`netplan`, `podnet`), or, without a pod network or for `hostNetwork` pods, a loopback
address in the host's network (127.244.0.1 onwards). Thread-safe."""

from __future__ import annotations

import itertools
import threading

from gryvia_cli.sandbox import netplan, podnet
from gryvia_cli.sandbox.netplan import SandboxNet


class PodLeases:
    """Who holds which address, while its network namespace exists."""

    def __init__(self, network: SandboxNet | None) -> None:
        self.network = network
        self._pool = netplan.AddressPool(network.subnet) if network else None
        self._leases: dict[str, str] = {}  # pod uid -> address
        self._loopback = itertools.count(1)
        self._lock = threading.Lock()

    def lease(self, uid: str, *, host_network: bool) -> str:
        """Return a new address for pod `uid`: in its own network namespace on the sandbox's
        bridge, else (no pod network, or `hostNetwork`) a loopback address in the host's
        network. Raises NetworkPlanError (range exhausted) or NetworkError (`ip` failed)."""
        if self.network is None or self._pool is None or host_network:
            n = next(self._loopback)
            return f"127.{244 + (n >> 16) % 10}.{(n >> 8) & 255}.{n & 255}"
        with self._lock:
            ip = self._pool.allocate()
        try:
            podnet.setup_pod(self.network, ip)
        except podnet.NetworkError:
            with self._lock:
                self._pool.release(ip)
            raise
        with self._lock:
            self._leases[uid] = ip
        return ip

    def netns(self, uid: str) -> str:
        """The network namespace of pod `uid`'s lease ("" without one: host network)."""
        with self._lock:
            ip = self._leases.get(uid)
        return self.network.netns(ip) if self.network is not None and ip else ""

    def release(self, uid: str) -> bool:
        """Remove pod `uid`'s namespace and give its address back; True when it held one
        (once: later calls return False)."""
        with self._lock:
            ip = self._leases.pop(uid, None)
        if ip is None or self.network is None or self._pool is None:
            return ip is not None
        podnet.teardown_pod(self.network, ip)
        with self._lock:
            self._pool.release(ip)
        return True
