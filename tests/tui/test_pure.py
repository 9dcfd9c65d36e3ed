"""Unit tests of the console's pure parts: filter language, table layout, store, feed,
log lines, bindings and docs, and the core computations the
console shows (job tenant, cost, spend, manifests)."""

from __future__ import annotations

import datetime as dt
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from gryvia_cli.core import manifests, spend
from gryvia_cli.core.cost import team_costs, team_scopes
from gryvia_cli.core.jobs import summarize_job
from gryvia_cli.tui import bindings
from gryvia_cli.tui.feed import Feed
from gryvia_cli.tui.query import matches, parse_query
from gryvia_cli.tui.rows import gpus_text, money, phase_cell
from gryvia_cli.tui.store import ClusterStore, event_update, list_update
from gryvia_cli.tui.widgets.logview import short_time, split_timestamp
from gryvia_cli.tui.widgets.rowtable import Column, fit, layout
from gryvia_operator.api import GryviaQuota, GryviaTenant, GryviaUsageRecord
from gryvia_operator.api.periods import elapsed_fraction
from tests.tui.builders import NOW, D, H, M, make_job, usage
from tests.tui.fake import FakeSource
from tests.tui.fixed import fixed_cluster

pytestmark = [pytest.mark.tui]
REPO = Path(__file__).resolve().parents[2]


# -- filter language ---------------------------------------------------------------------------


def test_query_words_terms_negation_and_unknown_fields() -> None:
    q = parse_query("train phase:running,queued !ns:kube-* size:big", ("phase", "ns"))
    assert q.words == (("train", False),)
    assert [(t.field, t.values, t.negate) for t in q.terms] == [
        ("phase", ("running", "queued"), False),
        ("ns", ("kube-*",), True),
    ]
    assert q.unknown == ("size",)
    fields = {"phase": ("running",), "ns": ("team-a",)}
    assert matches(q, "llama-train team-a", fields)
    assert not matches(
        q, "llama-train kube-system", {"phase": ("running",), "ns": ("kube-system",)}
    )
    assert not matches(q, "eval", fields)
    assert not parse_query("   ", ("phase",))


# -- table layout ------------------------------------------------------------------------------


def test_fit_cuts_with_an_ellipsis_and_pads() -> None:
    assert fit("abcdef", 4) == "abc…"
    assert fit("ab", 4) == "ab  "
    assert fit("ab", 4, "right") == "  ab"


def test_layout_drops_low_priority_columns_and_grows_the_flex_one() -> None:
    cols = [
        Column("name", "NAME", 10, 0, flex=True),
        Column("ns", "NS", 10, 5),
        Column("age", "AGE", 4, 1),
    ]
    assert [(c.key, w) for c, w in layout(cols, 20)] == [("name", 15), ("age", 4)]
    assert [(c.key, w) for c, w in layout(cols, 40)] == [("name", 24), ("ns", 10), ("age", 4)]


# -- store and feed ----------------------------------------------------------------------------


def test_store_applies_lists_puts_and_deletes() -> None:
    cluster = fixed_cluster()
    store = ClusterStore()
    change = store.apply([list_update("jobs", cluster["jobs"])])
    assert change.listed == {"jobs"} and len(store.jobs) == 13
    running = make_job("llama-pretrain").ns("tenant-acme").phase("Succeeded").obj()
    change = store.apply(
        [
            event_update("jobs", "MODIFIED", running),
            event_update("jobs", "DELETED", cluster["jobs"][1]),
        ]
    )
    assert change.keys["jobs"] == {"tenant-acme/llama-pretrain", "tenant-acme/bert-finetune"}
    assert store.jobs["tenant-acme/llama-pretrain"].summary.phase == "Succeeded"
    assert "tenant-acme/bert-finetune" not in store.jobs
    assert store.versions["jobs"] == 2


def test_store_skips_invalid_billing_objects_and_caches_derived_views() -> None:
    store = ClusterStore()
    store.apply(
        [list_update("usage", [{"metadata": {"name": "bad", "namespace": "x"}, "spec": {}}])]
    )
    assert store.objects["usage"] == {}
    cluster = fixed_cluster()
    store.apply(
        [list_update("gpunodes", cluster["gpunodes"]), list_update("nodes", cluster["nodes"])]
    )
    first = store.gpu_nodes()
    assert store.gpu_nodes() is first
    store.apply([event_update("nodes", "DELETED", cluster["nodes"][0])])
    assert store.gpu_nodes() is not first


def test_store_allocation_falls_back_to_jobs_when_pods_are_forbidden() -> None:
    cluster = fixed_cluster()
    store = ClusterStore()
    store.apply([list_update("jobs", cluster["jobs"])])
    assert store.allocated()["gpu-h100-0"] == 8  # from nodesAllocated
    store.apply([list_update("pods", cluster["pods"])])
    assert store.allocated()["gpu-a100-80g-0"] == 4


