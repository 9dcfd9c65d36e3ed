"""`python -m gryvia_operator.release_finalizers`: remove the `gryvia.io/save-log` finalizer
from every job pod, for when no operator will be there to honour it.

The chart runs it as a `pre-delete` hook (`helm uninstall`), before the operator, its RBAC and
the CRDs go, so that job pods deleted afterwards (the CRDs' deletion deletes every GryviaAIJob
and, through the owner references, its pods) are not held in `Terminating` forever. An admin
can run it by hand after scaling the operator to 0 (`gryvia status` says when pods wait).

It always exits 0 once it has tried every pod (failures are printed), so that a pod it could
not patch never blocks an uninstall, and 0 too when it finds no API server configuration;
exit 2 when it cannot list the pods at all (the hook Job then retries).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from gryvia_operator.api.names import LABEL_JOB
from gryvia_operator.controller.kubeapi import (
    Conflict,
    Invalid,
    KubeApi,
    KubeError,
    NotFound,
    load_configuration,
)
from gryvia_operator.reconcile.savedlogs import finalizer_removal

ATTEMPTS = 5
"""Patches tried per pod (its finalizer list may change between the read and the patch)."""


async def release_pod(api: KubeApi, pod: Mapping[str, Any]) -> bool:
    """Remove the finalizer from one pod (re-reading it when its finalizer list changed);
    True when the pod no longer carries it. Raises KubeError on other API errors."""
    meta = pod["metadata"]
    name, ns = str(meta["name"]), str(meta["namespace"])
    current: Mapping[str, Any] = pod
    for _ in range(ATTEMPTS):
        ops = finalizer_removal(current)
        if ops is None:
            return True
        try:
            await api.json_patch("Pod", name, ops, ns)
            return True
        except NotFound:
            return True
        except (Invalid, Conflict):
            try:
                current = await api.get("Pod", name, ns)
            except NotFound:
                return True
    return False


async def release_all(api: KubeApi, namespace: str | None = None) -> tuple[int, list[str]]:
    """Remove the finalizer from every job pod (of `namespace`, else of every namespace):
    (pods released, `ns/pod: error` for each pod that still carries it)."""
    pods = await api.list("Pod", namespace, label_selector=LABEL_JOB)
    released, failed = 0, []
    for pod in pods:
        if finalizer_removal(pod) is None:
            continue
        meta = pod["metadata"]
        where = f"{meta['namespace']}/{meta['name']}"
        try:
            if await release_pod(api, pod):
                released += 1
            else:
                failed.append(f"{where}: its finalizer list kept changing")
        except KubeError as exc:
            failed.append(f"{where}: {exc}")
    return released, failed


def main(argv: Sequence[str] | None = None) -> int:
    """Parse the arguments, release the finalizers, print what was done."""
    parser = argparse.ArgumentParser(
        prog="python -m gryvia_operator.release_finalizers",
        description="Remove the gryvia.io/save-log finalizer from every Gryvia job pod "
        "(use when the operator is uninstalled or scaled to 0).",
    )
    parser.add_argument(
        "--namespace", "-n", action="append", help="only this namespace (repeat; default: all)"
    )
    parser.add_argument(
        "--kubeconfig", type=Path, help="kubeconfig (default: in-cluster, else $KUBECONFIG)"
    )
    parser.add_argument("--context", help="kubeconfig context")
    args = parser.parse_args(argv)
    try:
        configuration = load_configuration(args.kubeconfig, args.context)
    except Exception as exc:  # no in-cluster account, no kubeconfig: never block an uninstall
        print(f"warning: no API server to talk to ({exc}); nothing released", file=sys.stderr)
        return 0
    api = KubeApi(configuration, workers=4)
    released = 0
    failed: list[str] = []
    try:
        for namespace in args.namespace or [None]:
            count, errors = asyncio.run(release_all(api, namespace))
            released, failed = released + count, failed + errors
    except KubeError as exc:
        print(f"error: cannot list the job pods: {exc}", file=sys.stderr)
        return 2
    finally:
        api.close()
    print(f"removed the gryvia.io/save-log finalizer from {released} pod(s)")
    for line in failed:
        print(f"warning: {line}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
