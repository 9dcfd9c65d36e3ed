"""The registry specs of budgets, reservations, hooks, priorities, checkpoint guards and GPU
sharing policies without a screen: their rows (order, keys), cells (text and marker, the same
figures as the CLI's `list -o wide`), detail sections (what `get` prints), and the objects
their rows and events open."""

from __future__ import annotations

from typing import Any, cast

from gryvia_cli.core.budgets import budget_wide_row
from gryvia_cli.core.hooks import hook_wide_row
from gryvia_cli.tui.kinds import EVENT_KINDS, event_ref
from gryvia_cli.tui.registry import BY_KIND, REGISTRY, Ctx, ObjectRef, ViewSpec
from gryvia_cli.tui.store import ClusterStore, Kind, list_update, make_entry
from gryvia_operator.api import GryviaBudget
from gryvia_operator.api.jobhook import GryviaJobHook
from tests.tui.builders import NOW, H, make_job
from tests.tui.fixed import fixed_cluster
from tests.tui.fixed_policies import BUDGETS, GUARDS, HOOKS, PRIORITIES, SHARING


def ctx_of(polled: list[dict[str, Any]] | None = None, **kinds: list[dict[str, Any]]) -> Ctx:
    """A Ctx at NOW over a store listing `kinds` (store kind -> raw objects) and `polled`."""
    store = ClusterStore()
    store.apply([list_update(cast("Kind", kind), items) for kind, items in kinds.items()])
    return Ctx(store, NOW, list(polled or []))


def table(spec: ViewSpec, ctx: Ctx) -> dict[str, dict[str, tuple[str, str]]]:
    """Row key -> {column key: (text, marker)}, in the spec's row order."""
    keys = [c.key for c in spec.columns]
    return {
        key: dict(zip(keys, spec.cells(item, ctx), strict=True))
        for key, item in spec.rows(ctx).items()
    }


def sections(spec: ViewSpec, raw: dict[str, Any], ctx: Ctx) -> dict[str, dict[str, str]]:
    """Section title -> {label: value} of the spec's own detail sections."""
    return {s.title: dict(s.rows) for s in spec.sections(raw, ctx)}


def test_budgets_rows_are_the_cli_wide_rows_with_used_and_state_marked() -> None:
    budgets = fixed_cluster()["budgets"] + BUDGETS
    spec, ctx = REGISTRY["budgets"], ctx_of(budgets=budgets)
    rows = table(spec, ctx)
    assert list(rows) == ["acme-monthly", "globex-monthly", "q4-launch", "research-gpu-h"]
    acme = rows["acme-monthly"]
    wide = budget_wide_row(GryviaBudget.model_validate(BUDGETS[0]))
    assert [text for text, _ in acme.values()] == [str(v) for v in wide]
    assert acme["used"] == ("93.1%", "warn") and acme["state"] == ("warning", "warn")
    assert acme["limit"][0] == "100.00 USD" and acme["enforcement"][0] == "block"
    assert acme["forecast"][0] == "146.20 USD at period end, limit reached 2026-11-21"
    assert rows["research-gpu-h"]["used"] == ("106.2%", "error")
    assert rows["research-gpu-h"]["spent"][0] == "212.40 GPU-h"
    assert rows["research-gpu-h"]["state"] == ("exceeded", "error")
    assert rows["q4-launch"]["used"] == ("-", "dim") and rows["q4-launch"]["state"][0] == "pending"
    assert rows["q4-launch"]["period"][0] == "custom 2026-12-01..2026-12-15"
    assert rows["globex-monthly"]["used"] == ("4.8%", "ok")
    assert spec.search(spec.rows(ctx)["research-gpu-h"]) == "research-gpu-h team research exceeded"
    assert spec.sort_values["used"](spec.rows(ctx)["q4-launch"]) is None  # sorts last


def test_budget_details_are_budget_get_as_of_the_console_clock() -> None:
    spec, ctx = REGISTRY["budgets"], ctx_of()
    shown = sections(spec, BUDGETS[0], ctx)["Budget"]
    assert shown["Current period"] == "2026-11-01 to 2026-11-30, 11 day(s) left"
    assert shown["Enforcement"] == "block, grace period 2h"
    assert shown["Fired"].endswith("(not delivered yet: 502)")
    period = {"startDate": "2026-12-01", "endDate": "2026-12-15"}
    later = {**BUDGETS[2], "status": {"currentPeriod": period}}
    custom = sections(spec, later, ctx)["Budget"]
    assert custom["Current period"].endswith("not started (starts in 11 day(s))")  # NOW: 11-20
    fresh = sections(spec, BUDGETS[2], ctx)["Budget"]  # no status yet
    assert fresh["Current period"].startswith("not computed yet") and fresh["State"] == "pending"
    broken = sections(spec, {"metadata": {"name": "x"}, "spec": {}}, ctx)
    assert list(broken["Budget"]) == ["Invalid"]


