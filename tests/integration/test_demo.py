"""The README's demo, non-interactive: `gryvia demo check` on a fresh sandbox home."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.integration, pytest.mark.sandbox, pytest.mark.slow]


def test_demo_check_sets_up_every_state_and_down_cleans_up(tmp_path: Path) -> None:
    env = os.environ | {"GRYVIA_SANDBOX_HOME": str(tmp_path / "home"), "NO_COLOR": "1"}

    def gryvia(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "gryvia_cli", *args],
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )

    try:
        check = gryvia("demo", "check", "--timeout", "300")
        assert check.returncode == 0, check.stdout + check.stderr
        assert "all 9 demo checks passed" in check.stderr
        for name in ("llama-ddp", "resnet-sweep-b", "legacy-v100-eval", "slurm-ranks"):
            assert name in check.stdout
        again = gryvia("demo", "check", "--timeout", "120")  # idempotent on a running demo
        assert again.returncode == 0, again.stderr
    finally:
        down = gryvia("demo", "down", "--yes")
    assert down.returncode == 0, down.stderr
    assert not (tmp_path / "home" / "clusters" / "demo").exists()
