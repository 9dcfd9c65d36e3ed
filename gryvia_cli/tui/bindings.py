"""Every key of the console, with ids, tooltips and palette titles; help, palette and
docs/keybindings.md are generated from here (the base tables are in `keytables.py`)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from textual.binding import BindingType

from gryvia_cli.tui.keytables import (
    APP as APP,
)
from gryvia_cli.tui.keytables import (
    CONFIRM as CONFIRM,
)
from gryvia_cli.tui.keytables import (
    DESCRIBE as DESCRIBE,
)
from gryvia_cli.tui.keytables import (
    JOB as JOB,
)
from gryvia_cli.tui.keytables import (
    JOBS as JOBS,
)
from gryvia_cli.tui.keytables import (
    LIST as LIST,
)
from gryvia_cli.tui.keytables import (
    LOGS as LOGS,
)
from gryvia_cli.tui.keytables import (
    NODES as NODES,
)
from gryvia_cli.tui.keytables import (
    QUEUE as QUEUE,
)
from gryvia_cli.tui.keytables import (
    REGISTRY_VIEWS as REGISTRY_VIEWS,
)
from gryvia_cli.tui.keytables import (
    SUBMIT as SUBMIT,
)
from gryvia_cli.tui.keytables import (
    TABLE as TABLE,
)
from gryvia_cli.tui.keytables import (
    VIEWS as VIEWS,
)
from gryvia_cli.tui.keytables import (
    Key as Key,
)
from gryvia_cli.tui.kindnames import CONSOLE_KINDS, kind_words

# -- sort by any column, column toggles, drill-downs -----------------------------------------


def sort_keys(scope: str, columns: tuple[tuple[str, str, str], ...]) -> tuple[Key, ...]:
    """`shift+<letter>` keys (k9s style) of `scope`: (letter, column key, header) each; the
    action sorts the focused table by the column, again reverses."""
    return tuple(
        Key(
            scope,
            letter,
            f"sort_by('{column}')",
            f"Sort {label}",
            f"Sort by {label}; again: reverse",
            f"{scope}: Sort by {label}",
            show=False,
            key_display=f"shift+{letter.lower()}",
            ident=f"sort_{column}",
        )
        for letter, column, label in columns
    )


LISTS = (
    Key(
        "lists",
        "ctrl+o",
        "sort_menu",
        "Sort by…",
        "Pick the column of the focused table to sort by (the sorted one again: reverse)",
        "table: Sort by column…",
        show=False,
    ),
    Key(
        "lists",
        "ctrl+t",
        "columns",
        "Columns",
        "Show or hide a column of the focused table (saved in console.yaml)",
        "table: Show or hide columns…",
        show=False,
    ),
)

JOBS = (
    *JOBS,
    *sort_keys(
        "jobs",
        (
            ("N", "name", "NAME"),
            ("E", "namespace", "NAMESPACE"),
            ("T", "tenant", "TENANT"),
            ("B", "user", "USER"),  # the letters of user, submitter are taken
            ("Y", "type", "TYPE"),
            ("U", "gpus", "GPUS"),
            ("S", "phase", "PHASE"),
            ("A", "age", "AGE"),
            ("D", "duration", "DURATION"),
            ("C", "cost", "COST"),
        ),
    ),
)

QUEUE = (
    *QUEUE,
    *sort_keys(
        "queue",
        (
            ("I", "position", "#"),
            ("N", "name", "NAME"),
            ("E", "namespace", "NAMESPACE"),
            ("U", "gpus", "GPUS"),
            ("S", "phase", "PHASE"),
            ("W", "waited", "WAITED"),
            ("R", "reason", "REASON"),
        ),
    ),
)

NODES = (
    *NODES,
    Key("nodes", "p", "pods", "Pods", "The pods on the node under the cursor (enter too)"),
    *sort_keys(
        "nodes",
        (
            ("N", "name", "NODE"),
            ("Y", "gpu_type", "GPU TYPE"),
            ("U", "gpus", "GPUS"),
            ("L", "allocated", "ALLOC"),
            ("F", "free", "FREE"),
            ("M", "memory", "MEMORY"),
            ("D", "driver", "DRIVER"),
            ("R", "rdma", "RDMA"),
            ("S", "phase", "PHASE"),
        ),
    ),
)

COST = (
    Key(
        "cost",
        "j",
        "jobs",
        "Jobs",
        "The jobs behind the team or job under the cursor, with their share (enter too)",
    ),
    *sort_keys(
        "cost",
        (
            ("T", "tenant", "TEAM / TENANT"),
            ("P", "spent", "SPENT"),
            ("B", "budget", "BUDGET"),
            ("U", "used", "USED"),
            ("F", "projected", "PROJECTED"),
            ("H", "hours", "GPU-H"),
            ("J", "jobs", "JOBS"),
            ("N", "job", "JOB"),
            ("E", "namespace", "NAMESPACE"),
            ("Y", "gpu", "GPU"),
            ("C", "cost", "COST"),
        ),
    ),
)

PODS = (
    Key("pods", "escape", "back", "Back", "Back to the nodes"),
    *sort_keys(
        "pods",
        (
            ("N", "name", "POD"),
            ("E", "namespace", "NAMESPACE"),
            ("J", "job", "JOB"),
            ("S", "phase", "PHASE"),
            ("U", "gpus", "GPUS"),
        ),
    ),
)

COST_JOBS = (
    Key("costjobs", "escape", "back", "Back", "Back to the cost view"),
    *sort_keys(
        "costjobs",
        (
            ("N", "job", "JOB"),
            ("E", "namespace", "NAMESPACE"),
            ("T", "tenant", "TENANT"),
            ("Y", "gpu", "GPU"),
            ("H", "hours", "GPU-H"),
            ("C", "cost", "COST"),
        ),
    ),
)

SCOPES: dict[str, tuple[Key, ...]] = {
    "app": APP,
    "table": TABLE,
    "jobs": JOBS,
    "job": JOB,
    "logs": LOGS,
    "queue": QUEUE,
    "nodes": NODES,
    "submit": SUBMIT,
    "confirm": CONFIRM,
    "list": LIST,
    "describe": DESCRIBE,
    "lists": LISTS,
    "cost": COST,
    "pods": PODS,
    "costjobs": COST_JOBS,
}
"""Every scope, in the order help and docs list them."""

SCOPE_TITLES = {
    "app": "Everywhere",
    "table": "Tables (jobs, queue, nodes, cost)",
    "jobs": "Jobs view",
    "job": "Job view",
    "logs": "Job view, Logs tab",
    "queue": "Queue view",
    "nodes": "Nodes view",
    "submit": "Submit view",
    "confirm": "Confirmation dialogs",
    "list": "Registry views (open one with : and its name, as :events)",
    "describe": "Describe view",
    "lists": "Lists (jobs, queue, nodes, cost, pods, and the registry views)",
    "cost": "Cost view",
    "pods": "Pods of a node (enter on a node)",
    "costjobs": "Jobs behind a cost figure (enter on a cost row)",
}

# -- sort keys of the registry views (derived from each spec's columns) ----------------------


def sort_letters(
    columns: Sequence[tuple[str, str]], taken: Iterable[str]
) -> tuple[tuple[str, str, str], ...]:
    """(letter, column key, header) for each of `columns` ((key, header) each): the first
    letter of the key, else of the header, that is no key in `taken` nor an earlier column's
    (`seen` -> `S`, `object` -> `B` when `O` is taken); a column whose letters are all taken
    gets none."""
    used = set(taken)
    out = []
    for key, label in columns:
        for letter in (key + label).upper():
            if "A" <= letter <= "Z" and letter not in used:
                used.add(letter)
                out.append((letter, key, label))
                break
    return tuple(out)


LIST_SORTS: dict[str, tuple[Key, ...]] = {}
"""The `shift+<letter>` keys of each registry view, by view name (see `list_sort_keys`)."""


def list_sort_keys(view: str, columns: Sequence[tuple[str, str]]) -> tuple[Key, ...]:
    """The sort keys of registry view `view` (scope `<view>-list`), derived from its
    (key, header) `columns` around every key its screen has (app, table, list and lists
    keys); recorded in `LIST_SORTS` and `SCOPES` so help, palette and docs list them."""
    taken = {
        name.strip()
        for key in (*APP, *TABLE, *LIST, *LISTS)
        for name in key.key.split(",")
        if len(name.strip()) == 1
    }
    scope = f"{view}-list"
    keys = sort_keys(scope, sort_letters(columns, taken))
    LIST_SORTS[view] = keys
    SCOPES[scope] = keys
    SCOPE_TITLES[scope] = f"{view.capitalize()} view: sort keys"
    return keys


_OWN_WORDS = {
    "cap": "capacity",
    "costs": "cost",
    "context": "ctx",
    "namespace": "ns",
    "q": "quit",
    "exit": "quit",
    "event": "events",
    "ev": "events",
    "tune": "tuners",
    "serve": "inference",
}
JUMP_ALIASES = {
    **{
        word: row.view
        for row in CONSOLE_KINDS
        for word in map(str.lower, kind_words(row))
        if word != row.view
    },
    **_OWN_WORDS,
}
"""Other words for a view on the `:` line: every word of a kind the view shows (its names,
plural, singular and kubectl short names, from `kindnames.CONSOLE_KINDS`: `gjh`, `gprio`,
`gckg`), and the console's own (`cap`, `ev`, `tune`, `serve`)."""