def test_feed_buffers_updates_and_reports_the_worst_required_state() -> None:
    states: list[tuple[str, str]] = []
    feed = Feed(
        FakeSource(fixed_cluster()), lambda kind, state, detail: states.append((kind, state))
    )
    runners = feed.runners()
    assert set(runners) >= {"jobs", "pods", "gpunodes", "usage"}
    threads = [threading.Thread(target=r.run) for r in runners.values()]
    for t in threads:
        t.start()
    try:
        deadline = dt.datetime.now() + dt.timedelta(seconds=5)
        while any(s != "live" for s, _ in feed.states.values()) and dt.datetime.now() < deadline:
            threading.Event().wait(0.01)
        assert feed.connection() == ("live", "")
        kinds = {u.kind for u in feed.drain()}
        assert {"jobs", "gpunodes", "usage"} <= kinds
        feed.states["jobs"] = ("reconnecting", "connection refused")
        assert feed.connection() == ("reconnecting", "jobs: connection refused")
        feed.states["jobs"] = ("live", "")
        feed.states["pods"] = ("failed", "forbidden")
        assert feed.connection()[0] == "live"  # pods are optional
    finally:
        feed.stop()
        for t in threads:
            t.join(5)


# -- rows and logs -----------------------------------------------------------------------------


def test_phase_cells_read_without_colour() -> None:
    running = summarize_job(make_job("a").phase("Running").obj())
    cancelling = summarize_job(
        make_job("b").annotate("gryvia.io/cancel", "true").phase("Running").obj()
    )
    assert phase_cell(running) == ("▶ Running", "ok")
    assert phase_cell(cancelling) == ("◌ Cancelling", "warn")
    assert (
        gpus_text(summarize_job(make_job("c").gpus(8).gpu_type("H100").nodes(2).obj()))
        == "2x8xH100"
    )
    assert money(1234.5) == "$1,234.50" and money(3, "EUR") == "3.00 EUR" and money(None) == "-"


def test_log_lines_split_timestamps_and_drop_control_codes() -> None:
    stamp, text = split_timestamp("2026-11-20T10:00:01.123456789Z \x1b[32mok\x1b[0m\tdone")
    assert stamp.startswith("2026-11-20T10:00:01") and text == "ok  done"
    assert split_timestamp("no stamp") == ("", "no stamp")
    assert short_time(stamp) == "10:00:01.123"


# -- bindings and docs -------------------------------------------------------------------------


def test_every_binding_has_a_unique_id_and_a_tooltip() -> None:
    keys = [k for scope in bindings.SCOPES.values() for k in scope]
    ids = [k.id for k in keys]
    assert len(ids) == len(set(ids))
    assert all("." in i and k.tooltip for i, k in zip(ids, keys, strict=True))
    titles = [k.palette_title for k in keys]
    assert all(": " in t for t in titles)


def test_keybindings_doc_matches_the_bindings() -> None:
    """docs/keybindings.md is generated; regenerate with
    `python -c "from gryvia_cli.tui.bindings import render_markdown; print(render_markdown())"`."""
    assert (REPO / "docs" / "keybindings.md").read_text() == bindings.render_markdown() + "\n"


