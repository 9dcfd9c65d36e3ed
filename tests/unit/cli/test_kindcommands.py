"""The `list` and `get` every kind's group shares (cli/kindcommands.py, cli/objects.py)."""

from __future__ import annotations

import pytest
import typer
from typer.testing import CliRunner

from gryvia_cli.cli.kindcommands import add_get
from gryvia_cli.cli.objects import ObjectGroup
from gryvia_cli.errors import InvalidInputError
from gryvia_cli.kube import resources as r
from gryvia_operator.api.jobhook import GryviaJobHook


def test_an_object_that_does_not_validate_names_itself_the_field_and_the_fix() -> None:
    hooks = ObjectGroup(r.JOBHOOK, "hook", "hook")
    stored = {
        "apiVersion": "gryvia.io/v1alpha1",
        "kind": "GryviaJobHook",
        "metadata": {"name": "done", "namespace": "ml"},
        "spec": {"events": ["Succeeded"], "webhook": {"url": 42}},
    }
    with pytest.raises(InvalidInputError) as raised:
        hooks.validated(GryviaJobHook, stored)
    text = str(raised.value)
    assert text.startswith("hook done is invalid (spec.webhook.url: ")
    assert text.endswith("fix it with `gryvia apply`")


def test_get_of_a_cluster_scoped_kind_has_no_namespace_option() -> None:
    runner = CliRunner()
    for group, has_namespace in ((r.TENANT, False), (r.JOBHOOK, True)):
        single = typer.Typer()
        add_get(single, ObjectGroup(group, "thing", "thing"), lambda o, _now: [], "Show.", "z")
        result = runner.invoke(single, ["--help"])
        assert result.exit_code == 0, result.output
        assert ("--namespace" in result.output) is has_namespace
        assert "Thing name." in result.output and "gryvia thing get z -o yaml" in result.output
