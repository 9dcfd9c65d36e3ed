"""The root command group: lazy commands, sectioned help, aliases, hoisting, errors.

Commands are imported only when used; help is grouped by section; hidden aliases resolve;
global options are accepted after the command. `GryviaGroup.invoke` is the one place where a
GryviaError becomes its message and its exit code (`gryvia_cli.errors`: 1 failed, 2 usage) and
Ctrl-C becomes 130.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any, ClassVar

import typer
from typer.core import TyperGroup

from gryvia_cli.cli.coercion import light_coercion
from gryvia_cli.errors import EXIT_INTERRUPTED, GryviaError

SECTIONS = ("Workloads", "Cluster", "Utilities")
HOISTED_FLAGS = frozenset({"-v", "--verbose", "--no-color"})
HOISTED_VALUES = frozenset({"--kubeconfig", "--context"})
ROOT_VALUES = frozenset({"--kubeconfig", "--context", "-n", "--namespace", "-o", "--output"})
_COMPLETION_PARAMS = ("install_completion", "show_completion")
OWN_FLAGS = frozenset({"sandbox", "sbatch"})
"""Groups whose options of the same names mean something else (never hoisted)."""


def hoist_global_options(args: list[str]) -> list[str]:
    """Move `--kubeconfig X`, `--context X`, `-v` and `--no-color` written after the command
    in front of it, so `gryvia status --context prod` works like `gryvia --context prod
    status`. Stops at `--`; leaves the sandbox and sbatch groups alone."""
    index = 0
    while index < len(args):
        token = args[index]
        if token in ROOT_VALUES:
            index += 2
            continue
        if token.startswith("-"):
            index += 1
            continue
        break
    if index >= len(args) or args[index] in OWN_FLAGS:
        return args
    head, tail = args[: index + 1], args[index + 1 :]
    moved: list[str] = []
    kept: list[str] = []
    position = 0
    while position < len(tail):
        token = tail[position]
        if token == "--":
            kept += tail[position:]
            break
        name = token.split("=", 1)[0]
        if token in HOISTED_FLAGS or (name in HOISTED_VALUES and "=" in token):
            moved.append(token)
        elif token in HOISTED_VALUES and position + 1 < len(tail):
            moved += [token, tail[position + 1]]
            position += 1
        else:
            kept.append(token)
        position += 1
    return moved + head + kept


def _keep_examples(command: Any) -> None:
    """Stop Click from re-wrapping the `Examples:` block of a command's help (and of its
    subcommands')."""
    text = command.help or ""
    if "Examples:" in text and "\b" not in text:
        command.help = text.replace("Examples:", "\b\nExamples:", 1)
    for sub in (getattr(command, "commands", None) or {}).values():
        _keep_examples(sub)


@dataclass(frozen=True)
class LazyCommand:
    """A command whose module is imported on first use: `module.app` is a Typer app; `pick`
    chooses one command when the app holds several (None: the app is the command group)."""

    name: str
    module: str
    panel: str
    short_help: str
    pick: str | None = None


class AliasGroup(TyperGroup):
    """A TyperGroup that resolves hidden aliases (`ls` -> `list`, `job` -> `jobs`)."""

    aliases: ClassVar[dict[str, str]] = {}

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        """The command named `cmd_name` or by one of its aliases."""
        return super().get_command(ctx, self.aliases.get(cmd_name, cmd_name))


class GryviaGroup(AliasGroup):
    """The root group: lazily imported commands, sections, hoisting and error mapping."""

    lazy: ClassVar[dict[str, LazyCommand]] = {}
    aliases: ClassVar[dict[str, str]] = {}

    @classmethod
    def register(cls, entry: LazyCommand, aliases: tuple[str, ...] = ()) -> None:
        """Add a lazily imported command and its hidden aliases."""
        cls.lazy[entry.name] = entry
        for alias in aliases:
            cls.aliases[alias] = entry.name

    def list_commands(self, ctx: Any) -> list[str]:
        """Registered commands in registration order."""
        names = list(super().list_commands(ctx))
        return names + [name for name in self.lazy if name not in names]

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        """A command, importing its module the first time it is asked for."""
        name = self.aliases.get(cmd_name, cmd_name)
        if name in self.commands or name not in self.lazy:
            return super().get_command(ctx, name)
        import importlib

        entry = self.lazy[name]
        module = importlib.import_module(entry.module)
        app = module.app
        app.rich_markup_mode = None  # plain, fast help everywhere
        command = typer.main.get_command(app)
        command.params = [p for p in command.params if p.name not in _COMPLETION_PARAMS]
        if entry.pick and isinstance(command, TyperGroup):
            command = command.commands[entry.pick]
        _keep_examples(command)
        tune = getattr(module, "tune_command", None)  # Click settings Typer cannot express
        if tune is not None:
            tune(command)
        light_coercion(command, ctx)
        command.name = name
        setattr(command, "rich_help_panel", entry.panel)  # noqa: B010 - read by format_commands
        self.add_command(command, name)
        return command

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        """Hoist global options (see hoist_global_options), then parse as usual."""
        light_coercion(self, ctx, recurse=False)
        return super().parse_args(ctx, hoist_global_options(list(args)))

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        """List commands under `Workloads`, `Cluster` and `Utilities` without importing them."""
        groups: dict[str, list[tuple[str, str]]] = {}
        for name in self.list_commands(ctx):
            entry = self.lazy.get(name)
            if entry is not None:
                groups.setdefault(entry.panel, []).append((name, entry.short_help))
                continue
            cmd = self.commands.get(name)
            if cmd is not None and not cmd.hidden:
                panel = getattr(cmd, "rich_help_panel", None) or "Other"
                groups.setdefault(panel, []).append((name, cmd.get_short_help_str(60)))
        order = [s for s in SECTIONS if s in groups] + [s for s in groups if s not in SECTIONS]
        for panel in order:
            with formatter.section(panel):
                formatter.write_dl(groups[panel])

    def invoke(self, ctx: Any) -> Any:
        """Run the command; a GryviaError prints `error:`/`hint:` lines and exits with its
        code, Ctrl-C exits 130."""
        from gryvia_cli.output import report_error

        try:
            return super().invoke(ctx)
        except GryviaError as exc:
            report_error(exc)
            raise typer.Exit(exc.exit_code) from None
        except KeyboardInterrupt:
            sys.stderr.write("\ninterrupted\n")
            raise typer.Exit(EXIT_INTERRUPTED) from None
