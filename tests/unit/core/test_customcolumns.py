"""kubectl's custom columns: spec and file parsing, `<none>`, Go value forms, escapes, and
tabwriter alignment (minimum 6, padding 3, last column unpadded)."""

from __future__ import annotations

import pytest

from gryvia_cli.core.customcolumns import (
    columns_from_file,
    columns_from_spec,
    render_columns,
    tabwrite,
)
from gryvia_cli.core.jsonpath import JsonPathError

LIST = {
    "kind": "List",
    "items": [
        {"metadata": {"name": "train-a", "labels": {"team": "vision"}}, "spec": {"gpus": 8}},
        {"metadata": {"name": "b"}, "spec": {"gpus": 1, "tags": ["x", "y"], "n": None}},
    ],
}


def test_a_list_is_one_row_per_item_and_missing_fields_are_none() -> None:
    columns = columns_from_spec("NAME:.metadata.name,gpus:spec.gpus,LABELS:{.metadata.labels}")
    assert render_columns(LIST, columns) == (
        "NAME      gpus   LABELS\ntrain-a   8      map[team:vision]\nb         1      <none>\n"
    )


def test_a_single_object_is_one_row_and_several_results_join_with_commas() -> None:
    columns = columns_from_spec("TAGS:.spec.tags[*],N:.spec.n,ALL:.spec.tags")
    assert render_columns(LIST["items"][1], columns) == (
        "TAGS   N       ALL\nx,y    <nil>   [x y]\n"
    )


def test_terminal_escapes_are_shown_as_kubectl_shows_them() -> None:
    columns = columns_from_spec("NAME:.name")
    assert render_columns({"name": "a\x1b[31mb\rc"}, columns) == "NAME\na^[[31mb\\rc\n"


def test_a_columns_file_has_headers_then_paths() -> None:
    columns = columns_from_file("NAME   GPUS\n.metadata.name   {.spec.gpus}\n")
    assert [c.header for c in columns] == ["NAME", "GPUS"]
    with pytest.raises(JsonPathError, match="missing spec line"):
        columns_from_file("NAME GPUS\n")
    with pytest.raises(
        JsonPathError, match=r"number of headers \(2\) and field specifications \(1\)"
    ):
        columns_from_file("NAME GPUS\n.a\n")


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("", "custom-columns format specified but no custom columns given"),
        ("NAME", "unexpected custom-columns spec: NAME, expected <header>:<json-path-expr>"),
        ("NAME:{.a}{.b}", "unexpected path string"),
    ],
)
def test_bad_specs_fail_with_kubectls_message(spec: str, message: str) -> None:
    with pytest.raises(JsonPathError, match=message):
        columns_from_spec(spec)


def test_tabwriter_column_blocks() -> None:
    # a line with fewer cells ends the block of the columns it lacks
    assert tabwrite("a\tbb\tc\nlonger-cell\td\n\ne\tf\n") == (
        "a             bb    c\nlonger-cell   d\n\ne     f\n"  # as Go's text/tabwriter
    )
