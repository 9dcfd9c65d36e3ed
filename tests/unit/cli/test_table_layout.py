"""The fast table layout of `output.render_table` is Rich's, byte for byte, whenever it
applies (one-line cells of single-width characters that fit the width), with and without colour."""

from __future__ import annotations

import io
import string
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from gryvia_cli import output, tablelayout
from gryvia_cli.core.cells import Marked

TEXT = st.text(alphabet=string.ascii_letters + string.digits + " -_/.:~$<>[]✓✗▶ïé→…", max_size=30)
CELL = st.one_of(
    TEXT,
    st.none(),
    st.integers(-5, 10_000),
    st.builds(Marked, TEXT, st.sampled_from([*tablelayout.MARKER_STYLES, "nomarker"])),
)


def rich_text(columns: list[str], rows: list[list[Any]], color: bool, width: int) -> str:
    from rich.console import Console

    console = Console(
        file=io.StringIO(),
        color_system="standard" if color else None,
        no_color=not color,
        force_terminal=color or None,
        highlight=False,
        soft_wrap=False,
        emoji=False,
        markup=False,
        width=width,
    )
    return output._rich_table(console, columns, rows, color)


@st.composite
def tables(draw: Any) -> tuple[list[str], list[list[Any]]]:
    columns = draw(
        st.lists(
            st.text(string.ascii_lowercase + " ", min_size=1, max_size=12), min_size=1, max_size=6
        )
    )
    rows = draw(st.lists(st.lists(CELL, min_size=len(columns), max_size=len(columns)), max_size=8))
    return columns, rows


@settings(max_examples=300, deadline=None)
@given(tables(), st.booleans(), st.sampled_from([output.UNBOUNDED_WIDTH, 60, 100]))
def test_the_fast_layout_is_richs(
    table: tuple[list[str], list[list[Any]]], color: bool, width: int
) -> None:
    columns, rows = table
    fast = tablelayout.plain_table(columns, rows, color, width)
    if fast is None:  # wider than the terminal: Rich shortens it
        return
    assert fast == rich_text(columns, rows, color, width)


def test_what_the_fast_layout_leaves_to_rich() -> None:
    assert tablelayout.plain_table(["name"], [["x" * 90]], False, 80) is None
    assert tablelayout.plain_table(["name"], [["日本"]], False, 80) is None  # wide
    assert tablelayout.plain_table(["name"], [["nai\u0308ve"]], False, 80) is None  # combining
    assert tablelayout.plain_table(["name"], [["naïve ✓"]], False, 80) == "NAME\nnaïve ✓\n"
    assert tablelayout.plain_table(["name"], [["two\nlines"]], False, 80) is None
    assert tablelayout.plain_table(["name"], [["a", "b"]], False, 80) is None
    assert tablelayout.plain_table(["name"], [["a"]], False, None) is None
    assert tablelayout.plain_table(["name"], [["a"]], False, 80) == "NAME\na\n"
