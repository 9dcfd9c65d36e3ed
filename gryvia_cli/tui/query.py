"""The `/` filter language: words match names, `field:value` terms match fields.

`train phase:running,queued gpu:H100 !ns:kube-*` keeps rows whose text contains `train`, whose
phase is Running or Queued, GPU type H100, and namespace not matching `kube-*`. Values are
case-insensitive and may use `*` wildcards; a `!` in front negates a word or a term. Phase
terms also accept the buckets `waiting`, `active`, `succeeded`, `failed`, `stopped`.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Term:
    """`field:value1,value2` (any value matches), maybe negated."""

    field: str
    values: tuple[str, ...]
    negate: bool = False


@dataclass(frozen=True)
class Query:
    """A parsed filter."""

    words: tuple[tuple[str, bool], ...] = ()
    terms: tuple[Term, ...] = ()
    unknown: tuple[str, ...] = field(default=())

    def __bool__(self) -> bool:
        return bool(self.words or self.terms)


def parse_query(text: str, fields: Iterable[str]) -> Query:
    """Parse `text`; terms on fields not in `fields` are reported in `unknown` and ignored."""
    known = set(fields)
    words: list[tuple[str, bool]] = []
    terms: list[Term] = []
    unknown: list[str] = []
    for token in text.split():
        negate = token.startswith("!")
        body = token[1:] if negate else token
        if not body:
            continue
        name, sep, value = body.partition(":")
        if sep and name:
            if name.lower() not in known:
                unknown.append(name)
                continue
            values = tuple(v.lower() for v in value.split(",") if v)
            if values:
                terms.append(Term(name.lower(), values, negate))
        else:
            words.append((body.lower(), negate))
    return Query(tuple(words), tuple(terms), tuple(unknown))


def _value_matches(pattern: str, value: str) -> bool:
    return fnmatch.fnmatchcase(value, pattern) if "*" in pattern else value == pattern


def matches(query: Query, text: str, fields: Mapping[str, Iterable[str]]) -> bool:
    """True when the row with searchable `text` and `fields` (field -> its values, lower
    case) passes every word and term of `query`. `text` must be lower case."""
    for word, negate in query.words:
        if (word in text) == negate:
            return False
    for term in query.terms:
        values = fields.get(term.field, ())
        hit = any(_value_matches(p, v) for p in term.values for v in values)
        if hit == term.negate:
            return False
    return True
