"""`-o jsonpath=` and `-o custom-columns=` print what kubectl prints for the same GryviaAIJobs
(issue 43 point 4), and `kubectl gryvia` runs the CLI as a kubectl plugin (point 2).

On the bare API server with the CRDs (no operator, no nodes): two jobs created with kubectl,
then each template through `kubectl get gryviaaijobs -n NS -o ...` and through
`gryvia list jobs -n NS -o ...`, compared byte for byte.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.builders import make_job
from tests.integration.test_crds import _kubectl
from tests.integration.test_crds import crds as crds  # a bare server of the module's own
from tests.support.cli import run_gryvia
from tests.support.controlplane import ControlPlane

pytestmark = pytest.mark.integration

TEMPLATES = [
    # range/end, literal text, tab and newline
    'jsonpath={range .items[*]}{.metadata.name}{"\\t"}{.spec.gpus}{"\\n"}{end}',
    # arrays of scalars space-joined
    "jsonpath={.items[*].metadata.name}",
    # filters (string and number) and slices
    'jsonpath={.items[?(@.spec.gpuType=="H100")].metadata.name}',
    "jsonpath={.items[?(@.spec.gpus>2)].spec.command}",
    "jsonpath={.items[:1].metadata.labels} {.items[-1:].metadata.name}",
    # nested maps printed as JSON; missing fields print nothing
    "jsonpath={.items[0].spec}|{.items[*].status.phase}|{.items[*].spec.missing}|",
    "jsonpath={.items[*].metadata.labels.gryvia\\.io/team}",
    # custom columns: headers as given, <none>, Go value forms, several results
    "custom-columns=NAME:.metadata.name,gpus:spec.gpus,TEAM:{.metadata.labels.gryvia\\.io/team}",
    "custom-columns=NAME:.metadata.name,CMD:.spec.command,ENV:.spec.env[*].name,X:.spec.none",
    "custom-columns=LABELS:.metadata.labels,SPEC:.spec.suspend",
]


@pytest.fixture
def jobs_namespace(crds: ControlPlane) -> Iterator[str]:
    """A namespace on the bare server holding two GryviaAIJobs (one labelled, one not)."""
    name = f"kout-{os.urandom(4).hex()}"
    _kubectl(crds, "create", "namespace", name)
    first = make_job("alpha").gpus(8).gpu_type("H100").command("sleep", "600")
    second = make_job("beta").gpus(1).gpu_type("L40").command("python", "train.py", "--lr=0.1")
    docs = [
        first.label("gryvia.io/team", "vision").set(suspend=True).manifest(),
        second.env("MODE", "eval").env("SEED", "7").manifest(),
    ]
    for doc in docs:
        _kubectl(crds, "create", "-n", name, "-f", "-", stdin=json.dumps(doc))
    yield name  # the module's API server (`crds`) goes with the module


def _env(plane: ControlPlane, tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRYVIA_")}
    bindir = str(Path(sys.executable).parent)  # where pip put gryvia and kubectl-gryvia
    env.update(
        KUBECONFIG=str(plane.kubeconfig),
        GRYVIA_CONFIG_HOME=str(tmp_path / "config"),
        NO_COLOR="1",
        PATH=f"{bindir}{os.pathsep}{env.get('PATH', '')}",
    )
    return env


def test_templates_print_what_kubectl_prints(
    crds: ControlPlane, jobs_namespace: str, tmp_path: Path
) -> None:
    env = _env(crds, tmp_path)
    for output in TEMPLATES:
        expected = _kubectl(crds, "get", "gryviaaijobs", "-n", jobs_namespace, "-o", output)
        ours = run_gryvia("list", "jobs", "-n", jobs_namespace, "-o", output, env=env)
        assert ours.returncode == 0, ours.stderr
        assert expected.stdout, output  # every template prints something for these jobs
        assert ours.stdout == expected.stdout, output
    # the -file= forms read the same templates from files
    (tmp_path / "t.jsonpath").write_text("{.items[*].spec.gpuType}")
    (tmp_path / "t.columns").write_text("NAME   GPUS\n.metadata.name   {.spec.gpus}\n")
    for output in (
        f"jsonpath-file={tmp_path}/t.jsonpath",
        f"custom-columns-file={tmp_path}/t.columns",
    ):
        expected = _kubectl(crds, "get", "gryviaaijobs", "-n", jobs_namespace, "-o", output)
        ours = run_gryvia("-o", output, "list", "jobs", "-n", jobs_namespace, env=env)
        assert (ours.returncode, ours.stdout) == (0, expected.stdout), ours.stderr
    # kubectl finds kubectl-gryvia on PATH: the same CLI as a kubectl plugin
    plugin = subprocess.run(
        [str(_kubectl_path()), "gryvia", "queue", "-A", "-o", "jsonpath={.kind}"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert (plugin.returncode, plugin.stdout) == (0, "Queue"), plugin.stderr
    usage = subprocess.run(
        [str(_kubectl_path()), "gryvia", "queue", "--help"], env=env, capture_output=True, text=True
    )
    assert "Usage: kubectl gryvia queue [OPTIONS]" in usage.stdout


def _kubectl_path() -> Path:
    from gryvia_cli.sandbox import binaries

    return Path(binaries.path_of("kubectl"))