def test_importing_the_tui_package_loads_no_textual() -> None:
    code = (
        "import sys, gryvia_cli.tui; print('textual' in sys.modules, 'kubernetes' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


# -- core computations the console shows --------------------------------------------------


def _tenant(name: str) -> dict[str, Any]:
    return {"apiVersion": "gryvia.io/v1alpha1", "kind": "GryviaTenant", "metadata": {"name": name}}


def test_store_attributes_a_job_to_the_tenant_of_its_namespace_before_its_label() -> None:
    """A job labelled team `b` in `tenant-a` is tenant a's, as the operator bills it, once
    the store holds tenant a; without that tenant the label decides."""
    store = ClusterStore()
    labelled = make_job("x").ns("tenant-a").label("gryvia.io/team", "b").obj()
    other = make_job("y").ns("research").label("gryvia.io/team", "b").obj()
    plain = make_job("z").ns("research").obj()
    store.apply([list_update("jobs", [labelled, other, plain])])
    assert {k: j.tenant for k, j in store.jobs.items()} == {
        "tenant-a/x": "b",
        "research/y": "b",
        "research/z": "research",
    }
    change = store.apply([list_update("tenants", [_tenant("a"), _tenant("b")])])
    assert change.keys["jobs"] == {"tenant-a/x"} and "jobs" in change.kinds
    assert store.jobs["tenant-a/x"].tenant == "a" and store.jobs["research/y"].tenant == "b"
    store.apply([event_update("jobs", "MODIFIED", make_job("w").ns("tenant-a").obj())])
    assert store.jobs["tenant-a/w"].tenant == "a"
    store.apply([event_update("tenants", "DELETED", _tenant("a"))])
    assert store.jobs["tenant-a/x"].tenant == "b" and store.jobs["tenant-a/w"].tenant == "tenant-a"


def test_job_cost_is_metered_when_records_exist_else_estimated() -> None:
    from gryvia_operator.api.pricing import default_catalog

    job = summarize_job(
        make_job("j")
        .gpus(2)
        .gpu_type("H100")
        .spec(timeout="10h")
        .phase("Running", started=2 * H)
        .obj()
    )
    estimated = spend.job_cost(job, "uid-j", [], default_catalog(), [], [], NOW)
    assert (estimated.so_far, estimated.per_hour, estimated.estimate, estimated.metered) == (
        32.0,
        16.0,
        160.0,
        False,
    )
    rec = GryviaUsageRecord.model_validate(usage("j", "default", "t", "H100", 2, 8.0, 2 * H, 1.0))
    metered = spend.job_cost(job, "uid-j", [rec], default_catalog(), [], [], NOW)
    assert metered.metered and metered.so_far == 16.0


def test_daily_spend_and_top_jobs_add_up_to_the_month() -> None:
    records = [GryviaUsageRecord.model_validate(u) for u in fixed_cluster()["usage"]]
    quotas = [GryviaQuota.model_validate(q) for q in fixed_cluster()["quotas"]]
    tenants = [GryviaTenant.model_validate(t) for t in fixed_cluster()["tenants"]]
    costs = team_costs(team_scopes(quotas, tenants), records, "month", NOW)
    daily = spend.daily_spend(records, NOW)
    assert len(daily) == 20
    assert sum(daily) == pytest.approx(sum(c.spent for c in costs))
    top = spend.top_jobs(records, NOW, 3)
    assert [j.job for j in top] == ["nov-train-a", "nov-train-c", "nov-train-b"]
    assert 0 < elapsed_fraction("month", NOW) < 1


def test_resubmit_body_keeps_the_spec_and_drops_server_fields() -> None:
    raw = make_job("a").annotate("gryvia.io/cancel", "true").phase("Failed").obj()
    raw["metadata"]["resourceVersion"] = "9"
    body = manifests.resubmit_body(raw)
    assert body["metadata"]["generateName"] == "a-" and "name" not in body["metadata"]
    assert "resourceVersion" not in body["metadata"] and "status" not in body
    assert "gryvia.io/cancel" not in body["metadata"]["annotations"]
    assert body["spec"] == raw["spec"]


def test_job_manifest_from_a_form() -> None:
    form = manifests.JobForm(
        name="x",
        image="img",
        gpus="8",
        gpu_type="any",
        nodes="2",
        command="python train.py --tag 'a b'",
        storage="fast",
    )
    job = manifests.build_job_manifest(form)
    assert job["spec"] == {
        "type": "training",
        "image": "img",
        "gpus": 8,
        "distributed": {"enabled": True, "nodes": 2},
        "command": ["python", "train.py", "--tag", "a b"],
        "storage": "fast",
    }
    assert manifests.build_job_manifest(manifests.JobForm(gpus="lots"))["spec"]["gpus"] == "lots"


@pytest.mark.parametrize("ago", [M, D])
def test_builder_times_are_before_now(ago: dt.timedelta) -> None:
    assert make_job("a").created(ago).obj()["metadata"]["creationTimestamp"] < NOW.isoformat()


def test_the_nodes_of_a_job_without_gpus_come_from_its_pods() -> None:
    from gryvia_cli.tui.widgets.jobdetail import pod_nodes

    pods = [
        {"spec": {"nodeName": "cpu-0"}},
        {"spec": {}},  # not placed yet
        {"spec": {"nodeName": "cpu-1"}},
        {"spec": {"nodeName": "cpu-0"}},
    ]
    assert pod_nodes(pods) == ["cpu-0", "cpu-1"]
    assert pod_nodes([]) == []


def test_a_node_row_names_faults_then_maintenance_then_cordons() -> None:
    from gryvia_cli.core.nodes import GpuNode
    from gryvia_cli.tui.rows import node_cells

    base = dict(
        name="gpu-3", gpu_type="H100", gpus=8, memory_gb=80, driver="", cuda="", rdma=False,
        phase="Ready", message="", source="", node_ready=True, schedulable=False, node_exists=True,
    )  # fmt: skip
    assert node_cells(GpuNode(**base), {})[-1] == ("◐ Ready,cordoned", "warn")
    held = GpuNode(**base, maintenance="XID 79 on GPU 2")
    assert node_cells(held, {})[-1] == ("◐ in maintenance: XID 79 on GPU 2", "warn")
    faulty = GpuNode(**base, maintenance="", gpu_faults=("GPU 2: XID 79",))
    assert node_cells(faulty, {})[-1] == ("✗ GPU 2: XID 79", "error")
