"""The chart installed as users install it, with the operator as a pod on a real node (issue 40).

A sandbox with a real node (`gryvia sandbox up --real-node`: a kubelet with containerd) and
its registry, holding the chart and the operator image `make image` built. Then:

- the FAQ's install line, as written (only `--plain-http` added, since the sandbox's registry
  speaks HTTP): both operator replicas run on the real node from the image, one leads;
- `gryvia submit` of the single-GPU example: the in-cluster operator makes its Job and the
  job runs on a simulated H100 node;
- an invalid job is denied by the webhook, reached through the chart's Service;
- `helm upgrade` to a new image tag while a thread sends a dry-run of a job only the webhook
  refuses every 200 ms: every one is denied by the webhook (the chart's `failurePolicy` is
  Ignore, so one it did not answer would be accepted), and the pods run the new tag after;
- `helm uninstall` leaves no operator pod.

Needs `make node-bin` and `make image` (as root): `make test-all` builds both; `make test`
deselects this file (marker `test_all`).
"""

from __future__ import annotations

import json
import os
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from gryvia_cli.sandbox import cluster, registry
from tests.support.realnode import (
    FAQ_LINE,
    NS,
    WEBHOOK,
    DryRuns,
    helm,
    kubectl,
    leader,
    operator_pods,
    running_image,
    webhook_only_invalid,
)
from tests.support.wait import wait_for

pytestmark = [
    pytest.mark.integration,
    pytest.mark.test_all("needs make node-bin and make image, as root"),
]

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "train-single-gpu.yaml"
IMAGE = "localhost/gryvia-operator:{version}"


@pytest.fixture(scope="module")
def box(tmp_path_factory: pytest.TempPathFactory) -> Iterator[cluster.Sandbox]:
    """A sandbox with one H100 node, one CPU node and the real node (and its registry)."""
    name = f"r{os.getpid()}-{uuid.uuid4().hex[:4]}"
    with pytest.MonkeyPatch.context() as env:
        env.setenv("GRYVIA_SANDBOX_HOME", str(tmp_path_factory.mktemp("real-node-home")))
        try:
            yield cluster.up(name, "1xH100:8,1xcpu", with_real_node=True)
        finally:
            cluster.down(name)


def test_the_faq_install_runs_the_operator_on_the_real_node(box: cluster.Sandbox) -> None:
    from gryvia_cli import __version__

    notes: list[str] = []
    chart = registry.publish(box, notes.append)
    where = registry.address(box)
    pushed = f"{where}/{registry.IMAGE_REPOSITORY}:{__version__}"
    assert f"pushed the operator image: {pushed}" in notes, notes

    # The FAQ's line: the chart's default image (ghcr.io/gryvia/gryvia-operator:<appVersion>)
    # is pulled from the sandbox's registry, ghcr.io's mirror on the real node.
    helm(box, "install", "gryvia", chart, "--plain-http", *FAQ_LINE)
    image = f"ghcr.io/{registry.IMAGE_REPOSITORY}:{__version__}"
    pods = wait_for(lambda: running_image(box, image), timeout=300, what="2 Ready operator pods")
    assert leader(box) in {p["metadata"]["name"] for p in pods}

    # A job submitted with the CLI runs on the simulated H100 node, reconciled by the pod.
    env = {**os.environ, "KUBECONFIG": str(box.kubeconfig), "NO_COLOR": "1"}
    submit = subprocess.run(
        [str(ROOT / ".venv/bin/gryvia"), "submit", "-f", str(EXAMPLE),
         "-n", "default", "--wait", "--wait-timeout", "3m"],
        env=env, capture_output=True, text=True, timeout=240,
    )  # fmt: skip
    assert submit.returncode == 0, submit.stdout + submit.stderr
    selector = "gryvia.io/job=train-single-gpu"
    job_pods = json.loads(
        kubectl(box, "get", "pods", "-n", "default", "-l", selector, "-o", "json")
    )
    assert {p["spec"]["nodeName"] for p in job_pods["items"]} == {"gpu-h100-0"}

    # An invalid job (the schema allows it, the shared validation does not) is denied by the
    # webhook behind the chart's Service.
    denied = kubectl(box, "create", "-f", "-", stdin=webhook_only_invalid("bad"), check=False)
    assert WEBHOOK in denied, denied
    assert 'spec.timeout: duration must be positive, got "0s"' in denied

    # helm upgrade to a new tag: the webhook answers throughout. The chart's failurePolicy is
    # Ignore, so an unanswered dry run would be accepted: every one must be denied instead.
    tag = f"{__version__}-upgrade"
    assert registry.push_image(IMAGE.format(version=__version__), where, tag)
    probe = DryRuns(box)
    probe.start()
    wait_for(lambda: probe.sent >= 3 or None, timeout=30, what="the first dry runs")
    helm(box, "upgrade", "gryvia", chart, "--plain-http", "-n", NS, "--reuse-values",
         "--set", f"image.tag={tag}")  # fmt: skip
    new_image = f"ghcr.io/{registry.IMAGE_REPOSITORY}:{tag}"
    wait_for(lambda: running_image(box, new_image), timeout=300, what="the upgraded pods")
    sent_at_upgrade = probe.sent
    wait_for(lambda: probe.sent >= sent_at_upgrade + 5 or None, timeout=30, what="more dry runs")
    probe.stop.set()
    probe.join(timeout=70)
    assert probe.failures == [], probe.failures[:3]
    assert probe.sent >= 10

    helm(box, "uninstall", "gryvia", "-n", NS, "--wait", "--timeout", "120s")
    assert wait_for(lambda: not operator_pods(box) or None, timeout=60, what="no operator pods")
