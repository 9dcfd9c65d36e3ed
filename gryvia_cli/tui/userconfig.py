"""The console's own config file: hidden columns per table, aliases and hotkeys.

The file is `console.yaml` next to the CLI's config file (`$GRYVIA_CONFIG_HOME`, else
`$XDG_CONFIG_HOME/gryvia`, else `~/.config/gryvia`); docs/console.md shows its shape:

    aliases: {failed: "jobs phase:failed", h100: "nodes gpu:H100"}
    hotkeys: {f5: queue, "ctrl+g": {command: "jobs gpu:H100", description: H100 jobs}}
    columns: {jobs: {hidden: [tenant, type]}}

A command is what the `:` line takes: a view (then optional filter text), ctx, ns,
`describe KIND NAME` or quit;
a hotkey may also run an alias. A file that does not load never stops the console: it runs
with the defaults, says why (each problem names the field and the fix) and saves nothing.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from gryvia_cli.tui.bindings import JUMP_ALIASES, REGISTRY_VIEWS, SCOPES, VIEWS, resolve_jump

CONSOLE_FILE_NAME = "console.yaml"
FILTER_VIEWS = frozenset({"jobs", "queue", "nodes", *REGISTRY_VIEWS})
"""Views whose command may carry filter text (`jobs phase:failed`, `budgets vision`)."""
COMMANDS = (*VIEWS, *REGISTRY_VIEWS, "ctx", "ns", "describe", "quit")
ALIAS_NAME = re.compile(r"^[a-z][a-z0-9_-]{0,31}$")
HOTKEY = re.compile(r"^(f([1-9]|1[0-9]|2[0-4])|shift\+f([1-9]|1[0-2])|(ctrl|alt)\+[a-z0-9])$")
RESERVED_KEYS = {
    "ctrl+p": "the command palette",
    "ctrl+q": "quit",
    "ctrl+c": "copy / quit",
    "ctrl+h": "backspace in terminals",
    "ctrl+i": "tab in terminals",
    "ctrl+j": "enter in some terminals",
    "ctrl+m": "enter in terminals",
}


def console_config_path(environ: Any = None) -> Path:
    """Where the console's config file lives (it may not exist)."""
    from gryvia_cli.settings import config_dir

    return config_dir(environ) / CONSOLE_FILE_NAME


def builtin_keys() -> dict[str, str]:
    """Every key the console binds, to the id of its first binding (`jobs.cancel`)."""
    out: dict[str, str] = {}
    for keys in SCOPES.values():
        for key in keys:
            for name in key.key.split(","):
                out.setdefault(name.strip(), key.id)
    return out


def command_problem(command: str, aliases: Mapping[str, str] = {}) -> str | None:
    """Why `command` is not something the `:` line runs (None when it is)."""
    word, _, rest = command.strip().partition(" ")
    if not word:
        return "is empty; write a view (jobs, queue, ...), ctx, ns, describe KIND NAME or quit"
    if word.lower() in aliases and not rest:
        return None
    target = resolve_jump(word)
    if target not in COMMANDS:
        return f"`{word}` is no view or command; use one of {', '.join(COMMANDS)}"
    if rest and target in VIEWS and target not in FILTER_VIEWS:
        return f"the {target} view takes no filter; write just `{target}`"
    if target == "describe":
        from gryvia_cli.tui.describeref import describe_ref

        problem = describe_ref(rest, None)
        return problem if isinstance(problem, str) else None
    return None


class Hotkey(BaseModel):
    """One hotkey: the command it runs and its footer / help words."""

    model_config = ConfigDict(extra="forbid")

    command: str
    description: str = ""


class TableColumns(BaseModel):
    """Column choices of one table: the column keys hidden."""

    model_config = ConfigDict(extra="forbid")

    hidden: list[str] = Field(default_factory=list)


