"""The chart installed as users install it, with the operator as a pod on a real node (issue 40).

A sandbox with a real node (`gryvia sandbox up --real-node`: a kubelet with containerd) and
its registry, holding the chart and the operator image `make image` built. Then:

- the FAQ's install line, as written (only `--plain-http` added, since the sandbox's registry
  speaks HTTP): both operator replicas run on the real node from the image, one leads;
- `gryvia submit` of the single-GPU example: the in-cluster operator makes its Job and the
  job runs on a simulated H100 node;
- an invalid job is denied by the webhook, reached through the chart's Service;
- `helm upgrade` to a new image tag while a thread sends a dry-run job every 200 ms: every
  one is answered by the webhook (none fails), and the pods run the new tag after;
- `helm uninstall` leaves no operator pod.

Needs `make node-bin` and `make image` (as root): `make test-all` builds both; `make test`
deselects this file (marker `test_all`).
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gryvia_cli.sandbox import binaries, cluster, registry
from gryvia_cli.sandbox.nodeconf import NODE_NAME
from tests.builders import make_job
from tests.support.wait import wait_for

pytestmark = [
    pytest.mark.integration,
    pytest.mark.test_all("needs make node-bin and make image, as root"),
]

ROOT = Path(__file__).resolve().parents[2]
NS = "gryvia-system"
EXAMPLE = ROOT / "examples" / "train-single-gpu.yaml"
IMAGE = "localhost/gryvia-operator:{version}"
FAQ_LINE = ("--namespace", NS, "--create-namespace", "--set", "auth.apiKey=a-long-random-secret")


@pytest.fixture(scope="module")
def box(tmp_path_factory: pytest.TempPathFactory) -> Iterator[cluster.Sandbox]:
    """A sandbox with one H100 node, one CPU node and the real node (and its registry)."""
    home = tmp_path_factory.mktemp("real-node-home")
    previous = os.environ.get("GRYVIA_SANDBOX_HOME")
    os.environ["GRYVIA_SANDBOX_HOME"] = str(home)
    name = f"r{os.getpid()}-{uuid.uuid4().hex[:4]}"
    try:
        yield cluster.up(name, "1xH100:8,1xcpu", with_real_node=True)
    finally:
        cluster.down(name)
        if previous is None:
            os.environ.pop("GRYVIA_SANDBOX_HOME", None)
        else:
            os.environ["GRYVIA_SANDBOX_HOME"] = previous


def _run(argv: list[str], *, check: bool = True, stdin: str | None = None) -> str:
    done = subprocess.run(argv, input=stdin, capture_output=True, text=True, timeout=400)
    if check and done.returncode != 0:
        raise AssertionError(f"{' '.join(argv[:4])} ... failed:\n{done.stdout}\n{done.stderr}")
    return done.stdout + done.stderr


def _kubectl(box: cluster.Sandbox, *args: str, check: bool = True, stdin: str | None = None) -> str:
    argv = [str(binaries.path_of("kubectl")), "--kubeconfig", str(box.kubeconfig), *args]
    return _run(argv, check=check, stdin=stdin)


def _helm(box: cluster.Sandbox, *args: str) -> str:
    return _run([str(binaries.path_of("helm")), "--kubeconfig", str(box.kubeconfig), *args])


def _operator_pods(box: cluster.Sandbox) -> list[dict[str, Any]]:
    selector = "app.kubernetes.io/component=operator"
    out = _kubectl(box, "get", "pods", "-n", NS, "-l", selector, "-o", "json")
    items: list[dict[str, Any]] = json.loads(out)["items"]
    return items


def _ready(pod: dict[str, Any]) -> bool:
    conditions = (pod.get("status") or {}).get("conditions") or []
    return any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)


def _running_image(box: cluster.Sandbox, image: str) -> list[dict[str, Any]] | None:
    """The operator pods when there are exactly two, all Ready on the real node with
    `image` and none terminating; else None."""
    pods = _operator_pods(box)
    ok = len(pods) == 2 and all(
        _ready(p)
        and p["spec"].get("nodeName") == NODE_NAME
        and p["spec"]["containers"][0]["image"] == image
        and not p["metadata"].get("deletionTimestamp")
        for p in pods
    )
    return pods if ok else None


class DryRuns(threading.Thread):
    """Creates one valid job with `--dry-run=server` every 200 ms until stopped; keeps the
    failures (the job goes through the webhook: failurePolicy Fail)."""

    def __init__(self, box: cluster.Sandbox, manifest: str) -> None:
        super().__init__(daemon=True)
        self.box, self.manifest = box, manifest
        self.stop = threading.Event()
        self.sent = 0
        self.failures: list[str] = []

    def run(self) -> None:
        tick = time.monotonic()
        while not self.stop.is_set():
            out = subprocess.run(
                [str(binaries.path_of("kubectl")), "--kubeconfig", str(self.box.kubeconfig),
                 "create", "--dry-run=server", "-o", "name", "-f", "-"],
                input=self.manifest, capture_output=True, text=True, timeout=60,
            )  # fmt: skip
            self.sent += 1
            if out.returncode != 0:
                self.failures.append(out.stderr.strip())
            tick += 0.2
            self.stop.wait(max(0.0, tick - time.monotonic()))


def test_the_faq_install_runs_the_operator_on_the_real_node(box: cluster.Sandbox) -> None:
    from gryvia_cli import __version__

    notes: list[str] = []
    chart = registry.publish(box, notes.append)
    where = registry.address(box)
    pushed = f"{where}/{registry.IMAGE_REPOSITORY}:{__version__}"
    assert f"pushed the operator image: {pushed}" in notes, notes

    # The FAQ's line: the chart's default image (ghcr.io/gryvia/gryvia-operator:<appVersion>)
    # is pulled from the sandbox's registry, ghcr.io's mirror on the real node.
    _helm(box, "install", "gryvia", chart, "--plain-http", *FAQ_LINE)
    image = f"ghcr.io/{registry.IMAGE_REPOSITORY}:{__version__}"
    pods = wait_for(lambda: _running_image(box, image), timeout=300, what="2 Ready operator pods")
    holder = json.loads(_kubectl(box, "get", "lease", "-n", NS, "gryvia-operator", "-o", "json"))
    assert holder["spec"]["holderIdentity"] in {p["metadata"]["name"] for p in pods}

    # A job submitted with the CLI runs on the simulated H100 node, reconciled by the pod.
    env = {**os.environ, "KUBECONFIG": str(box.kubeconfig), "NO_COLOR": "1"}
    submit = subprocess.run(
        [str(ROOT / ".venv/bin/gryvia"), "submit", "-f", str(EXAMPLE),
         "-n", "default", "--wait", "--wait-timeout", "3m"],
        env=env, capture_output=True, text=True, timeout=240,
    )  # fmt: skip
    assert submit.returncode == 0, submit.stdout + submit.stderr
    job_pods = json.loads(
        _kubectl(box, "get", "pods", "-n", "default", "-l", "gryvia.io/job=train-single-gpu",
                 "-o", "json")
    )["items"]  # fmt: skip
    assert {p["spec"]["nodeName"] for p in job_pods} == {"gpu-h100-0"}

    # An invalid job is denied by the webhook behind the chart's Service.
    # (the schema allows it; the shared validation does not)
    bad = make_job("bad-timeout", "default").timeout("0s").image("busybox").command("true")
    denied = _kubectl(box, "create", "-f", "-", stdin=json.dumps(bad.manifest()), check=False)
    webhook = 'admission webhook "gryviaaijobs.validate.gryvia.io"'  # the chart's name
    assert f"{webhook} denied the request" in denied, denied
    assert 'spec.timeout: duration must be positive, got "0s"' in denied

    # helm upgrade to a new tag: admission answers throughout.
    tag = f"{__version__}-upgrade"
    assert registry.push_image(IMAGE.format(version=__version__), where, tag)
    good = make_job("dry-run-probe", "default").gpus(1).gpu_type("H100").image("busybox")
    probe = DryRuns(box, json.dumps(good.command("true").manifest()))
    probe.start()
    wait_for(lambda: probe.sent >= 3 or None, timeout=30, what="the first dry runs")
    _helm(box, "upgrade", "gryvia", chart, "--plain-http", "-n", NS, "--reuse-values",
          "--set", f"image.tag={tag}")  # fmt: skip
    new_image = f"ghcr.io/{registry.IMAGE_REPOSITORY}:{tag}"
    wait_for(lambda: _running_image(box, new_image), timeout=300, what="the upgraded pods")
    sent_at_upgrade = probe.sent
    wait_for(lambda: probe.sent >= sent_at_upgrade + 5 or None, timeout=30, what="more dry runs")
    probe.stop.set()
    probe.join(timeout=70)
    assert probe.failures == [], probe.failures[:3]
    assert probe.sent >= 10

    _helm(box, "uninstall", "gryvia", "-n", NS, "--wait", "--timeout", "120s")
    assert wait_for(lambda: not _operator_pods(box) or None, timeout=60, what="no operator pods")
