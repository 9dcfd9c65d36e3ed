"""The sandbox's cluster DNS, as a hosts file the pod runner bind-mounts over /etc/hosts.

Pure rendering. Names follow Kubernetes DNS for Services and Pods: a pod with `hostname` and
`subdomain` is `<hostname>.<subdomain>.<ns>.svc.cluster.local`; a Service is
`<svc>.<ns>.svc.cluster.local` and resolves to the addresses of the pods it selects (the sandbox
has no kube-proxy, so every Service behaves as headless).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

DOMAIN = "cluster.local"


@dataclass(frozen=True)
class PodAddress:
    """What the hosts file needs of one running pod."""

    namespace: str
    name: str
    ip: str
    hostname: str
    subdomain: str
    labels: Mapping[str, str]


@dataclass(frozen=True)
class ServiceInfo:
    """What the hosts file needs of one Service."""

    namespace: str
    name: str
    selector: Mapping[str, str]


def _names(first: str, ns: str, here: str | None) -> list[str]:
    names = [f"{first}.{ns}.svc.{DOMAIN}", f"{first}.{ns}.svc", f"{first}.{ns}"]
    return [*names, first] if ns == here else names


def render_hosts(
    pods: Iterable[PodAddress], services: Iterable[ServiceInfo], namespace: str | None = None
) -> str:
    """Return hosts-file text: localhost, every addressable pod, every Service's pods.

    Fully qualified names of every namespace are listed; names relative to `namespace`
    (`<hostname>.<subdomain>`, `<service>`) only for pods and Services in it, as the search
    path `<namespace>.svc.cluster.local` of a pod there resolves them. Output is sorted, so
    equal inputs give equal text (the runner skips unchanged writes).
    """
    pods = list(pods)
    lines = ["127.0.0.1\tlocalhost", "::1\tlocalhost ip6-localhost ip6-loopback"]
    entries: set[tuple[str, str]] = set()
    for pod in pods:
        entries.add((pod.ip, f"{pod.ip.replace('.', '-')}.{pod.namespace}.pod.{DOMAIN}"))
        if pod.subdomain:
            name = f"{pod.hostname}.{pod.subdomain}"
            entries.add((pod.ip, " ".join(_names(name, pod.namespace, namespace))))
    for svc in services:
        if not svc.selector:
            continue
        for pod in pods:
            if pod.namespace == svc.namespace and all(
                pod.labels.get(k) == v for k, v in svc.selector.items()
            ):
                entries.add((pod.ip, " ".join(_names(svc.name, svc.namespace, namespace))))
    lines += [f"{ip}\t{names}" for ip, names in sorted(entries)]
    return "\n".join(lines) + "\n"
