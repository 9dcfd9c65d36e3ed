"""Every key of the console, with ids, tooltips and palette titles; help, palette and
docs/keybindings.md are generated from here."""

from __future__ import annotations

from dataclasses import dataclass

from textual.binding import Binding, BindingType


@dataclass(frozen=True)
class Key:
    """One key: its Textual binding plus the palette title and whether it writes."""

    scope: str
    key: str
    action: str
    description: str
    tooltip: str
    title: str = ""
    show: bool = True
    write: bool = False
    key_display: str | None = None
    ident: str = ""
    priority: bool = False
    """Checked before the focused widget sees the key (views refuse it while an input has
    the focus), so that a fast `/text⏎` or `:view⏎` never loses keys."""

    @property
    def id(self) -> str:
        """`scope.name`, e.g. `jobs.cancel` (name: `ident`, else the action's name)."""
        return f"{self.scope}.{self.ident or self.action.split('(')[0]}"

    @property
    def palette_title(self) -> str:
        """`noun: Verb` title in the command palette."""
        return self.title or f"{self.scope}: {self.description}"

    @property
    def binding(self) -> Binding:
        """The Textual Binding (id and tooltip set)."""
        return Binding(
            self.key,
            self.action,
            self.description,
            show=self.show,
            key_display=self.key_display,
            tooltip=self.tooltip,
            id=self.id,
            priority=self.priority,
        )


VIEWS = ("jobs", "queue", "capacity", "cost", "nodes", "submit")
"""View names, in the order of their number keys and of the view bar."""
REGISTRY_VIEWS = ("events", "tenants", "pods", "reservations")
"""Views built from the view registry (`tui/registry.py`): reached with `:` + name."""

APP = (
    Key(
        "app",
        ":",
        "jump",
        "Jump",
        "Jump to a view by name: jobs, queue, capacity, cost, nodes, submit, or ctx / ns to switch",
        "view: Jump to…",
        key_display=":",
        priority=True,
    ),
    Key(
        "app",
        "question_mark",
        "help",
        "Keys",
        "Show every key of this view and the app",
        "app: Show keys",
        key_display="?",
    ),
    *(
        Key(
            "app",
            str(i),
            f"view('{name}')",
            name.capitalize(),
            f"Show the {name} view",
            f"view: {name.capitalize()}",
            show=False,
            ident=f"view_{name}",
        )
        for i, name in enumerate(VIEWS, start=1)
    ),
    Key(
        "app",
        "ctrl+x",
        "switch_context",
        "Context",
        "Switch the kubeconfig context",
        "context: Switch",
    ),
    Key(
        "app",
        "ctrl+n",
        "switch_namespace",
        "Namespace",
        "Switch the namespace, or all namespaces",
        "namespace: Switch",
    ),
    Key("app", "q", "quit", "Quit", "Leave the console", "app: Quit", show=False),
    Key(
        "app",
        "ctrl+e",
        "view('events')",
        "Events",
        "Every event of the namespace (or of all namespaces), newest first; also :events",
        "view: Events",
        show=False,
        ident="view_events",
    ),
)

TABLE = (
    Key("table", "up,k", "cursor_up", "Up", "Move up", show=False),
    Key("table", "down,j", "cursor_down", "Down", "Move down", show=False),
    Key("table", "pageup", "page_up", "Page up", "Move up one page", show=False),
    Key("table", "pagedown", "page_down", "Page down", "Move down one page", show=False),
    Key("table", "home,g", "first", "First", "Go to the first row", show=False),
    Key("table", "end,G", "last", "Last", "Go to the last row", show=False),
    Key("table", "enter", "activate", "Open", "Open the row under the cursor", show=False),
)

