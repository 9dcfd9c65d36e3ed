"""`gryvia submit --sbatch ... --dry-run` never needs a cluster (issue 39, point 2): a script
with `--account` (or an `--exclusive` that wants the nodes' GPUs) converts without one and
says what it skipped."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from typer.testing import CliRunner

from gryvia_cli.cli.session import Session
from gryvia_cli.errors import GryviaError

SCRIPT = """#!/bin/bash
#SBATCH --account=vision
#SBATCH --gres=gpu:1
#SBATCH --time=00:10:00
python train.py
"""


def _no_cluster(_state: Any) -> Any:
    raise GryviaError("no kubeconfig found (KUBECONFIG is unset and ~/.kube/config is missing)")


def test_a_client_dry_run_with_account_needs_no_cluster(tmp_path: Path) -> None:
    from gryvia_cli.main import app

    script = tmp_path / "t.sh"
    script.write_text(SCRIPT)
    args = ["submit", "--sbatch", str(script), "--image", "img", "--dry-run", "-o", "yaml"]
    result = CliRunner().invoke(app, args, obj=Session(access_factory=_no_cluster))
    assert result.exit_code == 0, result.output
    assert "--account: the cluster could not be read (no kubeconfig found" in result.stderr
    docs = [d for d in yaml.safe_load_all(result.stdout) if d]
    assert [d["kind"] for d in docs] == ["GryviaAIJob", "ConfigMap"]
    assert docs[0]["spec"]["gpus"] == 1
    # the runtime ConfigMap the job reads is printed too (issue 39, finding 6)
    refs = {
        (e.get("valueFrom") or {}).get("configMapKeyRef", {}).get("name")
        for e in docs[0]["spec"].get("env") or []
    }
    assert docs[1]["metadata"]["name"] in refs


def test_submit_takes_whole_nodes_with_node_gpus_as_convert_does(tmp_path: Path) -> None:
    from gryvia_cli.main import app
    from tests.unit.sbatch.helpers import sbatch

    script = tmp_path / "x.sh"
    script.write_bytes(sbatch("-N 2", "--exclusive"))
    base = ["submit", "--sbatch", str(script), "--image", "img", "--dry-run", "-o", "yaml"]
    state = Session(access_factory=_no_cluster)
    refused = CliRunner().invoke(app, base, obj=state)
    assert refused.exit_code != 0 and "--node-gpus" in refused.stderr
    result = CliRunner().invoke(app, [*base, "--node-gpus", "H100=8"], obj=state)
    assert result.exit_code == 0, result.output
    (job,) = [d for d in yaml.safe_load_all(result.stdout) if d and d["kind"] == "GryviaAIJob"]
    assert (job["spec"]["gpus"], job["spec"]["gpuType"]) == (8, "H100")
    bad = CliRunner().invoke(app, [*base, "--node-gpus", "H100"], obj=state)
    assert bad.exit_code == 2 and "is not TYPE=N" in bad.output
