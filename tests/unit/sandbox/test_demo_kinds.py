"""The demo's object of every kind: the local hook receiver (a process of the sandbox that
answers POSTs and logs them) and the manifests as seeded (the hook aimed at the receiver, the
workspace's home volume first)."""

from __future__ import annotations

import json
import os
import signal
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from gryvia_cli.sandbox import demokinds, hookreceiver
from gryvia_cli.sandbox.sandboxes import Sandbox

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "demo"


@pytest.fixture
def box(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Sandbox]:
    monkeypatch.setenv("GRYVIA_SANDBOX_HOME", str(tmp_path))
    sandbox = Sandbox("demo")
    for folder in ("pids", "logs"):
        (sandbox.workdir / folder).mkdir(parents=True)
    yield sandbox
    pid = sandbox.pids().get(hookreceiver.RECEIVER)
    if pid is not None:
        os.kill(pid, signal.SIGKILL)


def test_receiver_answers_posts_logs_them_and_is_started_once(box: Sandbox) -> None:
    url = hookreceiver.start(box)
    assert url.startswith(f"http://{hookreceiver.HOST}:") and url.endswith("/gryvia")
    assert hookreceiver.start(box) == url  # running: the same process
    body = json.dumps({"namespace": "research", "name": "mmlu-eval"}).encode()
    request = urllib.request.Request(
        url,
        data=body,
        headers={"X-Gryvia-Event": "Succeeded", "X-Gryvia-Delivery": "succeeded-0-abc"},
    )
    with urllib.request.urlopen(request, timeout=10) as answer:
        assert answer.status == 204
    log = box.workdir / "logs" / f"{hookreceiver.RECEIVER}.log"
    deadline = time.monotonic() + 10
    while "succeeded-0-abc" not in log.read_text() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert log.read_text().splitlines() == ["Succeeded research/mmlu-eval succeeded-0-abc"]


def test_seeded_manifests_aim_the_hook_at_the_receiver_after_the_home_volume(
    box: Sandbox,
) -> None:
    docs = [d for d in yaml.safe_load_all((EXAMPLES / demokinds.MANIFEST).read_text()) if d]
    seeded = demokinds.prepared(box, docs)
    assert seeded[0]["kind"] == "PersistentVolume"
    assert seeded[0]["spec"]["storageClassName"] == demokinds.HOME_CLASS
    assert Path(seeded[0]["spec"]["hostPath"]["path"]).is_dir()
    (hook,) = [d for d in seeded if d["kind"] == "GryviaJobHook"]
    assert hook["spec"]["webhook"]["url"] == hookreceiver.url(box)
    kinds = {d["kind"] for d in seeded}
    assert {
        "GryviaReservation",
        "GryviaPriority",
        "GryviaJobHook",
        "GryviaWorkflow",
        "GryviaAutoTuner",
        "GryviaWorkspace",
        "GryviaInferenceService",
        "GryviaModelRegistry",
    } <= kinds