def resolve_jump(text: str) -> str:
    """What `:` + `text` means: a view name, `ctx`, `ns`, `describe`, `quit`, or the unknown word
    itself ("" for nothing). Unique prefixes of view names work (`cap`, `no`)."""
    word = text.strip().lower().lstrip(":")
    word = JUMP_ALIASES.get(word, word)
    if not word or word in (*VIEWS, *REGISTRY_VIEWS, "ctx", "ns", "describe", "quit"):
        return word
    matches = [v for v in (*VIEWS, *REGISTRY_VIEWS) if v.startswith(word)]
    return matches[0] if len(matches) == 1 else word


def bindings(keys: tuple[Key, ...]) -> list[BindingType]:
    """Textual bindings of `keys`."""
    return [k.binding for k in keys]


def write_actions(keys: tuple[Key, ...]) -> frozenset[str]:
    """Action names (without arguments) that change the cluster."""
    return frozenset(k.action.split("(")[0] for k in keys if k.write)


def _keys_text(key: Key) -> str:
    if key.key_display:
        return key.key_display
    names = {"slash": "/", "question_mark": "?", "space": "space", "escape": "esc"}
    return ", ".join(names.get(part, part) for part in key.key.split(","))


def render_markdown() -> str:
    """docs/keybindings.md: one table per scope, generated from the bindings (the registry
    views' sort keys too: their specs are loaded first, and their tables follow the fixed
    scopes in the order of the view names, whatever order the specs were imported in)."""
    import gryvia_cli.tui.kinds  # noqa: F401  (registers the specs and their sort keys)

    sorts = {f"{view}-list" for view in LIST_SORTS}
    scopes = [s for s in SCOPES if s not in sorts] + sorted(sorts)

    out = [
        "# Keys of `gryvia tui`",
        "",
        "Generated from `gryvia_cli/tui/bindings.py` (a test fails when this file drifts).",
        "Keys marked *write* are hidden with `--readonly`. `ctrl+p` opens the command palette,",
        "which lists every action below as `noun: Verb`.",
        "",
    ]
    for scope in scopes:
        keys = SCOPES[scope]
        out += [
            f"## {SCOPE_TITLES[scope]}",
            "",
            "| Key | Id | Action | Description |",
            "|---|---|---|---|",
        ]
        for key in keys:
            note = " (*write*)" if key.write else ""
            out.append(
                f"| `{_keys_text(key)}` | `{key.id}` | {key.description}{note} | {key.tooltip} |"
            )
        out.append("")
    return "\n".join(out)
