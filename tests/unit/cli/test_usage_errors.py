"""Usage mistakes the API server or Typer would word badly: a bad label selector names
`-l/--selector` (exit 2, no manifest hint); a bad `-o` choice has no "Value error," prefix."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from gryvia_cli.errors import EXIT_USAGE, RejectedError, UsageError
from gryvia_cli.kube import resources as r
from gryvia_cli.kube.errors import selector_usage, translate_api_exception
from gryvia_cli.main import app

SELECTOR_400 = (
    b'{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"BadRequest","code":400,'
    b'"message":"unable to parse requirement: found \'==\', expected: !, identifier, or '
    b"'end of string'\"}"
)


def test_the_servers_refusal_of_a_label_selector_is_a_usage_error_naming_the_option() -> None:
    refusal = translate_api_exception(400, SELECTOR_400, resource=r.AIJOB, namespace="ml")
    assert isinstance(refusal, RejectedError) and "manifest" in (refusal.hint or "")
    with pytest.raises(UsageError) as caught, selector_usage("==x"):
        raise refusal
    error = caught.value
    assert error.exit_code == EXIT_USAGE
    assert error.message.startswith("invalid label selector '==x': unable to parse requirement")
    assert (error.hint or "").startswith("-l/--selector takes") and "manifest" not in error.hint


def test_other_refusals_pass_through() -> None:
    refusal = RejectedError("spec.gpus: must be >= 0")
    with pytest.raises(RejectedError), selector_usage(None):
        raise refusal  # no selector was sent: the refusal is about something else


def test_a_bad_output_choice_lists_the_choices_in_typers_words() -> None:
    result = CliRunner().invoke(app, ["list", "jobs", "-o", "bogus"])
    assert result.exit_code == 2
    expected = "'bogus' is not a format: use one of table, wide, json, yaml, name, jsonpath=..."
    assert expected in result.output
    assert "Value error" not in result.output


@pytest.mark.parametrize("command", ["queue", "capacity"])
@pytest.mark.parametrize("seconds", ["0", "-5"])
def test_a_redraw_interval_below_one_second_is_refused(command: str, seconds: str) -> None:
    result = CliRunner().invoke(app, [command, "-w", seconds])
    assert result.exit_code == 2
    assert "Invalid value for '-w' / '--watch'" in result.output
