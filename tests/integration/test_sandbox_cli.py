"""`gryvia sandbox up/status/list/down` as a user runs them: a second, separate sandbox."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import uuid
from pathlib import Path
from urllib.parse import urlparse

import pytest
import yaml

from tests.support.cli import run_gryvia

pytestmark = [pytest.mark.integration, pytest.mark.sandbox]


def _gryvia(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return run_gryvia(*args, env=env)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _listening(pid: int) -> set[tuple[str, int]]:
    """(IPv4 address, port) of every TCP socket process `pid` listens on (/proc)."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        target = str(fd.readlink())
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    found = set()
    for table in ("tcp", "tcp6"):
        for line in Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "0A" and fields[9] in inodes:  # 0A: LISTEN
                addr, port = fields[1].split(":")
                ip = ".".join(str(int(addr[i : i + 2], 16)) for i in (6, 4, 2, 0))
                found.add((ip if table == "tcp" else addr, int(port, 16)))
    return found


def _has_link(name: str) -> bool:
    links = json.loads(subprocess.run(["ip", "-j", "link"], capture_output=True, check=True).stdout)
    return any(link["ifname"] == name for link in links)


def test_up_status_down_leaves_nothing_behind(tmp_path: Path) -> None:
    name = f"cli-{uuid.uuid4().hex[:6]}"
    kubeconfig = tmp_path / "config"
    config_home = tmp_path / "gryvia-config"
    env = os.environ | {
        "GRYVIA_SANDBOX_HOME": str(tmp_path / "home"),
        "GRYVIA_CONFIG_HOME": str(config_home),
        "NO_COLOR": "1",
    }
    up = _gryvia(
        env,
        "sandbox",
        "up",
        "--name",
        name,
        "--nodes",
        "1xH100:8,1xcpu",
        "--kubeconfig",
        str(kubeconfig),
        "--oidc",
    )
    dex_pid_file = tmp_path / "home" / "oidc" / name / "dex.pid"
    try:
        assert up.returncode == 0, up.stderr
        assert f"context gryvia-{name}" in up.stderr
        assert "OIDC issuer https://127.0.0.1:" in up.stderr and "gryvia login" in up.stderr
        dex = int(dex_pid_file.read_text())
        assert _alive(dex)
        assert {ip for ip, _ in _listening(dex)} == {"127.0.0.1"}, _listening(dex)
        bridge = up.stderr.split("pod network: bridge ", 1)[1].split(",", 1)[0]
        assert _has_link(bridge)
        config = yaml.safe_load(kubeconfig.read_text())
        assert config["current-context"] == f"gryvia-{name}"
        server = config["clusters"][0]["cluster"]["server"]

        status = _gryvia(env, "sandbox", "status", "--name", name, "-o", "json")
        assert status.returncode == 0, status.stderr
        row = json.loads(status.stdout)
        assert row["state"] == "Running"
        assert set(row["components"]) >= {
            "etcd",
            "kube-apiserver",
            "kube-scheduler",
            "kube-controller-manager",
            "kwok-controller",
            "gryvia-pod-runner",
            "gryvia-operator",
            "prometheus",
        }
        listed = json.loads(_gryvia(env, "sandbox", "list", "-o", "json").stdout)
        assert [r["name"] for r in listed["items"]] == [name]
        pids = [
            int(p.read_text())
            for p in (tmp_path / "home" / "clusters" / name / "pids").glob("*.pid")
        ]
        assert len(pids) == 8 and all(_alive(p) for p in pids)
        # Gryvia's CRDs are installed (without them: "GryviaAIJob is not available")
        jobs = _gryvia(env | {"KUBECONFIG": str(kubeconfig)}, "list", "jobs", "-A", "-o", "json")
        assert jobs.returncode == 0 and json.loads(jobs.stdout)["items"] == [], jobs.stderr
        saved = yaml.safe_load((config_home / "config.yaml").read_text())["prometheus_urls"]
        assert saved[f"gryvia-{name}"].startswith("http://127.0.0.1:"), saved

        again = _gryvia(env, "sandbox", "up", "--name", name, "--kubeconfig", str(kubeconfig))
        assert again.returncode == 1
        assert "already running" in again.stderr and "Traceback" not in again.stderr
    finally:
        down = _gryvia(
            env, "sandbox", "down", "--name", name, "--yes", "--kubeconfig", str(kubeconfig)
        )
    assert down.returncode == 0, down.stderr
    assert not any(_alive(p) for p in pids)
    assert not _alive(dex) and not dex_pid_file.parent.exists()
    port = urlparse(server).port
    with socket.socket() as sock:
        assert sock.connect_ex(("127.0.0.1", port)) != 0, "API server port still open"
    assert not (tmp_path / "home" / "clusters" / name).exists()
    assert not _has_link(bridge)
    assert yaml.safe_load(kubeconfig.read_text())["contexts"] == []
    assert yaml.safe_load((config_home / "config.yaml").read_text())["prometheus_urls"] == {}


def test_bad_node_spec_is_one_clear_line(tmp_path: Path) -> None:
    env = os.environ | {"GRYVIA_SANDBOX_HOME": str(tmp_path / "home")}
    res = _gryvia(
        env,
        "sandbox",
        "up",
        "--name",
        "bad",
        "--nodes",
        "2xB200:8",
        "--kubeconfig",
        str(tmp_path / "config"),
    )
    assert res.returncode == 1
    assert res.stderr.startswith("error: --nodes: '2xB200:8': unknown type 'B200'")
    assert not (tmp_path / "home" / "clusters" / "bad").exists()


def test_dry_run_downloads_nothing(tmp_path: Path) -> None:
    env = os.environ | {"GRYVIA_SANDBOX_HOME": str(tmp_path / "home")}
    res = _gryvia(env, "sandbox", "up", "--name", "dry", "--dry-run")
    assert res.returncode == 0, res.stderr
    assert "kube-apiserver" in res.stdout
    assert "http://" not in res.stdout.replace("http://127.0.0.1", "")
    assert "https://" not in res.stdout.replace("https://127.0.0.1", "").replace(
        "https://kubernetes.default.svc.cluster.local", ""
    )
