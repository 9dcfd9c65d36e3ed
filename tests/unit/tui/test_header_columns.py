"""Console columns made from the CLI's headers (`gryvia_cli/tui/columns.py`): labels and keys
follow the headers, the layout words set width, priority, alignment and the flex column, and
a view built this way says the same words as `gryvia <kind> list -o wide`."""

from __future__ import annotations

import pytest

from gryvia_cli.core.workflows import WORKFLOW_WIDE_COLUMNS
from gryvia_cli.tui.columns import column_key, header_columns
from gryvia_cli.tui.widgets.rowtable import Column


@pytest.mark.parametrize(
    ("header", "key"),
    [
        ("LAST-RESTORE", "last_restore"),
        ("GPU TYPE", "gpu_type"),
        ("used-by-spec.priority", "used_by_spec_priority"),
        ("AGE", "created"),
        ("GPU%", "gpu%"),
    ],
)
def test_a_header_gives_its_column_key(header: str, key: str) -> None:
    assert column_key(header) == key


def test_layout_words_set_width_priority_alignment_and_the_flex_column() -> None:
    cols = header_columns(
        ("NAME", "RUNS", "MESSAGE", "AGE"),
        "16:0*32 4:1> 24:5 5:2",
        labels={"NAME": "WORKFLOW"},
        keys={"MESSAGE": "msg"},
    )
    assert cols == (
        Column("name", "WORKFLOW", 16, 0, flex=True, max_width=32),
        Column("runs", "RUNS", 4, 1, justify="right"),
        Column("msg", "MESSAGE", 24, 5),
        Column("created", "AGE", 5, 2),
    )


@pytest.mark.parametrize(
    ("layout", "words"),
    [
        ("16:0 4:1", "2 words for 3 headers"),
        ("16:0 4 5:1", "'4' of 'RUNS'"),
        ("1:0 2:0 3:x", "'3:x'"),
    ],
)
def test_a_wrong_layout_is_refused_naming_the_word(layout: str, words: str) -> None:
    with pytest.raises(ValueError, match=words):
        header_columns(("NAME", "RUNS", "AGE"), layout)


def test_the_workflows_view_says_the_words_of_workflow_list_wide() -> None:
    from gryvia_cli.tui.kind_workflows import WORKFLOWS

    labels = [c.label for c in WORKFLOWS.columns]
    expected = ["NAMESPACE", "WORKFLOW", *(h.replace("-", " ") for h in WORKFLOW_WIDE_COLUMNS[1:])]
    assert labels == expected
