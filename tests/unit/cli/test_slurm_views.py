"""`gryvia squeue|sacct|sinfo` on fixed data: Slurm's default layouts, states, reasons."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from typer.testing import CliRunner

from gryvia_cli.core.jobs import summarize_job
from gryvia_cli.core.nodes import gpu_nodes
from gryvia_cli.core.sinfoview import SINFO_FORMAT, SINFO_HEADERS, sinfo_rows
from gryvia_cli.core.slurmfmt import (
    compress_hostlist,
    parse_percent_format,
    parse_sacct_format,
    render_percent,
    render_sacct,
    slurm_duration,
    slurm_elapsed,
)
from gryvia_cli.core.slurmviews import (
    SACCT_FORMAT,
    SACCT_WIDTHS,
    SQUEUE_FORMAT,
    SQUEUE_HEADERS,
    SQUEUE_START_FORMAT,
    SlurmJob,
    exit_code_of,
    reason_code,
    sacct_row,
    slurm_job,
    squeue_items,
    squeue_row,
    squeue_rows,
)
from gryvia_cli.main import app
from tests.builders import make_job, make_node

NOW = datetime(2026, 12, 1, 12, 0, 0, tzinfo=UTC)


def _item(builder: object, user: str = "nlp", reason: str = "", code: str = "") -> SlurmJob:
    obj = builder.obj()  # type: ignore[attr-defined]
    return slurm_job(obj, summarize_job(obj), user, reason, code)


def _jobs() -> list[SlurmJob]:
    running = (
        make_job("llama-ddp", "tenant-nlp").gpus(8).gpu_type("H100").timeout("2h")
        .distributed(nodes=2)
        .annotate("gryvia.io/sbatch-job-name", "llama")
        .status(phase="Running", startTime="2026-12-01T11:30:05Z",
                nodesAllocated=["gpu-node-01", "gpu-node-02"])
    )  # fmt: skip
    quota = make_job("sweep-b", "tenant-vision").gpus(4).gpu_type("H100").phase("Queued")
    throttled = (
        make_job("sweep-3", "tenant-vision").gpus(1).suspend()
        .annotate("gryvia.io/array-max-parallel", "2").phase("Pending")
    )  # fmt: skip
    done = make_job("eval", "research").gpus(1).phase("Succeeded")
    return [
        _item(running, "nlp"),
        _item(quota, "vision", "waiting for quota: 8 of 8 H100 in use"),
        _item(throttled, "vision", "suspended (spec.suspend is true)"),
        _item(make_job("v100-eval", "research").gpus(1).gpu_type("V100").phase("Pending"),
              "research", 'no node has GPU type "V100" (this cluster has: H100)'),
        _item(done, "research"),
    ]  # fmt: skip


def test_squeue_default_layout_matches_slurm() -> None:
    parts, unknown = parse_percent_format(SQUEUE_FORMAT, SQUEUE_HEADERS)
    assert unknown == []
    rows = [squeue_row(item, NOW) for item in squeue_items(_jobs())]
    lines = render_percent(parts, rows)
    assert lines == [
        "             JOBID PARTITION     NAME     USER ST       TIME  NODES NODELIST(REASON)",
        "         llama-ddp      H100    llama      nlp  R      29:55      2 gpu-node-[01-02]",
        "           sweep-3       any  sweep-3   vision PD       0:00      1 (JobArrayTaskLimit)",
        "           sweep-b      H100  sweep-b   vision PD       0:00      1 (QOSGrpGRES)",
        "         v100-eval      V100 v100-eva research PD       0:00      1 (ReqNodeNotAvail)",
    ]


def test_squeue_filters_and_field_letters() -> None:
    items = _jobs()
    assert [i.job.name for i in squeue_items(items, users=["vision"])] == ["sweep-3", "sweep-b"]
    assert [i.job.name for i in squeue_items(items, accounts=["vision"])] == ["sweep-3", "sweep-b"]
    assert squeue_items(items, accounts=["nobody,elsewhere"]) == []
    assert [i.job.name for i in squeue_items(items, states=["CD"])] == ["eval"]
    assert len(squeue_items(items, states=["all"])) == 5
    assert [i.job.name for i in squeue_items(items, partitions=["v100"])] == ["v100-eval"]
    parts, _ = parse_percent_format("%i|%T|%l|%L|%b|%r", SQUEUE_HEADERS)
    (line,) = render_percent(parts, [squeue_row(items[0], NOW)], header=False)
    assert line == "llama-ddp|RUNNING|2:00:00|1:30:05|gres/gpu:8|None"
    assert parse_percent_format("%.5i %Z", SQUEUE_HEADERS)[1] == ["Z"]


def test_squeue_start_shows_na_until_there_is_an_estimate() -> None:
    parts, _ = parse_percent_format(SQUEUE_START_FORMAT, SQUEUE_HEADERS)
    pending = squeue_items(_jobs(), pending_only=True)
    lines = render_percent(parts, [squeue_row(i, NOW) for i in pending])
    assert lines[0].split() == [
        "JOBID", "PARTITION", "NAME", "USER", "ST", "START_TIME", "NODES", "SCHEDNODES",
        "NODELIST(REASON)",
    ]  # fmt: skip
    assert all(" N/A " in line and "(null)" in line for line in lines[1:])
    assert len(lines) == 4


@pytest.mark.parametrize(
    ("reason", "suspended", "code"),
    [
        ("queued: waiting for quota", False, "QOSGrpGRES"),
        ("quota: Rejected: over the limit", False, "QOSGrpGRES"),
        ("waiting for GPUs: needs 1 x 8 H100, 0 free now", False, "Resources"),
        ("pod x-0: 0/3 nodes are available", False, "Resources"),
        ("not picked up by the operator yet", False, "None"),
        ("suspended (spec.suspend is true)", True, "JobHeldUser"),
    ],
)
def test_reason_codes_come_from_gryvias_reasons(reason: str, suspended: bool, code: str) -> None:
    builder = make_job("j").gpus(1).phase("Pending").suspend(suspended)
    assert reason_code(_item(builder, reason=reason)) == code


def test_sacct_default_layout_elapsed_exit_code_and_gpu_hours() -> None:
    done = (
        make_job("train", "tenant-nlp").gpus(4).distributed(nodes=2)
        .set(resources={"requests": {"cpu": "16"}})
        .status(phase="Succeeded", startTime="2026-12-01T09:00:00Z",
                completionTime="2026-12-01T10:30:00Z")
    )  # fmt: skip
    failed = (
        make_job("a-very-long-job-name", "tenant-nlp").gpus(1)
        .status(phase="Failed", startTime="2026-12-01T11:00:00Z",
                completionTime="2026-12-01T11:00:42Z")
    )  # fmt: skip
    pod = {
        "metadata": {"annotations": {"batch.kubernetes.io/job-completion-index": "0"}},
        "status": {"containerStatuses": [{"state": {"terminated": {"exitCode": 3}}}]},
    }
    items = [_item(done), _item(failed, code=exit_code_of([pod]))]
    fields, unknown = parse_sacct_format(SACCT_FORMAT, SACCT_WIDTHS)
    assert unknown == []
    lines = render_sacct(fields, [sacct_row(i, NOW) for i in items])
    assert lines == [
        "       JobID    JobName  Partition    Account  AllocCPUS      State ExitCode    Elapsed"
        "   GPUHours",
        "------------ ---------- ---------- ---------- ---------- ---------- -------- ----------"
        " ----------",
        "       train      train        any        nlp         32  COMPLETED      0:0   01:30:00"
        "      12.00",
        "a-very-long+ a-very-lo+        any        nlp          1     FAILED      3:0   00:00:42"
        "       0.01",
    ]
    assert exit_code_of([{"status": {"containerStatuses": [
        {"state": {"terminated": {"exitCode": 137}}}]}}]) == "0:9"  # fmt: skip


def test_sinfo_groups_gpu_types_and_node_states() -> None:
    nodes = [
        make_node("gpu-node-01").gpus(8).gpu_type("H100").obj(),
        make_node("gpu-node-02").gpus(8).gpu_type("H100").obj(),
        make_node("gpu-node-03").gpus(8).gpu_type("H100").cordoned().obj(),
        make_node("a100-1").gpus(4).gpu_type("A100-80G").not_ready().obj(),
    ]
    supply = gpu_nodes([], nodes)
    parts, _ = parse_percent_format(SINFO_FORMAT, SINFO_HEADERS)
    rows = sinfo_rows(supply, {"gpu-node-01": 8, "gpu-node-02": 2})
    assert render_percent(parts, rows) == [
        "PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST",
        "A100-80G  up      infinite      1   down a100-1",
        "H100      up      infinite      1  alloc gpu-node-01",
        "H100      up      infinite      1  drain gpu-node-03",
        "H100      up      infinite      1    mix gpu-node-02",
    ]
    assert [r["P"] for r in sinfo_rows(supply, {}, ["a100-80g"])] == ["A100-80G"]


def test_slurm_time_and_host_list_forms() -> None:
    assert [slurm_duration(s) for s in (0, 67, 3723, 183845)] == [
        "0:00", "1:07", "1:02:03", "2-03:04:05",
    ]  # fmt: skip
    assert slurm_elapsed(90061) == "1-01:01:01"
    assert compress_hostlist(["n03", "n01", "n02", "n07", "cpu", "x1"]) == "cpu,n[01-03,07],x1"


def test_unknown_format_letters_are_usage_errors() -> None:
    result = CliRunner().invoke(app, ["squeue", "-o", "%.18i %Z"])
    assert result.exit_code == 2 and "unknown field letter(s) Z" in result.output
    result = CliRunner().invoke(app, ["sacct", "--format", "JobID,Bogus"])
    assert result.exit_code == 2 and "Bogus" in result.output


def test_a_throttled_arrays_pending_part_is_one_row() -> None:
    def element(index: int, phase: str, suspended: bool) -> SlurmJob:
        builder = (
            make_job(f"sweep-{index}", "tenant-vision").gpus(1).phase(phase).suspend(suspended)
            .annotate("gryvia.io/array-max-parallel", "2")
        )  # fmt: skip
        obj = builder.obj()
        obj["metadata"]["labels"] = {
            "gryvia.io/array-name": "sweep",
            "gryvia.io/array-index": str(index),
        }
        return slurm_job(obj, summarize_job(obj), "vision")

    items = [element(0, "Running", False), element(1, "Running", False)]
    items += [element(i, "Pending", True) for i in (2, 3, 4, 5, 7)]
    rows = squeue_rows(squeue_items(items), NOW)
    assert [(r["i"], r["t"], r["R"]) for r in rows] == [
        ("sweep_0", "R", "(None)"),
        ("sweep_1", "R", "(None)"),
        ("sweep_[2-5,7%2]", "PD", "(JobArrayTaskLimit)"),
    ]


def test_squeue_names_the_nodes_of_a_job_kueue_placed() -> None:
    from gryvia_cli.cli.session import Session
    from gryvia_cli.core.slurmviews import pod_nodes
    from tests.builders import make_pod
    from tests.unit.cli.fakes import FakeAccess

    # Kueue places its jobs itself: status.nodesAllocated stays empty (behaviour.md section 4)
    job = make_job("kq", "ml").gpus(8).phase("Running").obj()
    job["status"]["startTime"] = "2026-12-01T20:00:00Z"
    pods = [
        make_pod("kq-0", "ml").job("kq").on("gpu-h100-1").obj(),
        make_pod("kq-1", "ml").job("kq").on("gpu-h100-0").obj(),
        make_pod("kq-old", "ml").job("kq").on("gpu-h100-9").phase("Failed").obj(),
    ]
    assert pod_nodes(pods) == ("gpu-h100-0", "gpu-h100-1")
    state = Session(access_factory=lambda _s: FakeAccess(job, *pods), clock=lambda: NOW)
    shown = CliRunner().invoke(app, ["squeue", "-o", "%i %t %R"], obj=state)
    assert shown.exit_code == 0, shown.output
    assert shown.stdout.splitlines()[1].split() == ["kq", "R", "gpu-h100-[0-1]"]


def test_sacct_gpu_efficiency_fields_come_from_the_operators_samples() -> None:
    sampled = (
        make_job("train", "tenant-nlp").gpus(4)
        .status(phase="Succeeded", startTime="2026-12-01T09:00:00Z",
                completionTime="2026-12-01T11:00:00Z",
                metrics={"samples": 240, "meanActivityPercent": 62.5})
    )  # fmt: skip
    never = (
        make_job("quiet", "tenant-nlp")
        .gpus(1)
        .status(
            phase="Succeeded",
            startTime="2026-12-01T09:00:00Z",
            completionTime="2026-12-01T09:30:00Z",
        )
    )
    fields, unknown = parse_sacct_format("JobID,GPUHours,GPUEff,GPUActHrs", SACCT_WIDTHS)
    assert unknown == []
    lines = render_sacct(fields, [sacct_row(_item(b), NOW) for b in (sampled, never)])
    assert lines[2].split() == ["train", "8.00", "62.5%", "5.00"]
    assert lines[3].split() == ["quiet", "0.50"]
