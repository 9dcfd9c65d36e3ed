"""Options with an optional value (`--dry-run` alone or `--dry-run=server`), which Typer's
parser cannot declare: the bare flag is rewritten to `--flag=<default>` before parsing."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any


def with_default_value(
    args: Sequence[str], flag: str, default: str, values: Sequence[str]
) -> list[str]:
    """`args` with a bare `flag` (not followed by one of `values`) written as
    `flag=default`; stops at `--`."""
    out: list[str] = []
    for index, token in enumerate(args):
        if token == "--":
            return out + list(args[index:])
        following = args[index + 1] if index + 1 < len(args) else ""
        bare = token == flag and following not in values
        out.append(f"{flag}={default}" if bare else token)
    return out


def optional_value(flag: str, default: str, values: Sequence[str]) -> Callable[[Any], None]:
    """A `tune_command` hook (see `cli.group.GryviaGroup.get_command`) that lets `flag` be
    given without a value, meaning `default`."""

    def tune(command: Any) -> None:
        parse = command.parse_args

        def parse_args(ctx: Any, args: list[str]) -> list[str]:
            return list(parse(ctx, with_default_value(args, flag, default, values)))

        command.parse_args = parse_args

    return tune
