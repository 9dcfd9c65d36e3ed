"""The Python API's pure edges: importing it loads no CLI framework; manifests in every form
it takes read the same; errors are the CLI's; a Client over a fake access layer."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import gryvia
from gryvia.jobs import load_jobs
from gryvia_cli.connection import Connection
from tests.builders import job_yaml, make_job
from tests.unit.cli.fakes import FakeAccess


def test_importing_gryvia_loads_neither_typer_rich_nor_textual() -> None:
    code = (
        "import sys, gryvia\n"
        "gryvia.Client(namespace='x')\n"
        "print(sorted(m for m in ('typer', 'rich', 'textual', 'click') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_a_job_reads_the_same_as_a_dict_a_model_yaml_text_and_a_file(tmp_path: Path) -> None:
    from gryvia_operator.api import GryviaAIJob

    text = job_yaml("same", gpus=2, gpu_type="H100")
    path = tmp_path / "job.yaml"
    path.write_text(text)
    import yaml

    as_dict = yaml.safe_load(text)
    model = GryviaAIJob.model_validate(as_dict)
    warnings: list[str] = []
    forms = [as_dict, model, text, path, str(path)]
    read = [load_jobs([form], warnings.append)[0] for form in forms]
    for job in read:
        assert job["metadata"]["name"] == "same"
        assert job["spec"]["gpus"] == 2 and job["spec"]["gpuType"] == "H100"
    assert load_jobs([text + "---\n" + text], warnings.append)[1]["metadata"]["name"] == "same"


def test_every_problem_is_listed_and_nothing_else_is_kept() -> None:
    bad = make_job("bad").gpus(-1).manifest()
    other = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}
    with pytest.raises(gryvia.InvalidManifestError) as caught:
        load_jobs([bad, other], lambda _: None)
    problems = caught.value.problems
    assert len(problems) == 2, problems
    assert "spec.gpus" in problems[0] and "not ConfigMap" in problems[1]
    assert isinstance(caught.value, gryvia.InvalidInputError)  # the CLI's error, exit 2
    with pytest.raises(gryvia.InvalidInputError, match="cannot read"):
        load_jobs(["/no/such/file.yaml"], lambda _: None)


def test_cancel_asks_once_and_leaves_an_ended_job_alone() -> None:
    running = make_job("run").manifest()
    running["metadata"]["namespace"] = "ml"
    running["status"] = {"phase": "Running"}
    ended = make_job("ended").manifest()
    ended["metadata"]["namespace"] = "ml"
    ended["status"] = {"phase": "Succeeded"}
    fake = FakeAccess(running, ended)
    client = gryvia.Client(connection=Connection(namespace="ml", access_factory=lambda _: fake))
    assert client.namespace == "ml"
    assert client.cancel("run") == gryvia.CancelResult("run", True, "Running")
    assert client.cancel("ended") == gryvia.CancelResult("ended", False, "Succeeded")
    patched = next(o for o in fake.objects if o["metadata"]["name"] == "run")
    assert patched["metadata"]["annotations"]["gryvia.io/cancel"] == "true"
    with pytest.raises(gryvia.NotFoundError):
        client.cancel("missing")


def test_the_api_reference_is_generated_from_the_docstrings() -> None:
    from gryvia.apidoc import render

    committed = (Path(__file__).parents[3] / "docs" / "reference" / "python.md").read_text()
    assert committed == render(), "run `make docs` to regenerate docs/reference/python.md"


def test_usage_through_the_api_is_the_cli_document() -> None:
    import json

    from tests.unit.cli.helpers import run
    from tests.unit.tenancy.test_chargeback import RECORDS

    records = [
        {**r, "apiVersion": "gryvia.io/v1alpha1", "kind": "GryviaUsageRecord"} for r in RECORDS
    ]
    fake = FakeAccess(*records)
    client = gryvia.Client(connection=Connection(namespace="ml", access_factory=lambda _: fake))
    result = client.usage(group_by="tenant", start="2026-11-01", end="2026-11-30")
    assert {row.key for row in result.rows} == {"vision", "nlp"}
    args = ["usage", "--group-by", "tenant", "--from", "2026-11-01", "--to", "2026-11-30"]
    shown = run([*args, "-o", "json"], fake)
    assert shown.exit_code == 0, shown.output
    assert json.loads(shown.output) == result.as_dict()
    with pytest.raises(gryvia.UsageError, match="--from"):
        client.usage(start="yesterday-ish")
