"""`gryvia sbatch convert` and `gryvia sbatch check` through Typer's CliRunner."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from gryvia_cli.commands.sbatch import app
from gryvia_cli.sbatch.corpus import generate
from tests.unit.sbatch.helpers import sbatch

runner = CliRunner()


def write(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def test_convert_prints_yaml_jobs_and_the_report_on_stderr(tmp_path: Path) -> None:
    script = write(
        tmp_path, "train.sh", sbatch("-J train", "-N 2", "--gres=gpu:4", "--mail-type=END")
    )
    result = runner.invoke(app, ["convert", str(script), "--image", "img:1"])
    assert result.exit_code == 0, result.output
    docs = [doc for doc in yaml.safe_load_all(result.stdout) if doc]
    assert [(d["kind"], d["metadata"]["name"]) for d in docs] == [
        ("ConfigMap", "train-slurm-runtime"),
        ("GryviaAIJob", "train"),
    ]
    runtime, job = docs
    assert job["spec"]["image"] == "img:1"
    assert runtime["data"]["script"].startswith("#!/bin/bash\n#SBATCH -J train")
    script_env = next(e for e in job["spec"]["env"] if e["name"] == "GRYVIA_SBATCH_SCRIPT")
    assert script_env["valueFrom"]["configMapKeyRef"] == {
        "name": "train-slurm-runtime",
        "key": "script",
    }
    assert "✓" in result.stderr and "unsupported: line 5: --mail-type=END" in result.stderr


def test_convert_json_has_jobs_and_report(tmp_path: Path) -> None:
    script = write(tmp_path, "a.sh", sbatch("--array=0-3%2"))
    result = runner.invoke(app, ["convert", str(script), "--image", "i", "-o", "json"])
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    assert len(data["jobs"]) == 4
    report = data["report"]
    assert report["jobName"] == "a.sh"
    assert report["array"] == {"indices": [0, 1, 2, 3], "maxParallel": 2}
    assert set(report) >= {"jobName", "resources", "array", "env", "warnings", "unsupported",
                           "errors"}  # fmt: skip


def test_convert_fails_with_exit_1_and_no_jobs(tmp_path: Path) -> None:
    script = write(tmp_path, "bad.sh", sbatch("--mem=1G", "--mem-per-cpu=1G"))
    result = runner.invoke(app, ["convert", str(script), "--image", "i"])
    assert result.exit_code == 1
    assert result.stdout == ""
    assert "conflicting" not in result.stdout and "mutually exclusive" in result.stderr
    assert "line 2" in result.stderr
    result = runner.invoke(app, ["convert", str(script), "--image", "i", "-o", "json"])
    assert result.exit_code == 1
    assert json.loads(result.stdout)["jobs"] == []


def test_convert_without_an_image_fails(tmp_path: Path) -> None:
    result = runner.invoke(app, ["convert", str(write(tmp_path, "x.sh", sbatch("-N 1")))])
    assert result.exit_code == 1
    assert "--image" in result.stderr


def test_check_summarises_a_folder(tmp_path: Path) -> None:
    write(tmp_path, "clean.sh", sbatch("-N 1"))
    write(tmp_path, "warn.slrm", sbatch("--mail-type=END", "--exclusive", "--gres=gpu:h100:8"))
    write(tmp_path, "bad.sub", sbatch("--mem=8G", "--mem-per-cpu=2G"))
    write(tmp_path, "train", sbatch("--gpus=1"))
    write(tmp_path, "noshebang.sh", b"#SBATCH -N 1\necho no shebang\n")
    write(tmp_path, "notes.txt", b"not a script")
    result = runner.invoke(app, ["check", str(tmp_path), "-o", "json"])
    assert result.exit_code == 0
    summary = json.loads(result.stdout)
    assert (summary["total"], summary["clean"], summary["warnings"], summary["refused"]) == (
        4, 2, 1, 1,
    )  # fmt: skip
    assert {row["name"] for row in summary["topUnsupported"]} == {"--mail-type"}
    assert summary["topErrors"] == [{"name": "conflicting-memory-options", "scripts": 1}]
    assert [Path(p).name for p in summary["skipped"]] == ["noshebang.sh", "notes.txt"]
    table = runner.invoke(app, ["check", str(tmp_path), "--details"])
    assert table.exit_code == 0
    assert "converts cleanly" in table.stdout and "refused" in table.stdout
    assert "bad.sub" in table.stdout and "train" in table.stdout
    assert "Skipped 2 file(s)" in table.stdout and "notes.txt" in table.stdout
    patterned = runner.invoke(app, ["check", str(tmp_path), "--pattern", "*.sh", "-o", "json"])
    assert json.loads(patterned.stdout)["total"] == 2


def test_convert_takes_whole_nodes_with_node_gpus(tmp_path: Path) -> None:
    script = write(tmp_path, "x.sh", sbatch("-N 2", "--exclusive"))
    refused = runner.invoke(app, ["convert", str(script), "--image", "img"])
    assert refused.exit_code == 1
    assert "--gpus-per-node=N" in refused.stderr and "--node-gpus" in refused.stderr
    result = runner.invoke(
        app, ["convert", str(script), "--image", "img", "--node-gpus", "H100=8", "-o", "json"]
    )
    assert result.exit_code == 0, result.stderr
    job = json.loads(result.stdout)["jobs"][0]
    assert (job["spec"]["gpus"], job["spec"]["gpuType"]) == (8, "H100")


def test_array_limit_is_a_setting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    script = write(tmp_path, "a.sh", sbatch("--array=500-17000:1000%26"))
    ok = runner.invoke(app, ["convert", str(script), "--image", "img", "-o", "json"])
    assert ok.exit_code == 0, ok.stderr
    assert len(json.loads(ok.stdout)["jobs"]) == 17
    monkeypatch.setenv("GRYVIA_SBATCH_MAX_ARRAY_SIZE", "1001")
    refused = runner.invoke(app, ["convert", str(script), "--image", "img"])
    assert refused.exit_code == 1
    assert "indices run from 0 to 1000 (MaxArraySize=1001" in refused.stderr
    assert "GRYVIA_SBATCH_MAX_ARRAY_SIZE" in refused.stderr


def test_check_1000_generated_scripts_quickly(tmp_path: Path) -> None:
    generate(tmp_path, 1000, seed=3)
    start = time.perf_counter()
    result = runner.invoke(app, ["check", str(tmp_path), "-o", "json"])
    elapsed = time.perf_counter() - start
    assert result.exit_code == 0
    summary = json.loads(result.stdout)
    assert summary["total"] + len(summary["skipped"]) == 1000  # no #!: skipped, and listed
    assert summary["skipped"]
    assert summary["refused"] > 0 and summary["clean"] + summary["warnings"] > 0
    assert elapsed < 15  # the target is < 5 s; generous for a loaded CI machine


def test_corpus_is_deterministic(tmp_path: Path) -> None:
    first = [p.read_bytes() for p in generate(tmp_path / "a", 30, seed=1)]
    second = [p.read_bytes() for p in generate(tmp_path / "b", 30, seed=1)]
    assert first == second


def test_the_documented_examples_convert() -> None:
    examples = Path(__file__).resolve().parents[3] / "examples" / "sbatch"
    scripts = sorted(examples.glob("*.sh"))
    assert scripts
    for script in scripts:
        result = runner.invoke(app, ["convert", str(script), "--image", "img:1", "-o", "json"])
        assert result.exit_code == 0, (script, result.stderr)