JOBS: tuple[Key, ...] = (
    Key(
        "jobs",
        "slash",
        "filter",
        "Filter",
        "Filter by text and terms such as phase:running type:training gpu:H100 ns:team-a",
        key_display="/",
        priority=True,
    ),
    Key("jobs", "d", "describe", "Describe", "Open the job: spec, conditions, pods, events, cost"),
    Key("jobs", "l", "logs", "Logs", "Follow the logs of the job under the cursor"),
    Key(
        "jobs",
        "space",
        "toggle_mark",
        "Mark",
        "Mark or unmark the job (actions apply to all marked jobs)",
        show=False,
    ),
    Key("jobs", "ctrl+a", "mark_all", "Mark all", "Mark every job shown", show=False),
    Key("jobs", "o", "sort", "Sort", "Sort by the next column"),
    Key("jobs", "O", "reverse", "Reverse", "Reverse the sort order", show=False),
    Key("jobs", "escape", "clear", "Clear", "Clear the filter and the marks", show=False),
    Key(
        "jobs",
        "c",
        "cancel",
        "Cancel",
        "Cancel the marked jobs, or the one under the cursor",
        write=True,
    ),
    Key(
        "jobs",
        "ctrl+d",
        "delete",
        "Delete",
        "Delete the marked jobs, or the one under the cursor",
        show=False,
        write=True,
    ),
    Key(
        "jobs",
        "R",
        "resubmit",
        "Resubmit",
        "Submit a copy of the job under the cursor",
        show=False,
        write=True,
    ),
    Key("jobs", "s", "submit", "Submit", "Open the submit form", write=True),
    Key(
        "jobs",
        "e",
        "events",
        "Events",
        "Events of the job under the cursor and of its pods, newest first",
        show=False,
    ),
)

JOB = (
    Key("job", "escape", "back", "Back", "Back to the list"),
    Key(
        "job",
        "o",
        "tab('overview')",
        "Overview",
        "Spec, waiting reason, cost, conditions, pods and events",
        ident="overview",
    ),
    Key("job", "y", "tab('yaml')", "YAML", "The job as the API server stores it", ident="yaml"),
    Key("job", "l", "tab('logs')", "Logs", "Follow the logs", ident="logs"),
    Key("job", "c", "cancel", "Cancel", "Cancel this job", write=True),
    Key("job", "ctrl+d", "delete", "Delete", "Delete this job", show=False, write=True),
    Key("job", "R", "resubmit", "Resubmit", "Submit a copy of this job", show=False, write=True),
    Key(
        "job", "e", "events", "Events", "Events of this job and its pods, newest first", show=False
    ),
)

LOGS = (
    Key("logs", "f", "follow", "Follow", "Follow new lines, or stop following"),
    Key("logs", "w", "wrap", "Wrap", "Wrap long lines"),
    Key("logs", "t", "timestamps", "Times", "Show or hide timestamps"),
    Key(
        "logs",
        "p",
        "previous",
        "Previous",
        "Show the log of the container before its last restart, or the current one again",
    ),
    Key(
        "logs",
        "right_square_bracket",
        "pod(1)",
        "Next pod",
        "Show the next pod (replica)",
        key_display="]",
        ident="next_pod",
    ),
    Key(
        "logs",
        "left_square_bracket",
        "pod(-1)",
        "Prev pod",
        "Show the previous pod (replica)",
        show=False,
        key_display="[",
        ident="prev_pod",
    ),
    Key(
        "logs",
        "slash",
        "search",
        "Search",
        "Highlight a text and jump to it",
        key_display="/",
        priority=True,
    ),
    Key(
        "logs",
        "n",
        "match(1)",
        "Next match",
        "Jump to the next match",
        show=False,
        ident="next_match",
    ),
    Key(
        "logs",
        "N",
        "match(-1)",
        "Prev match",
        "Jump to the previous match",
        show=False,
        ident="prev_match",
    ),
)

QUEUE: tuple[Key, ...] = (
    Key("queue", "d", "describe", "Describe", "Open the job under the cursor"),
    Key(
        "queue",
        "slash",
        "filter",
        "Filter",
        "Filter by text and terms such as gpu:H100",
        key_display="/",
        priority=True,
    ),
    Key("queue", "c", "cancel", "Cancel", "Cancel the job under the cursor", write=True),
)

