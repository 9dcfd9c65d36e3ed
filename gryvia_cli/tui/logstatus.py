"""The words of the Job view's log status line, pure: which pod of how many, whether the
view follows, reads, ended or waits, the toggles, and what a deleted pod left (the lines
read, the operator's saved lines)."""

from __future__ import annotations

from dataclasses import dataclass

from gryvia_operator.api.savedlogs import SavedLog

STATE_WORDS = {
    "following": "following",
    "reading": "reading",
    "ended": "ended",
    "idle": "waiting for the container to start",
}
"""The log view's state (`JobLogsBase.log_state`, besides `gone`) -> its words."""


@dataclass(frozen=True)
class LogStatus:
    """What the status line tells: the job's pod names in view order, the pod shown, its
    log state (following | reading | ended | idle | gone) and note, the line count, the
    toggles, the search, whether the previous container is shown, and the saved lines shown
    (with whether they replaced the lines read) or still looked for."""

    pods: tuple[str, ...]
    pod: str | None
    state: str
    note: str
    lines: int
    follow: bool
    wrap: bool
    timestamps: bool
    search: str
    previous: bool
    saved: SavedLog | None
    saved_replaced: bool
    saved_wanted: bool


def log_status_text(s: LogStatus) -> str:
    """The status line, starting with a space (plain text: pod names are user data)."""
    saved = s.saved
    if saved is not None:
        cut = ", cut: earlier lines were not kept" if saved.cut else ""
        shown = "showing saved lines" if s.saved_replaced else "showing the lines read"
        text = (
            f" {saved.pod} · deleted: {shown} ({saved.lines} kept by the "
            f"operator at {saved.saved_at}{cut}) · {s.lines} lines"
        )
    elif s.state == "gone":
        looking = "looking for saved lines" if s.saved_wanted else "no saved lines"
        note = f" · {s.note}" if s.note.startswith("saved") else ""
        text = f" {s.pod} · deleted: showing the {s.lines} lines read before · {looking}{note}"
    elif not s.pods:
        text = " no pods yet: logs appear when the job's first pod starts"
    else:
        where = f"{s.pod} ({s.pods.index(s.pod) + 1}/{len(s.pods)})" if s.pod in s.pods else "-"
        state = STATE_WORDS[s.state]
        toggles = (("follow", s.follow), ("wrap", s.wrap), ("times", s.timestamps))
        flags = " ".join(f"{name} {'on' if value else 'off'}" for name, value in toggles)
        if s.search:
            flags += f" · “{s.search}”"
        if s.previous:
            state = f"previous container, {state}"
        note = f": {s.note}" if s.note and s.state == "ended" else ""
        text = f" {where} · {state}{note} · {s.lines} lines · {flags}"
    if (saved is not None or s.state == "gone") and s.pods:
        text += " · ]: next pod"
    return text
