"""The console's keys per view: the Key record and the base table of each scope (the keys
`bindings.py` adds per column, and every lookup, live there)."""

from __future__ import annotations

from dataclasses import dataclass

from textual.binding import Binding

from gryvia_cli.tui.kindnames import CONSOLE_KINDS


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
REGISTRY_VIEWS = (
    "events",
    *dict.fromkeys(row.view for row in CONSOLE_KINDS if row.view not in VIEWS),
)
"""Views built from the view registry (`tui/registry.py`): reached with `:` + name; the events
view, then the views of `kindnames.CONSOLE_KINDS` other than `VIEWS`, in its order."""

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


def filter_key(scope: str, tooltip: str) -> Key:
    """The `/` key of a view that filters its rows (a priority key: typed text is never
    lost); `tooltip` says what the filter matches."""
    return Key(scope, "slash", "filter", "Filter", tooltip, key_display="/", priority=True)


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
    filter_key(
        "jobs", "Filter by text and terms such as phase:running type:training gpu:H100 ns:team-a"
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
    Key(
        "job",
        "s",
        "shell",
        "Shell",
        "Open a shell in replica 0's pod (the console comes back when it exits)",
        show=False,
        write=True,
    ),
    Key(
        "job",
        "F",
        "port_forward",
        "Forward",
        "Forward a local port to replica 0's pod (LOCAL:REMOTE; Ctrl-C returns)",
        show=False,
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
    filter_key("queue", "Filter by text and terms such as gpu:H100"),
    Key("queue", "c", "cancel", "Cancel", "Cancel the job under the cursor", write=True),
)

NODES: tuple[Key, ...] = (
    filter_key("nodes", "Filter by text and terms such as gpu:H100"),
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
    filter_key("list", "Filter the rows by words (all must match)"),
    Key("list", "d", "describe", "Describe", "Describe the object of the row (also enter)"),
    Key("list", "e", "events", "Events", "Events of the object of the row, newest first"),
    Key("list", "escape", "back", "Back", "Close this view (or clear the filter)", show=False),
    Key("list", "o", "sort", "Sort", "Sort by the next column", show=False),
    Key("list", "O", "reverse", "Reverse", "Reverse the sort order", show=False),
)
"""Keys of the views built from the view registry (`REGISTRY_VIEWS`: events, tenants, ...)."""

DESCRIBE = (
    Key("describe", "escape", "back", "Back", "Back to where it was opened"),
    Key("describe", "e", "events", "Events", "Events of this object, newest first"),
)

CONFIRM = (
    Key("confirm", "y", "confirm", "Yes", "Do it"),
    Key("confirm", "n,escape", "dismiss_dialog", "No", "Keep things as they are"),
)
