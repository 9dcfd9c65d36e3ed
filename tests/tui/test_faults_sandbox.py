"""The console against the sandbox when the network or RBAC gets in the way.

- A 120 s blackhole between the console and the API server (a relay that stops forwarding
  without closing sockets): the top bar says `reconnecting (attempt N, ...)` within 30 s, and
  a job's phase changed meanwhile is on screen within 10 s of forwarding resuming.
- A user whose RBAC is namespace-only (a ServiceAccount with a Role in one namespace): the
  cluster-wide views say "not allowed" once, quietly; no error notification, no retry storm.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from gryvia_cli.tui import make_app
from gryvia_cli.tui.app import GryviaApp
from gryvia_cli.tui.kubesource import KubeSource
from gryvia_cli.tui.widgets.rowtable import RowTable
from gryvia_cli.tui.widgets.topbar import TopBar
from tests.conftest import SandboxHandle
from tests.support.relay import Relay, relayed_kubeconfig, server_address
from tests.tui.waits import wait_until

pytestmark = [pytest.mark.tui, pytest.mark.integration, pytest.mark.sandbox]

BLACKHOLE_SECONDS = 120
RECONNECTING_WITHIN = 30.0
CONVERGED_WITHIN = 10.0


@pytest.fixture
def namespace(sandbox: SandboxHandle, crds: None) -> Iterator[str]:
    name = f"tuif-{uuid.uuid4().hex[:6]}"
    sandbox.kubectl_run("create", "namespace", name)
    yield name
    sandbox.kubectl_run("delete", "namespace", name, "--wait=false", check=False)


def _job(name: str, ns: str) -> dict[str, Any]:
    return {
        "apiVersion": "gryvia.io/v1alpha1",
        "kind": "GryviaAIJob",
        "metadata": {"name": name, "namespace": ns},
        "spec": {
            "type": "training",
            "gpus": 1,
            "gpuType": "H100",
            "image": "busybox",
            "suspend": True,
            "command": ["true"],
        },
    }


def _set_phase(sandbox: SandboxHandle, ns: str, name: str, phase: str) -> None:
    """Write the job's phase straight to the API server (not through the relay)."""
    sandbox.kubectl_run(
        "patch",
        "gryviaaijob",
        name,
        "-n",
        ns,
        "--subresource=status",
        "--type=merge",
        "-p",
        json.dumps({"status": {"phase": phase}}),
    )


def _row_shows(app: GryviaApp, key: str, text: str) -> bool:
    tables = app.screen.query(RowTable)
    if not tables:
        return False
    lines = tables.first()._lines
    return any(k[0] == key and text in line.text for k, line in list(lines.items()))


def _bar(app: GryviaApp) -> str:
    return str(app.screen.query_one(TopBar).render())


async def test_a_blackhole_shows_reconnecting_and_the_rows_converge_after_it(
    sandbox: SandboxHandle, namespace: str, tmp_path: Path
) -> None:
    name = "steady"
    key = f"{namespace}/{name}"
    sandbox.apply(_job(name, namespace))
    await asyncio.to_thread(_set_phase, sandbox, namespace, name, "Queued")
    with Relay(server_address(sandbox.kubeconfig)) as relay:
        kubeconfig = relayed_kubeconfig(sandbox.kubeconfig, tmp_path / "relayed", relay)
        source = await asyncio.to_thread(
            KubeSource.open, kubeconfig, None, namespace, all_namespaces=False
        )
        app = make_app(source)
        async with app.run_test(size=(140, 40)) as pilot:
            await wait_until(pilot, lambda: app.connection == "live", timeout=60, what="live")
            await wait_until(
                pilot, lambda: _row_shows(app, key, "Queued"), timeout=30, what="the job row"
            )
            relay.blackhole()
            start = time.monotonic()
            await wait_until(
                pilot,
                lambda: "reconnecting (attempt" in _bar(app),
                timeout=RECONNECTING_WITHIN,
                what="the top bar saying reconnecting",
            )
            assert time.monotonic() - start <= RECONNECTING_WITHIN
            await asyncio.to_thread(_set_phase, sandbox, namespace, name, "Running")
            # Hold the blackhole for its whole window; the console must not claim to be live.
            while time.monotonic() - start < BLACKHOLE_SECONDS:
                assert app.connection in ("reconnecting", "unreachable"), _bar(app)
                assert not _row_shows(app, key, "Running")
                await pilot.pause(0.5)
            assert "unreachable (attempt" in _bar(app)  # failing for more than 60 s
            relay.forward()
            resumed = time.monotonic()
            await wait_until(
                pilot,
                lambda: _row_shows(app, key, "Running"),
                timeout=CONVERGED_WITHIN,
                what="the new phase after forwarding resumed",
            )
            converged = time.monotonic() - resumed
            await wait_until(
                pilot, lambda: app.connection == "live", timeout=CONVERGED_WITHIN, what="live"
            )
            assert converged <= CONVERGED_WITHIN


