"""The README's demo, non-interactive: `gryvia demo check` on a fresh sandbox home, with Kueue
when the machine allows it (root and `make kueue-bin`, as in CI: `make test` builds it), else
without, saying why."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from gryvia_cli.sandbox import kueue
from tests.support.cli import run_gryvia
from tests.tui.demoviews import visit

pytestmark = [pytest.mark.integration, pytest.mark.sandbox, pytest.mark.slow]


def test_demo_check_sets_up_every_state_and_down_cleans_up(tmp_path: Path) -> None:
    user_config = tmp_path / "kube" / "config"  # stands for ~/.kube/config
    env = os.environ | {
        "GRYVIA_SANDBOX_HOME": str(tmp_path / "home"),
        "NO_COLOR": "1",
        "KUBECONFIG": str(user_config),
    }

    def gryvia(*args: str) -> subprocess.CompletedProcess[str]:
        return run_gryvia(*args, env=env, timeout=600)

    with_kueue = not kueue.missing()  # the demo's own default
    try:
        check = gryvia("demo", "check", "--timeout", "300")
        assert check.returncode == 0, check.stdout + check.stderr
        assert f"all {24 if with_kueue else 21} demo checks passed" in check.stderr
        if with_kueue:  # Kueue, not Gryvia's gate, holds the over-quota job: no borrowing
            assert "Kueue on:" in check.stderr
            assert "Kueue holds tenant-vision/resnet-sweep-b" in check.stdout
            assert "gryvia-vision   gryvia" in check.stdout  # the ClusterQueues' table
        else:
            assert f"Kueue off: {kueue.missing()}" in check.stderr
        for name in ("llama-ddp", "resnet-sweep-b", "legacy-v100-eval", "slurm-ranks"):
            assert name in check.stdout
        assert "nlp-monthly=" in check.stdout and "vision-monthly=" in check.stdout  # budgets
        again = gryvia("demo", "check", "--timeout", "120")  # idempotent on a running demo
        assert again.returncode == 0, again.stderr
        assert not user_config.exists(), "demo check leaves the kubeconfig alone"

        # another shell: the exact export line demo check printed reaches the demo
        export = next(
            line.strip()
            for line in check.stderr.splitlines()
            if line.strip().startswith("export KUBECONFIG=")
        )
        other_shell = subprocess.run(
            ["sh", "-c", f"{export}; exec {sys.executable} -m gryvia_cli queue -A"],
            env={k: v for k, v in env.items() if k != "KUBECONFIG"},
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert other_shell.returncode == 0, other_shell.stderr
        assert "resnet-sweep-b" in other_shell.stdout

        # the console: every view has rows on the fresh demo (screenshots at 160x48 kept in
        # the test's folder)
        demo_kubeconfig = Path(export.split("=", 1)[1].strip().strip("'\""))
        rows = asyncio.run(visit(demo_kubeconfig, tmp_path / "console"))
        assert [view for view, count in rows.items() if count == 0] == [], rows
        assert (tmp_path / "console" / "gpusharing.svg").exists()

        # `make demo` (demo up, no console without a terminal) merges gryvia-demo: then
        # `gryvia queue -A` in a fresh shell works with the user's kubeconfig as it is
        up = gryvia("demo", "up", "--no-tui")
        assert up.returncode == 0, up.stderr
        assert "set current-context to 'gryvia-demo'" in up.stderr
        assert f"context gryvia-demo is in {user_config} (its current context)" in up.stderr
        assert export in up.stderr
        queue = gryvia("queue", "-A")
        assert queue.returncode == 0, queue.stderr
        assert "resnet-sweep-b" in queue.stdout

        # the README's own example, from that shell, while the demo's DDP job runs (its
        # rank 0 listens on the same port in its own pod network)
        example = str(Path(__file__).resolve().parents[2] / "examples" / "train-ddp.yaml")
        ddp = gryvia("submit", "-f", example, "--wait", "--logs", "--wait-timeout", "5m")
        assert ddp.returncode == 0, ddp.stdout + ddp.stderr
        assert "rank 0: all 2 ranks joined, allreduce done" in ddp.stdout
        demo_ddp = gryvia("status", "llama-ddp", "-n", "tenant-nlp", "-o", "json")
        assert '"Running"' in demo_ddp.stdout, demo_ddp.stdout + demo_ddp.stderr
        if with_kueue:
            sweep_b = gryvia("status", "resnet-sweep-b", "-n", "tenant-vision", "-o", "json")
            assert "Queued by Kueue" in sweep_b.stdout, sweep_b.stdout + sweep_b.stderr
    finally:
        down = gryvia("demo", "down", "--yes")
    assert down.returncode == 0, down.stderr
    assert f"removed context 'gryvia-demo' from {user_config}" in down.stderr
    contexts = yaml.safe_load(user_config.read_text()).get("contexts") or []
    assert [c["name"] for c in contexts] == []
    assert not (tmp_path / "home" / "clusters" / "demo").exists()
