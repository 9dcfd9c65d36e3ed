"""Boolean flags that also take a written value: `--isolated true` as well as `--isolated`.

The FAQ and many scripts write on/off options with a value (`--isolated true`), which Click's
`--x/--no-x` flags refuse ("Got unexpected extra argument(s) (true)"). Commands declared with
`cls=BoolValueCommand` accept `--x true|false|yes|no|on|off|1|0` (any case) and `--x=VALUE`
for each of their `--x/--no-x` flags; everything else parses as usual.
"""

from __future__ import annotations

from typing import Any

import typer
from typer.core import TyperCommand

TRUE_WORDS = frozenset({"true", "yes", "on", "1"})
FALSE_WORDS = frozenset({"false", "no", "off", "0"})


def fold_bool_values(args: list[str], flags: dict[str, str]) -> list[str]:
    """Rewrite `--x VALUE` / `--x=VALUE` (VALUE a true or false word) to `--x` or its off
    form. `flags` maps each on-flag to its off-flag (`{"--isolated": "--no-isolated"}`).
    Stops at `--`. Raises typer.BadParameter naming the flag for `--x=` with another word."""
    out: list[str] = []
    index = 0
    while index < len(args):
        token = args[index]
        if token == "--":
            out.extend(args[index:])
            break
        name, eq, value = token.partition("=")
        if name in flags and eq:
            out.append(_choose(name, value, flags))
        elif token in flags and index + 1 < len(args) and _is_bool(args[index + 1]):
            out.append(_choose(token, args[index + 1], flags))
            index += 1
        else:
            out.append(token)
        index += 1
    return out


def _is_bool(word: str) -> bool:
    return word.lower() in TRUE_WORDS | FALSE_WORDS


def _choose(flag: str, value: str, flags: dict[str, str]) -> str:
    word = value.lower()
    if word in TRUE_WORDS:
        return flag
    if word in FALSE_WORDS:
        return flags[flag]
    raise typer.BadParameter(
        f"{value!r} is not true or false; write {flag} or {flags[flag]}", param_hint=flag
    )


class BoolValueCommand(TyperCommand):
    """A Typer command whose `--x/--no-x` flags also accept `--x true|false`."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        """Fold written boolean values, then parse as Click does."""
        flags: dict[str, str] = {}
        for param in self.params:
            secondary = getattr(param, "secondary_opts", None)
            if getattr(param, "is_flag", False) and secondary:
                for opt in param.opts:
                    if opt.startswith("--"):
                        flags[opt] = secondary[0]
        return super().parse_args(ctx, fold_bool_values(list(args), flags))
