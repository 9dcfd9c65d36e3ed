"""The operator as the chart runs it on the sandbox's real node: its pods, and a thread that
checks admission keeps answering (for `tests/integration/test_real_node.py` and
`tests/bench_realnode.py`)."""

from __future__ import annotations

import json
import subprocess
import threading
import time
from typing import Any

from gryvia_cli.sandbox import binaries
from gryvia_cli.sandbox.nodeconf import NODE_NAME
from gryvia_cli.sandbox.sandboxes import Sandbox
from tests.builders import make_job

NS = "gryvia-system"
SELECTOR = "app.kubernetes.io/component=operator"
WEBHOOK = 'admission webhook "gryviaaijobs.validate.gryvia.io" denied the request'
"""How the API server reports a denial by the chart's job webhook."""
FAQ_LINE = ("--namespace", NS, "--create-namespace", "--set", "auth.apiKey=a-long-random-secret")
"""The FAQ's `helm install` options after the chart reference."""


def kubectl(box: Sandbox, *args: str, check: bool = True, stdin: str | None = None) -> str:
    """Run kubectl on `box`; stdout and stderr together. Raises AssertionError on failure
    when `check`."""
    argv = [str(binaries.path_of("kubectl")), "--kubeconfig", str(box.kubeconfig), *args]
    done = subprocess.run(argv, input=stdin, capture_output=True, text=True, timeout=400)
    if check and done.returncode != 0:
        raise AssertionError(f"kubectl {' '.join(args[:3])} failed:\n{done.stdout}{done.stderr}")
    return done.stdout + done.stderr


def helm(box: Sandbox, *args: str) -> str:
    """Run helm on `box`; its stdout. Raises AssertionError on failure."""
    argv = [str(binaries.path_of("helm")), "--kubeconfig", str(box.kubeconfig), *args]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=400)
    if done.returncode != 0:
        raise AssertionError(f"helm {' '.join(args[:2])} failed:\n{done.stdout}{done.stderr}")
    return done.stdout


def operator_pods(box: Sandbox) -> list[dict[str, Any]]:
    """The chart's operator pods (terminating ones included)."""
    out = kubectl(box, "get", "pods", "-n", NS, "-l", SELECTOR, "-o", "json")
    items: list[dict[str, Any]] = json.loads(out)["items"]
    return items


def ready(pod: dict[str, Any]) -> bool:
    """True when the pod's Ready condition is True."""
    conditions = (pod.get("status") or {}).get("conditions") or []
    return any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)


def running_image(box: Sandbox, image: str, count: int = 2) -> list[dict[str, Any]] | None:
    """The operator pods when there are exactly `count`, all Ready on the real node with
    `image` and none terminating; else None."""
    pods = operator_pods(box)
    ok = len(pods) == count and all(
        ready(p)
        and p["spec"].get("nodeName") == NODE_NAME
        and p["spec"]["containers"][0]["image"] == image
        and not p["metadata"].get("deletionTimestamp")
        for p in pods
    )
    return pods if ok else None


def leader(box: Sandbox) -> str:
    """The holder of the operator's Lease ("" when none)."""
    lease = json.loads(kubectl(box, "get", "lease", "-n", NS, "gryvia-operator", "-o", "json"))
    return str(lease["spec"].get("holderIdentity") or "")


def webhook_only_invalid(name: str) -> str:
    """A job the CRD schema accepts and the webhook denies (a zero timeout), as JSON."""
    job = make_job(name, "default").timeout("0s").image("busybox").command("true")
    return json.dumps(job.manifest())


class DryRuns(threading.Thread):
    """Sends the webhook-only-invalid job with `--dry-run=server` every `period` seconds until
    `stop` is set. An answer is the webhook's denial; anything else (accepted: the chart's
    `failurePolicy: Ignore` let it through unanswered; an error) is kept in `failures`."""

    def __init__(self, box: Sandbox, period: float = 0.2) -> None:
        super().__init__(daemon=True)
        self.box, self.period = box, period
        self.manifest = webhook_only_invalid("dry-run-probe")
        self.stop = threading.Event()
        self.sent = 0
        self.failures: list[str] = []

    def run(self) -> None:
        """Send until stopped, one every `period` s (later when a reply takes longer)."""
        tick = time.monotonic()
        while not self.stop.is_set():
            out = kubectl(
                self.box, "create", "--dry-run=server", "-f", "-", check=False, stdin=self.manifest
            )
            self.sent += 1
            if WEBHOOK not in out:
                self.failures.append(out.strip())
            tick += self.period
            self.stop.wait(max(0.0, tick - time.monotonic()))
