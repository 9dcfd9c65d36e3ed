"""Issue 21 part 6 against the sandbox, operator running with `--enable-inference` and
`--enable-model-registry`.

A registry with autoServe (a GryviaInferenceService template whose image and command name
`$(model.version)` and `$(model.artifact)`): `gryvia model promote` of version 1 makes the
operator create the service serving 1; the policy refuses a version below its accuracy
threshold; promoting version 2 rolls the service (spec, status.servingVersion, the
Deployment's image and command) to 2, and `gryvia model rollback` returns it to 1.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import SandboxHandle
from tests.support.cli import run_gryvia
from tests.support.operator import OperatorProcess
from tests.support.wait import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.sandbox]


@pytest.fixture(scope="module")
def registry_operator(
    sandbox: SandboxHandle, operator: OperatorProcess
) -> Iterator[OperatorProcess]:
    """The session's operator (it runs with --enable-inference and --enable-model-registry)."""
    yield operator


@pytest.fixture(scope="module")
def space(sandbox: SandboxHandle, registry_operator: OperatorProcess) -> Iterator[str]:
    with sandbox.fresh_namespace("models") as name:
        yield name


def gryvia(sandbox: SandboxHandle, tmp: Path, *args: str, ok: bool = True) -> Any:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRYVIA_")}
    env |= {
        "KUBECONFIG": str(sandbox.kubeconfig),
        "GRYVIA_CONFIG_HOME": str(tmp / "config"),
        "NO_COLOR": "1",
    }
    done = run_gryvia(*args, env=env)
    if ok:
        assert done.returncode == 0, done.stderr
    return done


def registry(space: str) -> dict[str, Any]:
    return {
        "apiVersion": "gryvia.io/v1alpha1",
        "kind": "GryviaModelRegistry",
        "metadata": {"name": "web", "namespace": space},
        "spec": {
            "modelName": "web-model",
            "versions": [
                {
                    "version": "1",
                    "artifacts": {"uri": "s3://models/web/1"},
                    "metrics": {"accuracy": 0.91},
                    "stage": "Staging",
                }
            ],
            "promotionPolicy": {
                "fromStages": ["Staging"],
                "metrics": [{"metric": "accuracy", "min": 0.9}],
            },
            "autoServe": {
                "template": {
                    "image": "example/model-server:$(model.version)",
                    "port": 8080,
                    "command": ["sh", "-c", "echo serving $(model.artifact); exec sleep 3600"],
                }
            },
        },
    }


def served(sandbox: SandboxHandle, ns: str, version: str) -> None:
    """Wait until the service, its Deployment and the registry all serve `version`."""

    def check() -> bool:
        isvc = sandbox.kubectl_json("get", "gryviainferenceservice", "-n", ns, "web")
        reg = sandbox.kubectl_json("get", "gryviamodelregistry", "-n", ns, "web")
        return (
            isvc["spec"].get("version") == version
            and (isvc.get("status") or {}).get("servingVersion") == version
            and (reg.get("status") or {}).get("servingVersion") == version
            and reg["status"].get("phase") == "Ready"
        )

    wait_for(check, timeout=120, what=f"version {version} served")
    dep = sandbox.kubectl_json("get", "deployment", "-n", ns, "web")
    (ctr,) = dep["spec"]["template"]["spec"]["containers"]
    assert ctr["image"] == f"example/model-server:{version}"
    assert ctr["command"] == [
        "sh",
        "-c",
        f"echo serving s3://models/web/{version}; exec sleep 3600",
    ]
    env = {e["name"]: e["value"] for e in ctr["env"]}
    assert env["GRYVIA_MODEL_VERSION"] == version
    assert env["GRYVIA_MODEL_ARTIFACT"] == f"s3://models/web/{version}"
    labels = dep["spec"]["template"]["metadata"]["labels"]
    assert labels["gryvia.io/model-version"] == version


def test_promote_serves_then_rollback_returns(
    sandbox: SandboxHandle, space: str, tmp_path: Path
) -> None:
    sandbox.apply(registry(space), namespace=space, verb="create")
    m = ("-n", space)
    gryvia(sandbox, tmp_path, "model", "register", "web", "2", "--uri", "s3://models/web/2",
           "--metric", "accuracy=0.95", "--stage", "Staging", *m)  # fmt: skip
    gryvia(sandbox, tmp_path, "model", "register", "web", "3", "--uri", "s3://models/web/3",
           "--metric", "accuracy=0.5", "--stage", "Staging", *m)  # fmt: skip

    gryvia(sandbox, tmp_path, "model", "promote", "web", "1", "--yes", *m)
    served(sandbox, space, "1")
    isvc = sandbox.kubectl_json("get", "gryviainferenceservice", "-n", space, "web")
    owner = isvc["metadata"]["ownerReferences"][0]
    assert (owner["kind"], owner["name"]) == ("GryviaModelRegistry", "web")

    refused = gryvia(sandbox, tmp_path, "model", "promote", "web", "3", "--yes", *m, ok=False)
    assert refused.returncode != 0
    assert "spec.promotionPolicy.metrics[0]" in refused.stderr
    assert "accuracy=0.5, below the minimum 0.9" in refused.stderr

    gryvia(sandbox, tmp_path, "model", "promote", "web", "2", "--yes", *m)
    served(sandbox, space, "2")
    reg = sandbox.kubectl_json("get", "gryviamodelregistry", "-n", space, "web")
    assert reg["status"]["productionVersion"] == "2"
    assert reg["status"]["previousProduction"] == "1"
    stages = {v["version"]: v["stage"] for v in reg["spec"]["versions"]}
    assert stages == {"1": "Archived", "2": "Production", "3": "Staging"}
    listing = gryvia(sandbox, tmp_path, "model", "list", *m).stdout
    assert listing.splitlines()[1].split()[:5] == ["web", "web-model", "2", "2", "Ready"]

    gryvia(sandbox, tmp_path, "model", "rollback", "web", "--yes", *m)
    served(sandbox, space, "1")
    reg = sandbox.kubectl_json("get", "gryviamodelregistry", "-n", space, "web")
    stages = {v["version"]: v["stage"] for v in reg["spec"]["versions"]}
    assert stages == {"1": "Production", "2": "Archived", "3": "Staging"}
