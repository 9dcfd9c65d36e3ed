"""Issue 41's storage acceptance and point 3 against the session operator and the sandbox's
real local-path provisioner: jobs shaped like the FAQ's best-practice job (`storage` naming a
GryviaStorage, `storageRequest: 500Gi`, one H100 here instead of eight A100s) share the
namespace's claim `gryvia-data-<backend>`. What a first job writes under `/data`, a second job
reads after the first is deleted (the claim has no owner), and a guarded job's checkpoints go
to `/data/checkpoints/<job>` on that claim, which `gryvia status JOB` names with the last
committed step.

Pods of the sandbox run as processes in a folder of their own, where the volume is a link at
`data`: the scripts use relative paths (a literal `/data` would be the host's).
"""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path
from typing import Any

import pytest

from gryvia_cli.sandbox import cluster, storage
from tests.builders import sh_job
from tests.conftest import SandboxHandle, wait_phase
from tests.support.cli import run_gryvia
from tests.support.operator import OperatorProcess
from tests.support.wait import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.sandbox]
API = "gryvia.io/v1alpha1"
CHECKPOINT = (
    'd="${GRYVIA_CHECKPOINT_DIR#/}" && mkdir -p "$d/step-7" && echo weights > "$d/step-7/w" '
    "&& echo GRYVIA_CHECKPOINT_COMMITTED step=7"
)
"""A trainer that saves step 7 into its checkpoint folder (relative: see the module's note)
and commits it."""


def _log(sandbox: SandboxHandle, ns: str, job: str) -> str:
    pods = sandbox.kubectl_json("get", "pods", "-n", ns, "-l", f"gryvia.io/job={job}")
    name = pods["items"][0]["metadata"]["name"]
    return sandbox.kubectl_run("logs", "-n", ns, name).stdout.strip()


def _job(name: str, backend: str, script: str, **labels: str) -> dict[str, Any]:
    body = sh_job(
        name, gpus=1, gpu_type="H100", script=script, storage=backend, storageRequest="500Gi"
    )
    if labels:
        body["metadata"]["labels"] = labels
    return body


def test_jobs_share_the_namespaces_claim_and_checkpoints_outlive_the_job(
    sandbox: SandboxHandle, live_operator: OperatorProcess, namespace: str, tmp_path: Path
) -> None:
    storage.start(cluster.Sandbox(sandbox.name), lambda _: None)
    tag = uuid.uuid4().hex[:6]
    backend, token = f"fast-nfs-{tag}", uuid.uuid4().hex
    claim = f"gryvia-data-{backend}"
    sandbox.apply(
        {
            "apiVersion": API,
            "kind": "GryviaStorage",
            "metadata": {"name": backend},
            "spec": {"backend": "existing", "storageClass": storage.STORAGE_CLASS},
        }
    )
    try:
        wait_for(
            lambda: (
                (sandbox.kubectl_json("get", "gryviastorage", backend).get("status") or {}).get(
                    "phase"
                )
                == "Ready"
            ),
            timeout=90,
            what=f"GryviaStorage {backend} Ready",
        )
        write = f"mkdir -p data/run && echo {token} > data/run/out.txt"
        sandbox.apply(_job("writer", backend, write), namespace=namespace)
        done = wait_phase(sandbox, namespace, "writer", "Succeeded", "Failed")
        assert done["status"]["phase"] == "Succeeded", done["status"]
        pvc = sandbox.kubectl_json("get", "pvc", "-n", namespace, claim)
        assert pvc["status"]["phase"] == "Bound"
        assert "ownerReferences" not in pvc["metadata"]
        assert pvc["spec"]["resources"]["requests"]["storage"] == "500Gi"
        sandbox.kubectl_run("delete", "gryviaaijob", "writer", "-n", namespace, "--wait=true")
        assert (
            sandbox.kubectl_run("get", "pvc", "-n", namespace, claim, check=False).returncode == 0
        )

        sandbox.apply(
            {
                "apiVersion": API,
                "kind": "GryviaCheckpointGuard",
                "metadata": {"name": "g"},
                "spec": {
                    "jobSelector": {"matchLabels": {"checkpoint": "on"}},
                    "checkpointPolicy": {"intervalSeconds": 60},
                },
            },
            namespace=namespace,
        )
        read = f"cat data/run/out.txt && {CHECKPOINT}"
        sandbox.apply(_job("reader", backend, read, checkpoint="on"), namespace=namespace)
        done = wait_phase(sandbox, namespace, "reader", "Succeeded", "Failed")
        assert done["status"]["phase"] == "Succeeded", done["status"]
        assert _log(sandbox, namespace, "reader").splitlines()[0] == token
        claims = sandbox.kubectl_json("get", "pvc", "-n", namespace)["items"]
        assert [c["metadata"]["name"] for c in claims] == [claim]  # one claim for both jobs

        volume = sandbox.kubectl_json("get", "pv", pvc["spec"]["volumeName"])
        folder = Path(volume["spec"]["hostPath"]["path"])
        assert (folder / "checkpoints" / "reader" / "step-7" / "w").read_text() == "weights\n"

        def recorded() -> dict[str, str] | None:
            got = sandbox.kubectl_run(
                "get", "configmap", "reader-checkpoint", "-n", namespace, "-o", "json", check=False
            )
            data = json.loads(got.stdout).get("data") or {} if got.returncode == 0 else {}
            return data if data.get("committedSteps") == "7" else None

        data = wait_for(recorded, timeout=60, what="step 7 recorded")
        assert data["directory"] == "/data/checkpoints/reader" and data["claim"] == claim
        env = {k: v for k, v in os.environ.items() if not k.startswith("GRYVIA_")}
        env |= {"KUBECONFIG": str(sandbox.kubeconfig), "NO_COLOR": "1"}
        env["GRYVIA_CONFIG_HOME"] = str(tmp_path / "config")
        shown = run_gryvia("status", "reader", "-n", namespace, env=env)
        line = next(x for x in shown.stdout.splitlines() if x.startswith("Checkpoints:"))
        assert "step 7 (1 committed" in line, line
        assert f"in /data/checkpoints/reader on claim {claim} (GryviaStorage {backend})" in line
        machine = json.loads(
            run_gryvia("status", "reader", "-n", namespace, "-o", "json", env=env).stdout
        )
        assert machine["checkpoints"]["resumeStep"] == "7"
    finally:
        sandbox.kubectl_run("delete", "gryviastorage", backend, "--wait=false", check=False)
