"""Console columns made from the headers the CLI prints (`core.<kind>s.<KIND>_WIDE_COLUMNS`),
so a kind's table says the same words in both places and a header added to the CLI's table
is one width and priority away from the console's.

A header gives the column's label (`FAILED-STEP` -> `FAILED STEP`) and key (`failed_step`;
`AGE` -> `created`, which the polled views sort by age). Keys are what `console.yaml`'s
`columns:` and the `shift+<letter>` sort keys name, so they stay as they were when a view
moves onto this.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from gryvia_cli.tui.widgets.rowtable import Column

_WORD = re.compile(r"^(\d+):(\d+)(>?)(?:\*(\d+))?$")
_KEYS = {"AGE": "created"}


def column_key(header: str) -> str:
    """The key of the column headed `header`: lower case, words joined by `_`; AGE is
    `created`. E.g. `LAST-RESTORE` -> `last_restore`, `GPU TYPE` -> `gpu_type`."""
    return _KEYS.get(header) or re.sub(r"[^a-z0-9%#]+", "_", header.lower()).strip("_")


def header_columns(
    headers: Sequence[str],
    layout: str,
    *,
    labels: Mapping[str, str] | None = None,
    keys: Mapping[str, str] | None = None,
) -> tuple[Column, ...]:
    """One `Column` per header, in order. `layout` has one word per header, `WIDTH:PRIORITY`
    (priority: lower stays longer when the table is narrow), then `>` to right-justify and
    `*MAX` to make it the column that takes the spare width, up to MAX cells; e.g.
    `"14:3 16:0*32 9:0 4:0>"`. `labels` and `keys` override a header's label or key (the
    console names the NAME column after the kind: `{"NAME": "WORKFLOW"}`).

    Raises ValueError when the layout has a different number of words than there are headers
    or a word is not of that form (a programming error, found at import)."""
    words = layout.split()
    if len(words) != len(headers):
        raise ValueError(f"layout has {len(words)} words for {len(headers)} headers: {headers}")
    labels, keys = labels or {}, keys or {}
    columns = []
    for header, word in zip(headers, words, strict=True):
        match = _WORD.match(word)
        if match is None:
            raise ValueError(f"layout word {word!r} of {header!r} is not WIDTH:PRIORITY[>][*MAX]")
        width, priority, right, widest = match.groups()
        columns.append(
            Column(
                keys.get(header) or column_key(header),
                labels.get(header) or header.upper().replace("-", " "),
                int(width),
                int(priority),
                justify="right" if right else "left",
                flex=widest is not None,
                max_width=int(widest) if widest else 48,
            )
        )
    return tuple(columns)
