"""The sandbox's Prometheus configuration and discovery file (pure builders)."""

from __future__ import annotations

from pathlib import Path

from gryvia_cli.sandbox.prometheus import scrape_config, target_groups


def _pod(name: str, node: str, phase: str = "Running", ip: str | None = "10.244.0.9") -> dict:
    port = {"name": "metrics", "containerPort": 9500}
    return {
        "metadata": {"name": name, "namespace": "gpu-operator"},
        "spec": {"nodeName": node, "containers": [{"name": "x", "ports": [port]}]},
        "status": {"phase": phase, "podIP": ip},
    }


def test_running_exporters_with_an_ip_are_listed_by_node() -> None:
    pods = [
        _pod("exp-b", "node-b"),
        _pod("exp-a", "node-a", ip="10.244.0.3"),
        _pod("exp-c", "node-c", phase="Pending"),
        _pod("exp-d", "node-d", ip=None),
    ]
    assert target_groups(pods) == [
        {"targets": ["10.244.0.3:9500"], "labels": {"node": "node-a", "exporter_pod": "exp-a"}},
        {"targets": ["10.244.0.9:9500"], "labels": {"node": "node-b", "exporter_pod": "exp-b"}},
    ]


def test_the_scrape_keeps_the_exporters_pod_labels() -> None:
    (job,) = scrape_config(Path("/x/targets.json"))["scrape_configs"]
    assert job["honor_labels"] is True
    assert job["file_sd_configs"] == [{"files": ["/x/targets.json"], "refresh_interval": "5s"}]