NODES: tuple[Key, ...] = (
    Key(
        "nodes",
        "slash",
        "filter",
        "Filter",
        "Filter by text and terms such as gpu:H100",
        key_display="/",
        priority=True,
    ),
    Key("nodes", "o", "sort", "Sort", "Sort by the next column"),
    Key(
        "nodes",
        "d",
        "describe",
        "Describe",
        "Describe the node under the cursor: fields, status, conditions, events",
        show=False,
    ),
    Key("nodes", "e", "events", "Events", "Events of the node under the cursor", show=False),
)

SUBMIT = (
    Key(
        "submit", "ctrl+s", "create", "Submit", "Create the job(s) shown in the preview", write=True
    ),
    Key("submit", "ctrl+o", "open_file", "Open file", "Load a YAML manifest or an sbatch script"),
    Key("submit", "ctrl+r", "reset", "Reset", "Back to an empty form", show=False),
    Key(
        "submit",
        "escape",
        "leave_form",
        "Leave form",
        "Leave the form so that view keys (1-6, :, ?) work again; tab goes back in",
        show=False,
    ),
)

LIST = (
    Key(
        "list",
        "slash",
        "filter",
        "Filter",
        "Filter the rows by words (all must match)",
        key_display="/",
        priority=True,
    ),
    Key("list", "d", "describe", "Describe", "Describe the object of the row (also enter)"),
    Key("list", "e", "events", "Events", "Events of the object of the row, newest first"),
    Key("list", "escape", "back", "Back", "Close this view (or clear the filter)", show=False),
)
"""Keys of the views built from the view registry (events, tenants, pods, reservations)."""

DESCRIBE = (
    Key("describe", "escape", "back", "Back", "Back to where it was opened"),
    Key("describe", "e", "events", "Events", "Events of this object, newest first"),
)

CONFIRM = (
    Key("confirm", "y", "confirm", "Yes", "Do it"),
    Key("confirm", "n,escape", "dismiss_dialog", "No", "Keep things as they are"),
)

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
    "list": "Events, Tenants, Pods and Reservations views (the view registry)",
    "describe": "Describe view",
    "lists": "Lists (jobs, queue, nodes, cost, pods)",
    "cost": "Cost view",
    "pods": "Pods of a node (enter on a node)",
    "costjobs": "Jobs behind a cost figure (enter on a cost row)",
}


JUMP_ALIASES = {
    "cap": "capacity",
    "job": "jobs",
    "node": "nodes",
    "costs": "cost",
    "context": "ctx",
    "namespace": "ns",
    "q": "quit",
    "exit": "quit",
    "event": "events",
    "ev": "events",
    "tenant": "tenants",
    "quota": "tenants",
    "quotas": "tenants",
    "budget": "tenants",
    "budgets": "tenants",
    "pod": "pods",
    "po": "pods",
    "reservation": "reservations",
    "rsv": "reservations",
}


def resolve_jump(text: str) -> str:
    """What `:` + `text` means: a view name, `ctx`, `ns`, `quit`, or the unknown word
    itself ("" for nothing). Unique prefixes of view names work (`cap`, `no`)."""
    word = text.strip().lower().lstrip(":")
    word = JUMP_ALIASES.get(word, word)
    if not word or word in (*VIEWS, *REGISTRY_VIEWS, "ctx", "ns", "quit"):
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
    """docs/keybindings.md: one table per scope, generated from the bindings."""
    out = [
        "# Keys of `gryvia tui`",
        "",
        "Generated from `gryvia_cli/tui/bindings.py` (a test fails when this file drifts).",
        "Keys marked *write* are hidden with `--readonly`. `ctrl+p` opens the command palette,",
        "which lists every action below as `noun: Verb`.",
        "",
    ]
    for scope, keys in SCOPES.items():
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
