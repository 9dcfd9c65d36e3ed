"""The CLI's resource nouns, keyed to the one resource table of `gryvia_operator.api`."""

from __future__ import annotations

import pytest

from gryvia_cli.errors import UsageError
from gryvia_cli.kube import resources as r
from gryvia_operator.api import ALL_KINDS, KindInfo, kind_info
from gryvia_operator.api import resources as api


@pytest.mark.parametrize("info", ALL_KINDS, ids=lambda k: k.kind)
def test_every_noun_resolves_to_the_api_row_of_its_kind(info: KindInfo) -> None:
    res = r.lookup(info.kind)
    assert res is api.by_kind(info.kind)
    assert (res.kind, res.group, res.version, res.plural) == (
        info.kind,
        info.group,
        info.version,
        info.plural,
    )
    assert res.namespaced == info.namespaced and res.short_names == info.short_names
    assert r.lookup(info.plural) is res and all(r.lookup(s) is res for s in info.short_names)
    assert r.lookup(f"{info.plural}.{info.group}") is res and r.lookup(res.qualified) is res
    assert all(r.lookup(n.upper()) is res for n in r.NOUNS[res])
    assert kind_info(res.kind) is info


def test_the_rows_are_the_api_tables_own_objects() -> None:
    assert r.GRYVIA_RESOURCES is api.GRYVIA
    assert [res.kind for res in r.GRYVIA_RESOURCES] == [k.kind for k in ALL_KINDS]
    for name in ("AIJOB", "GPUNODE", "POD", "NODE", "EVENT", "NAMESPACE", "LEASE", "JOB"):
        assert getattr(r, name) is getattr(api, name)
    assert set(r.NOUNS) <= {*api.GRYVIA, *api.BUILTIN}
    assert set(api.GRYVIA) <= set(r.NOUNS)


def test_nouns_and_paths() -> None:
    assert r.lookup("job") is r.AIJOB and r.lookup("Jobs") is r.AIJOB and r.lookup("gaj") is r.AIJOB
    assert r.lookup("node") is r.GPUNODE and r.lookup("sku") is r.GPUSKU
    assert r.lookup(" usage ") is r.USAGE_RECORD and r.lookup("job-hooks") is r.JOBHOOK
    assert r.noun(r.AIJOB) == "job" and r.noun(r.POD) == "pod" and r.noun(r.EVENT) == "event"
    assert r.noun(r.NODE) == "node"
    assert r.AIJOB.path("ml", "a") == "/apis/gryvia.io/v1alpha1/namespaces/ml/gryviaaijobs/a"
    assert r.AIJOB.path(None) == "/apis/gryvia.io/v1alpha1/gryviaaijobs"
    assert r.POD.path("ml") == "/api/v1/namespaces/ml/pods" and r.NODE.path("ml") == "/api/v1/nodes"
    assert r.POD.path("ml", "p-0", "log") == "/api/v1/namespaces/ml/pods/p-0/log"
    assert r.AIJOB.qualified == "gryviaaijob.gryvia.io" and r.POD.qualified == "pod"


def test_names_are_url_quoted_once() -> None:
    assert r.AIJOB.path("a b", "x/y") == (
        "/apis/gryvia.io/v1alpha1/namespaces/a%20b/gryviaaijobs/x%2Fy"
    )
    assert r.AIJOB.path("ml", "50%") == "/apis/gryvia.io/v1alpha1/namespaces/ml/gryviaaijobs/50%25"


def test_unknown_nouns_name_the_accepted_ones() -> None:
    with pytest.raises(UsageError) as err:
        r.lookup("widget")
    assert err.value.message == 'unknown resource type "widget"'
    assert "job, node, sku" in (err.value.hint or "")