def test_reservations_come_from_the_store_with_the_nodes_they_hold() -> None:
    spec = REGISTRY["reservations"]
    assert spec.kinds == frozenset({"reservations"}) and spec.poll is None
    ctx = ctx_of(reservations=fixed_cluster()["reservations"])
    rows = table(spec, ctx)
    assert list(rows) == ["acme-h100-weekly", "globex-demo"]
    assert rows["acme-h100-weekly"]["nodes"] == ("gpu-h100-1", "")
    assert rows["globex-demo"]["nodes"] == ("-", "dim")
    assert "gpu-h100-1" in spec.search(spec.rows(ctx)["acme-h100-weekly"])
    raw = fixed_cluster()["reservations"][0]
    shown = sections(spec, raw, ctx)["Reservation"]
    assert shown["Nodes held"] == "gpu-h100-1" and shown["GPUs held"] == "8"
    assert make_entry("reservations", {"metadata": {"name": "bad"}, "spec": {}}) is None


def test_hook_rows_follow_hook_list_wide_with_ready_marked_by_reason() -> None:
    spec, ctx = REGISTRY["hooks"], ctx_of([*HOOKS, {"metadata": {"name": "odd"}, "spec": {}}])
    rows = table(spec, ctx)
    assert list(rows) == [
        "tenant-acme/chat-failures",
        "tenant-acme/notify-done",
        "tenant-globex/audit",
        "tenant-globex/fresh",
    ]  # the invalid one is skipped (describe shows anything)
    done = rows["tenant-acme/notify-done"]
    wide = hook_wide_row(GryviaJobHook.model_validate(HOOKS[0]), NOW)
    assert [text for text, _ in done.values()] == ["tenant-acme", *map(str, wide)]
    assert done["ready"] == ("Valid", "ok") and done["failures"] == ("1", "warn")
    assert done["last_delivery"][0] == "12m ago" and done["last_error"][1] == "warn"
    assert rows["tenant-acme/chat-failures"]["ready"] == ("Suspended", "disabled")
    assert rows["tenant-globex/audit"]["ready"] == ("InvalidSpec", "error")
    assert rows["tenant-globex/fresh"]["ready"] == ("Pending", "info")
    assert rows["tenant-globex/fresh"]["last_error"] == ("-", "dim")
    item = spec.rows(ctx)["tenant-acme/notify-done"]
    assert spec.ref(item) == ObjectRef("jobhooks", "tenant-acme", "notify-done")
    assert spec.sort_values["created"](item) == -(NOW - 24 * H).timestamp()  # AGE: youngest first
    shown = sections(spec, HOOKS[0], ctx)["Hook"]
    assert shown["Headers"] == "Authorization: <hidden, 16 characters>; X-Team: ml"
    assert shown["Retry"].startswith("5 attempts, back-off 30 s")
    assert shown["Ready"] == "Valid: deliveries go to hooks.acme.example"
    assert (shown["Deliveries"], shown["Failures"]) == ("42", "1")
    assert shown["Last delivery"] == "2026-11-20 11:48:00 UTC (12m ago)"


def test_priorities_highest_first_with_their_priority_class() -> None:
    spec = REGISTRY["priorities"]
    jobs = [
        make_job("a").ns("ml").spec(priorityClassName="urgent").obj(),
        make_job("b").ns("ml").spec(priorityClassName="urgent").obj(),
        make_job("c").ns("cv").obj(),
    ]
    ctx = ctx_of(PRIORITIES, jobs=jobs)
    rows = table(spec, ctx)
    assert list(rows) == ["urgent", "gryvia-high", "gryvia-normal", "clash", "gryvia-low", "batch"]
    assert spec.columns[0].key == "value"
    assert rows["gryvia-high"] == {
        "value": ("10000", ""),
        "name": ("gryvia-high", ""),
        "preemption": ("PreemptLowerPriority", ""),
        "ready": ("yes", "ok"),
        "range": ("70-100", ""),
        "priority_class": ("gryvia-high", ""),
        "description": ("spec.priority 70..100: urgent jobs", ""),
    }
    assert rows["clash"]["ready"] == ("no (Conflict)", "error")
    assert rows["batch"]["ready"] == ("pending", "info")
    assert rows["batch"]["preemption"][0] == "Never"
    urgent = sections(spec, PRIORITIES[3], ctx)["Priority"]
    assert urgent["Jobs naming it"] == "ml (2)" and urgent["PriorityClass"] == "urgent"
    assert spec.sort_values["value"](spec.rows(ctx)["urgent"]) == 50000
    assert spec.descending  # highest first is VALUE↓


