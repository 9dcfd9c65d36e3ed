"""The byte scans that pick orjson or json give the regexes' answers (core/jsonscan.py)."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from gryvia_cli.core.jsonscan import has_long_integer, orjson_may_differ

LONG = re.compile(rb"\d{19}")
DIFFERS = re.compile(rb"\d{19}|[eE]-|0\.0000")
# bytes biased to digits and the characters the patterns look for, so runs of 19 happen
PIECES = st.lists(
    st.sampled_from([b"0", b"1", b"9", b"12345", b"1234567890", b"e", b"E", b"-", b".", b'"', b" "])
    | st.binary(max_size=3),
    max_size=60,
).map(b"".join)


@given(PIECES)
def test_long_integer_scan_matches_the_regex(data: bytes) -> None:
    assert has_long_integer(data) == bool(LONG.search(data))


@given(PIECES)
def test_orjson_difference_scan_matches_the_regex(data: bytes) -> None:
    assert orjson_may_differ(data) == bool(DIFFERS.search(data))


def test_examples() -> None:
    assert has_long_integer(b'{"n": 1234567890123456789}')
    assert not has_long_integer(b'{"n": 123456789012345678, "m": "1-234567890123456789"}')
    assert has_long_integer(b'"uid-12345678901234567890"')  # in a string too, like the regex
    assert orjson_may_differ(b"[1e-05]") and orjson_may_differ(b"[0.00001]")
    assert not orjson_may_differ(b'{"a": 1.5, "b": "x"}')
