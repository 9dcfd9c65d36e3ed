"""The chart accepts every value the public FAQ names, spelled as the FAQ spells it (issue 40,
point 4), and each turns on what it names; the schema stays closed to misspellings of them."""

from __future__ import annotations

import pytest

from tests.unit.test_chart import container, render, render_error

FAQ_SWITCHES = [
    ("aiOperator.admissionGate=true", "--admission-gate"),
    ("aiOperator.jobHooks.enabled=true", "--enable-job-hooks"),
    ("aiOperator.checkpointGuard=true", "--enable-checkpoint-guards"),
    ("quotaOperator.reservations=true", "--enable-reservations"),
    ("gpuOperator.gpuSharing=true", "--enable-gpu-sharing"),
]
"""Each chart value the FAQ names, and the operator flag it must turn on."""


@pytest.mark.parametrize(("setting", "flag"), FAQ_SWITCHES, ids=[s for s, _ in FAQ_SWITCHES])
def test_each_faq_value_turns_on_its_feature(setting: str, flag: str) -> None:
    assert flag not in container(render())["args"]
    assert flag in container(render("--set", setting))["args"]


@pytest.mark.parametrize(
    ("setting", "flag"),
    [
        ("aiOperator.checkpointGuards.enabled=true", "--enable-checkpoint-guards"),
        ("aiOperator.reservations.enabled=true", "--enable-reservations"),
        ("gpuOperator.gpuSharing.enabled=true", "--enable-gpu-sharing"),
    ],
)
def test_the_earlier_spellings_still_work(setting: str, flag: str) -> None:
    assert flag in container(render("--set", setting))["args"]


def test_the_faq_install_line_renders_and_the_api_key_reaches_no_object() -> None:
    objs = render("--set", "auth.apiKey=a-long-random-secret")
    assert container(objs)["args"] == container(render())["args"]
    assert not [o for o in objs if "a-long-random-secret" in str(o)]


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        ("aiOperator.checkpointGaurd=true", "additional properties 'checkpointGaurd' not allowed"),
        ("quotaOperator.reservation=true", "additional properties 'reservation' not allowed"),
        ("gpuOperator.gpuSharing=yes", "/gpuOperator/gpuSharing"),
        ("auth.apikey=x", "additional properties 'apikey' not allowed"),
    ],
)
def test_misspelled_faq_values_are_refused(setting: str, message: str) -> None:
    assert message in render_error("--set", setting)
