"""`-o json` on a terminal: orjson indents the server's bytes exactly as `json.dumps(indent=2)`
would, and leaves non-ASCII text (escaped by json) to json."""

from __future__ import annotations

import json

import pytest

from gryvia_cli import output
from gryvia_cli.core.jsonscan import indent_json

LIST = {
    "apiVersion": "gryvia.io/v1alpha1",
    "kind": "GryviaAIJobList",
    "items": [
        {"metadata": {"name": f"j{i}", "labels": {}}, "spec": {"gpus": i, "command": []}}
        for i in range(3)
    ],
    "metadata": {"resourceVersion": "7", "continue": "", "remainingItemCount": None},
}


def test_orjson_indents_like_json() -> None:
    raw = json.dumps(LIST, separators=(",", ":")).encode()
    assert indent_json(raw) == json.dumps(LIST, indent=2).encode()


def test_non_ascii_and_huge_numbers_are_left_to_json() -> None:
    assert indent_json(json.dumps({"name": "naïve"}, ensure_ascii=False).encode()) is None
    assert indent_json(b'{"n": 123456789012345678901234567890}') is None


def test_tiny_floats_are_left_to_json() -> None:
    assert indent_json(b'{"rate": 0.00001}') is None
    assert indent_json(b'{"rate": 1e-05}') is None


def test_replies_with_long_numbers_parse_exactly() -> None:
    from gryvia_cli.kube.replies import parse_reply

    assert parse_reply(b'{"n": 123456789012345678901234567890}') == {
        "n": 123456789012345678901234567890
    }
    assert parse_reply(b'{"n": 12, "s": "x"}') == {"n": 12, "s": "x"}


def test_yaml_and_json_leave_out_managed_fields_as_kubectl_does(
    capsys: pytest.CaptureFixture[str],
) -> None:
    obj = {"metadata": {"name": "a", "managedFields": [{"manager": "gryvia-cli"}]}, "spec": {}}
    listed = {"kind": "List", "items": [obj], "metadata": {}}
    for fmt in (output.OutputFormat.yaml, output.OutputFormat.json):
        output.render_data(listed, fmt)
        output.render_data(obj, fmt)
    printed = capsys.readouterr().out
    assert "managedFields" not in printed and printed.count("name: a") == 2
    assert obj["metadata"]["managedFields"] == [{"manager": "gryvia-cli"}], "input unchanged"