class ConsoleConfig(BaseModel):
    """The console's config file (see the module docstring). Validate with
    `model_validate(data, context={"tables": {table: (column keys, ...)}})` to check column
    names too."""

    model_config = ConfigDict(extra="forbid")

    aliases: dict[str, str] = Field(default_factory=dict)
    hotkeys: dict[str, Hotkey] = Field(default_factory=dict)
    columns: dict[str, TableColumns] = Field(default_factory=dict)

    @field_validator("aliases")
    @classmethod
    def _aliases(cls, aliases: dict[str, str]) -> dict[str, str]:
        builtin = set(COMMANDS) | set(JUMP_ALIASES)
        for name, command in aliases.items():
            if not ALIAS_NAME.match(name):
                raise ValueError(
                    f"alias `{name}`: use lower-case letters, digits, - or _ "
                    "(starting with a letter, at most 32)"
                )
            if name in builtin:
                raise ValueError(f"alias `{name}` is a built-in command; pick another name")
            problem = command_problem(command)
            if problem:
                raise ValueError(f"alias `{name}`: the command {problem}")
        return aliases

    @field_validator("hotkeys", mode="before")
    @classmethod
    def _hotkey_shorthand(cls, value: Any) -> Any:
        if isinstance(value, dict):
            return {k: {"command": v} if isinstance(v, str) else v for k, v in value.items()}
        return value

    @field_validator("hotkeys")
    @classmethod
    def _hotkeys(cls, hotkeys: dict[str, Hotkey], info: ValidationInfo) -> dict[str, Hotkey]:
        taken = builtin_keys()
        aliases = info.data.get("aliases") or {}
        for key, hotkey in hotkeys.items():
            if not HOTKEY.match(key):
                raise ValueError(
                    f"hotkey `{key}`: use f1-f24, shift+f1-f12, ctrl+<letter or digit> or "
                    "alt+<letter or digit> (plain letters belong to the views)"
                )
            if key in taken or key in RESERVED_KEYS:
                what = taken.get(key) or RESERVED_KEYS[key]
                raise ValueError(f"hotkey `{key}` is taken by {what}; pick another key")
            problem = command_problem(hotkey.command, aliases)
            if problem:
                raise ValueError(f"hotkey `{key}`: the command {problem}")
        return hotkeys

    @field_validator("columns")
    @classmethod
    def _columns(
        cls, columns: dict[str, TableColumns], info: ValidationInfo
    ) -> dict[str, TableColumns]:
        tables: Mapping[str, Sequence[str]] | None = (info.context or {}).get("tables")
        if tables is None:
            return columns
        for table, choice in columns.items():
            if table not in tables:
                raise ValueError(f"no table `{table}`; tables: {', '.join(tables)}")
            unknown = [c for c in choice.hidden if c not in tables[table]]
            if unknown:
                raise ValueError(
                    f"{table}.hidden: no column {', '.join(unknown)}; "
                    f"columns: {', '.join(tables[table])}"
                )
            if set(tables[table]) <= set(choice.hidden):
                raise ValueError(f"{table}.hidden hides every column; keep one")
        return columns

    def expand(self, text: str) -> str:
        """`text` with a leading alias replaced by its command (`failed` -> `jobs
        phase:failed`; words after the alias are appended)."""
        word, _, rest = text.strip().partition(" ")
        command = self.aliases.get(word.lower().lstrip(":"))
        if command is None:
            return text
        return f"{command} {rest}".strip()

    def hidden(self, table: str) -> frozenset[str]:
        """Column keys hidden in `table`."""
        choice = self.columns.get(table)
        return frozenset(choice.hidden) if choice else frozenset()


@dataclass
class LoadedConfig:
    """The config in use, the file it came from (None: nothing is saved), and the problems
    that made the console fall back to the defaults (then nothing is saved either)."""

    config: ConsoleConfig = field(default_factory=ConsoleConfig)
    path: Path | None = None
    problems: list[str] = field(default_factory=list)

    @property
    def saves(self) -> bool:
        """True when changes are written back to the file."""
        return self.path is not None and not self.problems


def _describe(exc: Exception) -> list[str]:
    from pydantic import ValidationError

    if not isinstance(exc, ValidationError):
        return [str(exc).splitlines()[0]]
    out = []
    for error in exc.errors():
        where = ".".join(str(part) for part in error["loc"]) or "(top level)"
        message = error["msg"].removeprefix("Value error, ")
        if error["type"] == "extra_forbidden":
            message = "unknown key; the file takes aliases, hotkeys and columns"
        out.append(f"{where}: {message}")
    return out


def load_console_config(
    path: Path | None, tables: Callable[[], Mapping[str, Sequence[str]]]
) -> LoadedConfig:
    """Read the console's config file at `path` (None or missing: the defaults). Never
    raises: a file that is not valid YAML or not valid config gives the defaults with the
    problems (`path: field: what is wrong and the fix`). `tables()` gives every table's
    column keys; it is called only when the file exists (building it loads every view)."""
    if path is None or not path.exists():
        return LoadedConfig(path=path)
    import yaml

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        if not isinstance(data, dict):
            raise ValueError("the file must be a mapping with aliases, hotkeys and columns")
        config = ConsoleConfig.model_validate(data, context={"tables": tables()})
    except Exception as exc:  # any bad file falls back, by design
        return LoadedConfig(path=path, problems=[f"{path}: {p}" for p in _describe(exc)])
    return LoadedConfig(config, path)


def save_hidden(loaded: LoadedConfig, table: str, hidden: Sequence[str]) -> None:
    """Set the hidden columns of `table` in memory and, when `loaded.saves`, in the file
    (other keys are kept; comments are not). Raises OSError when the file cannot be written."""
    import yaml

    choice = TableColumns(hidden=sorted(hidden))
    columns = {**loaded.config.columns, table: choice}
    if not choice.hidden:
        del columns[table]
    loaded.config = loaded.config.model_copy(update={"columns": columns})
    if not loaded.saves or loaded.path is None:
        return
    path = loaded.path
    data: dict[str, Any] = {}
    if path.exists():
        raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        data = raw if isinstance(raw, dict) else {}
    data["columns"] = {name: c.model_dump() for name, c in columns.items()}
    if not data["columns"]:
        del data["columns"]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(data, sort_keys=True), encoding="utf-8")
