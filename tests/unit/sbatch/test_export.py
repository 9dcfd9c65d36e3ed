"""`--export` from the submitting shell (issue 39, finding 5): ALL passes what the script
reads minus the deny list and says so; NONE passes nothing; a list passes what it names."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from gryvia_cli.sbatch.export import denied, export_spec
from gryvia_cli.sbatch.model import Issue
from gryvia_cli.sbatch.parser import parse_script
from gryvia_cli.sbatch.values import ExportSpec
from tests.unit.sbatch.helpers import codes, make_script, sbatch

SHELL = {
    "EXP_NAME": "foo",
    "LR": "3e-4",
    "UNUSED": "x",
    "HF_TOKEN": "secret",
    "HOME": "/home/ann",
    "SLURM_JOB_ID": "7",
}
BODY = 'python train.py --name "$EXP_NAME" --lr ${LR:-1e-3} --hf $HF_TOKEN --home $HOME'


def _spec(
    *directives: str, shell: dict[str, str] | None = SHELL
) -> tuple[ExportSpec | None, list[Issue]]:
    return export_spec(parse_script(make_script(*directives, BODY), "x.sh"), shell)


def test_all_by_default_passes_what_the_script_reads_minus_the_deny_list() -> None:
    spec, issues = _spec("#SBATCH -N 1")
    assert spec is not None and spec.values == {"EXP_NAME": "foo", "LR": "3e-4"}
    assert codes(issues) == ["export-passed", "export-kept-back"]
    assert "EXP_NAME, LR" in issues[0].message
    assert "HF_TOKEN, HOME" in issues[1].message
    explicit, _ = _spec("#SBATCH --export=ALL")
    assert explicit is not None and explicit.values == spec.values


def test_none_passes_nothing_and_a_list_passes_what_it_names() -> None:
    none, issues = _spec("#SBATCH --export=NONE")
    assert none is not None and none.values == {} and issues == []
    listed, issues = _spec("#SBATCH --export=EXP_NAME,MISSING,B=2")
    assert listed is not None and listed.values == {"EXP_NAME": "foo", "B": "2"}
    assert codes(issues) == ["export-from-submit-shell", "export-passed"]
    assert "MISSING" in issues[0].message
    both, _ = _spec("#SBATCH --export=ALL,B=2")
    assert both is not None and both.values == {"EXP_NAME": "foo", "LR": "3e-4", "B": "2"}


def test_without_the_shell_nothing_is_passed_as_before() -> None:
    assert _spec("#SBATCH -N 1", shell=None) == (None, [])
    spec, issues = _spec("#SBATCH --export=EXP_NAME", shell=None)
    assert spec is not None and spec.values == {} and codes(issues) == ["export-from-submit-shell"]


def test_the_deny_list() -> None:
    for name in (
        "AWS_SECRET_ACCESS_KEY",
        "GITHUB_TOKEN",
        "KUBECONFIG",
        "SLURM_NTASKS",
        "DB_PASSWORD",
    ):
        assert denied(name), name
    for name in ("EXP_NAME", "LR", "DATA_DIR", "MONKEY"):
        assert not denied(name), name


def test_submit_passes_the_shell_variable_the_script_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gryvia_cli.cli.session import Session
    from gryvia_cli.main import app
    from tests.unit.sbatch.test_dry_run_offline import _no_cluster

    script = tmp_path / "t.sh"
    script.write_bytes(sbatch("-N 1", body='echo "$EXP_NAME"'))
    monkeypatch.setenv("EXP_NAME", "foo")
    args = ["submit", "--sbatch", str(script), "--image", "img", "--dry-run", "-o", "yaml"]
    result = CliRunner().invoke(app, args, obj=Session(access_factory=_no_cluster))
    assert result.exit_code == 0, result.output
    assert "passes 1 variable(s) of the submitting shell the job reads: EXP_NAME" in result.stderr
    docs = [d for d in yaml.safe_load_all(result.stdout) if d]
    job = next(d for d in docs if d["kind"] == "GryviaAIJob")
    env = {e["name"]: e.get("value") for e in job["spec"]["env"]}
    assert env["EXP_NAME"] == "foo"