# -- a user with namespace-only RBAC ------------------------------------------------------------


def _namespace_only_kubeconfig(sandbox: SandboxHandle, ns: str, out: Path) -> Path:
    """A ServiceAccount allowed to read (and write jobs) in `ns` only, and a kubeconfig that
    uses its token against the sandbox."""
    sandbox.apply(
        {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": {"name": "dev", "namespace": ns},
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "Role",
            "metadata": {"name": "dev", "namespace": ns},
            "rules": [
                {
                    "apiGroups": ["gryvia.io"],
                    "resources": ["*"],
                    "verbs": ["get", "list", "watch", "create", "patch", "delete"],
                },
                {
                    "apiGroups": [""],
                    "resources": ["pods", "pods/log", "events"],
                    "verbs": ["get", "list", "watch"],
                },
            ],
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": {"name": "dev", "namespace": ns},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "dev"},
            "subjects": [{"kind": "ServiceAccount", "name": "dev", "namespace": ns}],
        },
    )
    token = sandbox.kubectl_run("create", "token", "dev", "-n", ns, "--duration=1h").stdout.strip()
    config: dict[str, Any] = yaml.safe_load(sandbox.kubeconfig.read_text())
    for entry in config.get("users") or []:
        entry["user"] = {"token": token}
    for entry in config.get("contexts") or []:
        entry["context"]["namespace"] = ns
    out.write_text(yaml.safe_dump(config))
    return out


async def test_a_namespace_only_user_sees_not_allowed_once_and_no_errors(
    sandbox: SandboxHandle, namespace: str, tmp_path: Path
) -> None:
    sandbox.apply(_job("mine", namespace))
    kubeconfig = await asyncio.to_thread(
        _namespace_only_kubeconfig, sandbox, namespace, tmp_path / "dev.yaml"
    )
    source = await asyncio.to_thread(KubeSource.open, kubeconfig, None, None, all_namespaces=False)
    app = make_app(source)
    told: list[tuple[str, str, str]] = []
    notify = app.notify

    def record(message: str, *, title: str = "", severity: Any = "information", **kw: Any) -> None:
        told.append((str(severity), title, message))
        notify(message, title=title, severity=severity, **kw)

    app.notify = record  # type: ignore[method-assign]
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_until(pilot, lambda: "jobs" in app.store.loaded, timeout=60, what="jobs")
        await wait_until(
            pilot,
            lambda: {"gpunodes", "nodes", "skus", "tenants", "quotas"} <= app.store.forbidden,
            timeout=30,
            what="cluster-wide kinds marked not allowed",
        )
        assert app.feed is not None
        await wait_until(pilot, lambda: app.connection == "live", timeout=30, what="live")
        await pilot.press("5")
        await wait_until(
            pilot,
            lambda: "not allowed" in str(app.screen.query_one("#nodes-status").render()),
            what="the nodes view saying not allowed",
        )
        table = app.screen.query_one(RowTable)
        assert table.empty_text.startswith("Not allowed: gpunodes, nodes")
        # Watch for a while: nothing is retried, nothing pops up, the marker stays live.
        states_before = dict(app.feed.states)
        until = time.monotonic() + 10
        while time.monotonic() < until:
            assert app.connection == "live", _bar(app)
            await pilot.pause(0.5)
        assert dict(app.feed.states) == states_before
    errors = [t for t in told if t[0] in ("error", "warning")]
    assert errors == [], errors
