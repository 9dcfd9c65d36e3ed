"""Queue order, positions and wait reasons; the submit plan (pure)."""

from __future__ import annotations

from gryvia_cli.core.jobs import summarize_job
from gryvia_cli.core.nodes import gpu_nodes
from gryvia_cli.core.plan import plan_job
from gryvia_cli.core.queue import build_queue, queue_row, scheduling_events, wait_reason
from tests.unit.cli.helpers import NOW, event, h100, make_job, make_node, make_pod, stamp

NODES = gpu_nodes([], [h100("h0"), h100("h1"), make_node("l0").gpus(4).product("NVIDIA-L40").obj()])


def _job(builder, seconds_ago: float = 60):  # type: ignore[no-untyped-def]
    return summarize_job(stamp(builder.obj(), seconds_ago))


def test_queue_is_oldest_first_with_positions_per_gpu_type() -> None:
    jobs = [
        _job(make_job("h-new").gpus(8).gpu_type("H100"), 10),
        _job(make_job("h-old").gpus(8).gpu_type("H100"), 300),
        _job(make_job("l").gpus(4).gpu_type("L40"), 100),
        _job(make_job("run").gpus(8).gpu_type("H100").phase("Running"), 500),
        _job(make_job("done").gpus(8).gpu_type("H100").phase("Succeeded"), 900),
        _job(make_job("sched").gpus(1).gpu_type("h100").phase("Scheduling"), 50),
    ]
    entries = build_queue(jobs, NODES, {}, {}, NOW)
    assert [(e.job.name, e.position) for e in entries] == [
        ("h-old", 1),
        ("l", 1),
        ("sched", 2),
        ("h-new", 3),
    ]
    assert entries[0].waited == 300
    row = queue_row(entries[0], all_namespaces=True)
    assert row[:5] == [1, "ml", "h-old", "-", "H100"] and row[7] == "5m"
    assert entries[0].as_dict()["waitingSeconds"] == 300


def test_reason_for_an_absent_gpu_type_names_the_types_present() -> None:
    job = _job(make_job("b").gpus(8).gpu_type("B200"))
    reason = wait_reason(job, NODES, {}, None)
    assert reason == 'no node has GPU type "B200" (this cluster has: H100, L40)'


def test_reasons_in_order_of_precedence() -> None:
    suspended = _job(make_job("s").gpus(8).gpu_type("B200").suspend())
    assert wait_reason(suspended, NODES, {}, None).startswith("suspended")
    queued = _job(
        make_job("q").gpus(8).gpu_type("H100").phase("Queued").status(message="quota hold")
    )
    assert wait_reason(queued, NODES, {}, None) == "queued: quota hold"
    big = _job(make_job("big").gpus(16).gpu_type("H100"))
    assert "largest H100 node has 8" in wait_reason(big, NODES, {}, None)
    failed = _job(
        make_job("f")
        .gpus(8)
        .gpu_type("H100")
        .condition("Scheduled", "False", "SchedulingFailed", "no nodes meet")
    )
    assert wait_reason(failed, NODES, {}, "pod f-0: 0/7 nodes") == "SchedulingFailed: no nodes meet"
    plain = _job(make_job("p").gpus(8).gpu_type("H100").status(message="x"))
    assert (
        wait_reason(plain, NODES, {}, "pod p-0: 0/7 nodes are available")
        == "pod p-0: 0/7 nodes are available"
    )
    busy = _job(make_job("busy").gpus(8).gpu_type("H100").status(message="x"))
    reason = wait_reason(busy, NODES, {"h0": 8, "h1": 4}, None)
    assert reason.startswith("waiting for GPUs: needs 1 x 8 H100, 4 free now")
    fresh = _job(make_job("new").gpus(1).gpu_type("H100"))
    assert "not picked up by the operator" in wait_reason(fresh, NODES, {}, None)


def test_scheduling_events_map_to_jobs_newest_wins() -> None:
    pods = [make_pod("j-0-abc").job("j").obj()]
    events = [
        event("j-0-abc", "old message", seconds_ago=50),
        event("j-0-abc", "0/7 nodes are available", seconds_ago=5),
        event("other", "not ours"),
        event("j-0-abc", "pulled", reason="Pulled"),
    ]
    assert scheduling_events(events, pods) == {("ml", "j"): "pod j-0-abc: 0/7 nodes are available"}


def test_plan_lists_nodes_with_room_and_warns_when_none_fit() -> None:
    job = _job(make_job("a").gpus(4).gpu_type("H100"))
    plan = plan_job(job, NODES, {"h0": 6})
    assert plan.fits_now and plan.candidates == (("h1", 8),)
    assert "nodes that could take a pod now: h1 (8 free)" in plan.lines()[1]
    busy = plan_job(job, NODES, {"h0": 6, "h1": 6})
    assert not busy.fits_now and "no H100 node can take a pod of 4 GPUs now" in (busy.warning or "")
    partial = plan_job(_job(make_job("d").gpus(8).gpu_type("H100").distributed(3)), NODES, {})
    assert "only 2 of 3 pods fit" in (partial.warning or "")
    absent = plan_job(_job(make_job("b").gpus(8).gpu_type("B200")), NODES, {})
    assert absent.warning and 'no node has GPU type "B200"' in absent.warning
    cpu = plan_job(_job(make_job("c").gpus(0)), NODES, {})
    assert cpu.fits_now and "CPU-only" in cpu.lines()[1]
    huge = plan_job(_job(make_job("h").gpus(16).gpu_type("H100")), NODES, {})
    assert "largest H100 node has 8" in (huge.warning or "")
