"""The sandbox's simulated GPUs: which container holds which GPU, and how busy it reads."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gryvia_cli.sandbox.gpusim import (
    GpuNode,
    Holder,
    activity_percent,
    assign,
    exporter_manifests,
    group_processes,
    holders,
    marker_record,
    node_record,
    readings,
    running,
    set_fault,
    write_nodes,
)
from gryvia_cli.sandbox.nodespec import build_nodes, parse_node_spec
from gryvia_operator.api.dcgm import EXPORTER_SELECTOR, FIELD_XID_ERRORS, activity
from tests.support.wait import wait_for


def _holder(pod: str, gpus: int, pgid: int) -> Holder:
    return Holder("ns", pod, "main", gpus, pgid, started=float(pgid))


def test_gpus_go_first_fit_to_the_oldest_containers_and_a_misfit_gets_none() -> None:
    held = [_holder("a", 2, 10), _holder("b", 8, 11), _holder("c", 1, 12)]
    taken = assign(held, 4)
    assert {i: h.pod for i, h in taken.items()} == {0: "a", 1: "a", 2: "c"}


def test_markers_of_this_node_that_ask_for_gpus_are_its_holders_oldest_first(
    tmp_path: Path,
) -> None:
    for pid, node, gpus in ((300, "n1", 1), (200, "n1", 2), (100, "n2", 4), (400, "n1", 0)):
        (tmp_path / str(pid)).write_text(marker_record("ns", f"p{pid}", "main", node, gpus))
    os.utime(tmp_path / "300", (1000, 1000))
    os.utime(tmp_path / "200", (2000, 2000))
    (tmp_path / "500").write_text("")  # a marker of an older runner: no record
    found = holders(tmp_path, "n1")
    assert [(h.pod, h.gpus, h.pgid) for h in found] == [("p300", 1, 300), ("p200", 2, 200)]
    assert holders(tmp_path / "absent", "n1") == []


def test_the_node_files_come_from_the_gfd_labels_of_gpu_nodes_only(tmp_path: Path) -> None:
    nodes = build_nodes(parse_node_spec("1xL40:4,1xcpu"))
    write_nodes(tmp_path, nodes)
    (written,) = (tmp_path / "gpu-nodes").iterdir()
    record = node_record(nodes[0])
    assert record is not None and written.name == f"{record.name}.json"
    assert (record.count, record.product) == (4, "NVIDIA-L40")
    assert node_record(nodes[1]) is None


def test_a_busy_loop_is_running_and_a_sleep_is_not() -> None:
    loop = "print('looping', flush=True)\nwhile True: pass"
    busy = subprocess.Popen(
        [sys.executable, "-c", loop], stdout=subprocess.PIPE, text=True, start_new_session=True
    )
    idle = subprocess.Popen(["sleep", "30"], start_new_session=True)
    try:
        # past the interpreter's start-up (reading files: not runnable), on a loaded machine too
        assert busy.stdout is not None and busy.stdout.readline() == "looping\n"
        # and `sleep` past its exec (briefly runnable while it loads)
        wait_for(lambda: not running([idle.pid]), timeout=10, interval=0.02, what="sleep")
        groups = group_processes({busy.pid, idle.pid})
        assert set(groups) == {busy.pid, idle.pid}
        assert groups[busy.pid].memory_mib > 1
        looks = [(running(groups[busy.pid].pids), running(groups[idle.pid].pids))]
        for _ in range(7):
            time.sleep(0.02)
            looks.append((running(groups[busy.pid].pids), running(groups[idle.pid].pids)))
        assert sum(b for b, _ in looks) >= 6 and not any(i for _, i in looks)
    finally:
        busy.kill()
        idle.kill()
        busy.wait()
        idle.wait()
    assert not running([busy.pid])  # gone
    assert activity_percent(3, 4) == 75.0 and activity_percent(0, 0) == 0.0


def test_readings_name_the_holder_and_serve_its_activity_memory_power_and_faults() -> None:
    node = GpuNode("gpu-l40-0", 2, "NVIDIA-L40", 46068)
    holder = _holder("train-0", 1, 42)
    first, second = readings(node, {0: holder}, {42: 80.0}, {42: 99999.0}, {1: 79})
    (unmeasured,) = readings(GpuNode("n", 1, "L40", 100), {0: holder}, {}, {}, {})
    assert activity(unmeasured) is None and unmeasured.pod == "train-0"
    assert (first.pod, first.namespace, first.container) == ("train-0", "ns", "main")
    assert activity(first) == (80.0, "DCGM_FI_PROF_GR_ENGINE_ACTIVE")
    assert first.values["DCGM_FI_DEV_FB_USED"] == 46068  # at most the GPU's memory
    assert first.values["DCGM_FI_DEV_POWER_USAGE"] == 572.0
    assert second.pod == "" and activity(second) == (0.0, "DCGM_FI_PROF_GR_ENGINE_ACTIVE")
    assert second.values[FIELD_XID_ERRORS] == 79 and first.values[FIELD_XID_ERRORS] == 0


def test_the_daemonset_runs_on_gpu_nodes_under_the_gpu_operators_label(tmp_path: Path) -> None:
    namespace, daemonset = exporter_manifests(tmp_path, "/usr/bin/python3")
    pod = daemonset["spec"]["template"]
    key, value = EXPORTER_SELECTOR.split("=")
    assert pod["metadata"]["labels"] == {key: value} == daemonset["spec"]["selector"]["matchLabels"]
    assert pod["spec"]["nodeSelector"] == {"nvidia.com/gpu.present": "true"}
    (container,) = pod["spec"]["containers"]
    assert container["command"][:3] == ["/usr/bin/python3", "-m", "gryvia_cli.sandbox.gpusim"]
    assert str(tmp_path) in container["command"]
    assert container["ports"] == [{"name": "metrics", "containerPort": 9400}]
    assert daemonset["metadata"]["namespace"] == namespace["metadata"]["name"]


def test_a_fault_is_set_and_cleared_per_gpu_and_a_bad_gpu_is_named(tmp_path: Path) -> None:
    write_nodes(tmp_path, build_nodes(parse_node_spec("1xL40:4")))
    node = "gpu-l40-0"
    set_fault(tmp_path, node, 2, 79)
    set_fault(tmp_path, node, 3, 48)
    set_fault(tmp_path, node, 3, 0)
    assert json.loads((tmp_path / "gpu-faults" / f"{node}.json").read_text()) == {"2": 79}
    with pytest.raises(ValueError, match=r"--gpu 4: node gpu-l40-0 has GPUs 0..3"):
        set_fault(tmp_path, node, 4, 79)
    with pytest.raises(ValueError, match="not a GPU node"):
        set_fault(tmp_path, "cpu-0", 0, 79)
