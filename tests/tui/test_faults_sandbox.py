"""The console against the sandbox when the network or RBAC gets in the way.

- (The 120 s blackhole between the console and the API server shares its window with the
  CLI's: tests/integration/cli/test_network_faults.py.)
- A user whose RBAC is namespace-only (a ServiceAccount with a Role in one namespace): the
  cluster-wide views say "not allowed" once, quietly; no error notification, no retry storm.
"""

from __future__ import annotations

import asyncio
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
from tests.builders import sh_job
from tests.conftest import SandboxHandle
from tests.tui.waits import wait_until

pytestmark = [pytest.mark.tui, pytest.mark.integration, pytest.mark.sandbox]


@pytest.fixture
def namespace(sandbox: SandboxHandle, crds: None) -> Iterator[str]:
    name = f"tuif-{uuid.uuid4().hex[:6]}"
    sandbox.kubectl_run("create", "namespace", name)
    yield name
    sandbox.kubectl_run("delete", "namespace", name, "--wait=false", check=False)


def _suspended(name: str, namespace: str) -> dict[str, Any]:
    return sh_job(name, gpus=1, gpu_type="H100", script="true", namespace=namespace, suspend=True)


def _bar(app: GryviaApp) -> str:
    return str(app.screen.query_one(TopBar).render())


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
    sandbox.apply(_suspended("mine", namespace))
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
        # (GryviaTenants are not among them: the chart's gryvia-tenant-directory role, applied
        # by other tests of the session, lets every user list tenants.)
        await wait_until(
            pilot,
            lambda: {"gpunodes", "nodes", "skus", "quotas"} <= app.store.forbidden,
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