def test_checkpoint_guard_rows_and_their_committed_steps() -> None:
    spec, ctx = REGISTRY["checkpoints"], ctx_of(GUARDS)
    rows = table(spec, ctx)
    assert list(rows) == ["tenant-acme/guarded", "tenant-globex/all-jobs"]
    guarded = rows["tenant-acme/guarded"]
    assert [text for text, _ in guarded.values()] == [
        "tenant-acme",
        "guarded",
        "checkpoint=on",
        "300s",
        "1",
        "llama-pretrain @ step 1500",
        "/data/checkpoints",
        "yes",
    ]
    everything = rows["tenant-globex/all-jobs"]
    assert everything["selector"][0] == "(every job)" and everything["whole_job"][0] == "no"
    assert everything["last_restore"] == ("-", "dim")
    assert "llama-pretrain" in spec.search(spec.rows(ctx)["tenant-acme/guarded"])
    shown = sections(spec, GUARDS[0], ctx)["Checkpoint guard"]
    assert shown["Job llama-pretrain"] == "committed 1200, 1500, 1800; 1 restore(s)"
    assert shown["Last restore"].startswith("llama-pretrain-1 from step 1500 (PodEvicted")


def test_gpu_sharing_rows_name_the_nodes_a_policy_holds() -> None:
    spec, ctx = REGISTRY["gpusharing"], ctx_of(SHARING)
    rows = table(spec, ctx)
    assert list(rows) == ["a100-mig", "h100-time-slicing", "l40-shared"]
    ts = rows["h100-time-slicing"]
    assert ts["sharing"][0] == "4 replicas" and ts["nodes"] == ("gpu-h100-0", "")
    assert ts["selector"][0] == "gpu-sharing=on, gryvia.io/gpu=H100"
    assert ts["config"][0] == "gryvia-ts-4" and ts["ready"] == ("Applied", "ok")
    assert rows["a100-mig"]["sharing"][0] == "mixed all-1g.10gb"
    assert rows["a100-mig"]["ready"] == ("ConfigMapFailed", "error")
    assert rows["l40-shared"]["selector"][0] == "every GPU node"
    assert rows["l40-shared"]["ready"] == ("Pending", "info")
    assert rows["l40-shared"]["nodes"] == ("-", "dim")
    shown = sections(spec, SHARING[0], ctx)["GPU sharing"]
    assert shown["Replicas"] == "4 nvidia.com/gpu units per physical GPU"
    assert shown["Nodes"] == "1: gpu-h100-0"
    mig = sections(spec, SHARING[1], ctx)["GPU sharing"]
    assert mig["MIG layout"] == "all-1g.10gb" and mig["Ready"].startswith("ConfigMapFailed: ")


def test_events_of_the_new_kinds_open_their_describe_view() -> None:
    for kind, objects in [
        ("GryviaJobHook", "jobhooks"),
        ("GryviaPriority", "priorities"),
        ("GryviaCheckpointGuard", "checkpointguards"),
        ("GryviaGPUSharingPolicy", "gpusharingpolicies"),
        ("GryviaBudget", "budgets"),
        ("GryviaReservation", "reservations"),
    ]:
        assert EVENT_KINDS[kind] == objects and objects in BY_KIND
        event = {"involvedObject": {"kind": kind, "name": "x", "namespace": "ns"}}
        namespaced = objects in ("jobhooks", "checkpointguards")
        assert event_ref(event) == ObjectRef(objects, "ns" if namespaced else None, "x")
    assert BY_KIND["jobhooks"] is REGISTRY["hooks"]
    assert BY_KIND["gpusharingpolicies"] is REGISTRY["gpusharing"]


def test_every_kind_has_a_singular_title() -> None:
    from typing import get_args

    from gryvia_cli.tui.registry import SINGULAR, ObjectRef
    from gryvia_cli.tui.source import ObjectKind

    assert set(SINGULAR) == set(get_args(ObjectKind))
    assert ObjectRef("reservations", None, "rsv-l40").label == "reservation rsv-l40"
    assert ObjectRef("pods", "tenant-acme", "llama-0").label == "pod tenant-acme/llama-0"
