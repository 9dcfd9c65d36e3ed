"""Every kind of `api.ALL_KINDS` is wired everywhere a kind must be: a controller row in the
operator (or declared data-only), a console view (or declared not shown), a CLI noun, and a
page under docs/ other than the generated CRD reference."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, cast, get_args

import pytest

from gryvia_cli.kube import resources as r
from gryvia_cli.tui.kindnames import CONSOLE_KINDS, NOT_SHOWN, ObjectKind, kind_words
from gryvia_operator.api import ALL_KINDS, KindInfo
from gryvia_operator.handlers.registry import CONTROLLERS, DATA_ONLY

DOCS = Path(__file__).resolve().parents[2] / "docs"
KIND_IDS = [k.kind for k in ALL_KINDS]


def _watched_plurals() -> dict[str, set[str]]:
    """The plurals the operator's kopf registry and informers watch (every optional feature
    on), each with the modules and handler ids (index ids) that watch it."""
    from gryvia_operator.controller.runtime import Runtime
    from gryvia_operator.handlers.registry import build_registry
    from gryvia_operator.reconcile.config import ReconcileConfig
    from tests.unit.operator.fakeapi import FakeApi

    skip = {"admission_fail_open", "simulate_device_plugin"}
    flags = {
        f.name: True
        for f in dataclasses.fields(ReconcileConfig)
        if f.type in ("bool", bool) and f.name not in skip
    }
    rt = Runtime(api=cast(Any, FakeApi()), config=ReconcileConfig(**flags))
    registry = build_registry(rt, None, None)
    watched: dict[str, set[str]] = {}
    for part in (registry._indexing, registry._watching, registry._changing):
        for handler in part.get_all_handlers():
            plural = handler.selector.plural or handler.selector.any_name
            watched.setdefault(str(plural), set()).update({handler.fn.__module__, handler.id})
    for (path, _), informer in rt.informers.items():  # kinds read by list-and-watch
        fns = [*informer.indexers.values(), *informer.listeners.values()]
        modules = {getattr(fn, "func", fn).__module__ for fn in fns}
        watched.setdefault(path.rsplit("/", 1)[1], set()).update({*modules, *informer.indexers})
    return watched


def test_every_kind_has_a_controller_row_or_is_declared_data_only() -> None:
    resources = {k.resource for k in ALL_KINDS}
    assert not set(CONTROLLERS) & set(DATA_ONLY)
    assert set(CONTROLLERS) | set(DATA_ONLY) == resources, "a kind without a row, or a stray row"
    assert all(reason.strip() for reason in DATA_ONLY.values())


def test_the_controller_rows_are_what_the_operator_watches() -> None:
    watched = _watched_plurals()
    for res, row in CONTROLLERS.items():
        module = row.module
        short = module.__name__.rsplit(".", 1)[1]
        owners = watched.get(res.plural, set())
        assert module.__name__ in owners or any(short in o for o in owners), res.kind
    for res in DATA_ONLY:
        assert res.plural not in watched, f"{res.kind} is watched, so not data-only"


def test_every_kind_has_a_console_view_or_is_declared_not_shown() -> None:
    from gryvia_cli.tui.bindings import REGISTRY_VIEWS, VIEWS
    from gryvia_cli.tui.kinds import EVENTS  # registers every spec
    from gryvia_cli.tui.registry import REGISTRY

    assert EVENTS is REGISTRY["events"]
    rows = {row.resource.kind: row for row in CONSOLE_KINDS}
    assert not set(rows) & set(NOT_SHOWN)
    assert set(NOT_SHOWN) <= set(KIND_IDS) and all(NOT_SHOWN.values())
    for info in ALL_KINDS:
        if info.kind in NOT_SHOWN:
            continue
        row = rows.get(info.kind)
        assert row is not None, f"{info.kind} has no console row"
        assert row.resource is info.resource
        assert row.view in VIEWS or (row.view in REGISTRY_VIEWS and row.view in REGISTRY), row
    assert set(REGISTRY) == set(REGISTRY_VIEWS)


def test_the_console_rows_are_its_object_kinds_and_their_words_are_unambiguous() -> None:
    names = [row.name for row in CONSOLE_KINDS]
    assert sorted(names) == sorted(get_args(ObjectKind)) and len(set(names)) == len(names)
    owner: dict[str, str] = {}
    for row in CONSOLE_KINDS:
        for word in kind_words(row):
            assert owner.setdefault(word, row.name) == row.name, (word, row.name)


@pytest.mark.parametrize("info", ALL_KINDS, ids=KIND_IDS)
def test_every_kind_has_a_cli_noun(info: KindInfo) -> None:
    nouns = r.NOUNS.get(info.resource)
    assert nouns, f"{info.kind} has no CLI noun in kube/resources.NOUNS"
    assert all(r.lookup(noun) is info.resource for noun in nouns)
    assert r.noun(info.resource) == nouns[0]


@pytest.mark.parametrize("info", ALL_KINDS, ids=KIND_IDS)
def test_every_kind_has_a_docs_page(info: KindInfo) -> None:
    pages = [
        p.relative_to(DOCS).as_posix()
        for p in sorted(DOCS.rglob("*.md"))
        if p.parent.name != "reference" and info.kind in p.read_text(encoding="utf-8")
    ]
    assert pages, f"no page under docs/ (besides the CRD reference) names {info.kind}"
