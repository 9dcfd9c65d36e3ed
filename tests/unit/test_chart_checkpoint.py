"""The chart's opt-in checkpoint guards (`aiOperator.checkpointGuards`, issue 18)."""

from __future__ import annotations

from gryvia_operator.settings import parse_settings
from tests.unit.test_chart import container, render


def test_checkpoint_guards_are_off_by_default() -> None:
    args = container(render())["args"]
    assert not [a for a in args if "checkpoint" in a]
    assert not parse_settings([]).enable_checkpoint_guards


def test_the_value_turns_the_guards_on_with_their_poll_interval() -> None:
    objs = render(
        "--set",
        "aiOperator.checkpointGuards.enabled=true",
        "--set",
        "aiOperator.checkpointGuards.pollSeconds=2",
    )
    args = container(objs)["args"]
    assert "--enable-checkpoint-guards" in args and "--checkpoint-poll-seconds=2" in args
    settings = parse_settings(["--enable-checkpoint-guards", "--checkpoint-poll-seconds=2"])
    assert settings.enable_checkpoint_guards and settings.checkpoint_poll_seconds == 2.0
