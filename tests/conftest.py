"""Shared fixtures: the bare API server (envtest style) and the full sandbox cluster."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import HealthCheck, settings

from tests.support.controlplane import ControlPlane, control_plane

if TYPE_CHECKING:
    from tests.support.operator import OperatorProcess

pytest_plugins = ["tests.support.timing"]

CLUSTER_FIXTURES = frozenset({"sandbox", "apiserver"})

# Property tests check answers, not speed: on a loaded 2-core machine (the suite's two
# workers, a cluster beside them) generating inputs or running one example can take longer
# than Hypothesis' health check and deadline allow, which failed a green run once
# (test_jsonscan, "Input generation is slow"). A test's own @settings still wins.
settings.register_profile("suite", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("suite")


def _needs_operator(item: pytest.Item) -> bool:
    return "operator" in getattr(item, "fixturenames", ())


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects by marker
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark every test that reaches a cluster `integration` (whatever its module says), and
    order the operator's tests by the configuration they need, so each change of
    configuration costs one operator restart: the files that need only the session
    configuration first, in collection order; then the files that need another one, each
    configuration's tests together (a test that must start the operator itself first among
    them, its start then being the change). Whole files move, so `--dist loadfile` hands a
    worker the other configurations only after everything else and it never switches back."""
    from tests.support.operator import configuration

    default = configuration(None)
    flags = {
        item.nodeid: configuration(item.get_closest_marker("operator"))
        for item in items
        if _needs_operator(item)
    }
    odd_files = {item.path for item in items if flags.get(item.nodeid, default) != default}
    ranks: dict[tuple[str, ...], int] = {default: 0}
    for item in items:
        ranks.setdefault(flags.get(item.nodeid, default), len(ranks))

    def key(item: pytest.Item) -> tuple[int, int, int]:
        marker = item.get_closest_marker("operator")
        fresh = marker is not None and bool(marker.kwargs.get("starts_after"))
        rank = ranks[flags.get(item.nodeid, default)]
        return (item.path in odd_files, rank, not fresh)

    for item in items:
        if CLUSTER_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.integration)
    items.sort(key=key)  # stable: collection order within each group
    _deselect_test_all_only(config, items)


def _deselect_test_all_only(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under `make test`, leave out the tests marked `test_all` (their prerequisites take
    longer to build than `make test` may spend; `make test-all` builds them and the tests
    fail there, never skip, when they are missing). Reported as deselected, not skipped."""
    from tests.support.depth import FULL

    if FULL:
        return
    dropped = [item for item in items if item.get_closest_marker("test_all") is not None]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = [item for item in items if item.get_closest_marker("test_all") is None]


_session_operator: list[OperatorProcess] = []
"""The session's operator once its fixture has started it (empty before)."""


@pytest.fixture(autouse=True)
def _operator_configuration(request: pytest.FixtureRequest) -> None:
    """Give a test that uses the operator the configuration it declares, restarting it only
    when that differs from the one running. A function fixture, so module fixtures (a grant
    the configuration needs at start) come first; `@pytest.mark.operator(...,
    starts_after=("fixture", ...))` sets those function fixtures up first too and always
    starts the operator anew after them (for what it reads only at start)."""
    if _needs_operator(request.node) and _session_operator:
        from tests.support.operator import configuration

        marker = request.node.get_closest_marker("operator")
        first = tuple(marker.kwargs.get("starts_after", ())) if marker else ()
        for name in first:
            request.getfixturevalue(name)
        _session_operator[0].configure(configuration(marker), fresh=bool(first))


@pytest.fixture(scope="session")
def apiserver(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ControlPlane]:
    """A real etcd + kube-apiserver on loopback ports, shared by the whole session."""
    with control_plane(tmp_path_factory.mktemp("apiserver")) as plane:
        yield plane


@contextlib.contextmanager
def _api_client(kubeconfig: Path) -> Iterator[object]:
    """A `kubernetes.client.ApiClient` for `kubeconfig`, closed afterwards."""
    from kubernetes import config

    client = config.new_client_from_config(config_file=str(kubeconfig))
    try:
        yield client
    finally:
        client.close()


@pytest.fixture
def api_client(apiserver: ControlPlane) -> Iterator[object]:
    """A `kubernetes.client.ApiClient` for the bare API server (admin, client certificate)."""
    with _api_client(apiserver.kubeconfig) as client:
        yield client


@pytest.fixture
def repo_root() -> Path:
    """The source tree's root folder."""
    return Path(__file__).resolve().parent.parent


_readers: dict[Path, Any] = {}
"""One in-process reader per kubeconfig (tests/support/kubeget.py)."""


@dataclass(frozen=True)
class SandboxHandle:
    """A running sandbox for tests: its name, kubeconfig file, kubectl path and the API
    server's audit log (creates and deletes of Gryvia objects)."""

    name: str
    kubeconfig: Path
    kubectl: Path
    audit_log: Path

    def audited_creates(self, resource: str, namespace: str, name: str) -> list[dict[str, Any]]:
        """The audit events of every create of `resource` `namespace/name` so far, dry runs
        included (their `requestURI` has `dryRun=All`)."""
        events = (json.loads(line) for line in self.audit_log.read_text().splitlines() if line)
        return [
            e
            for e in events
            if e.get("verb") == "create"
            and (e.get("objectRef") or {}).get("resource") == resource
            and (e.get("objectRef") or {}).get("namespace") == namespace
            and (e.get("objectRef") or {}).get("name") == name
        ]

    def kubectl_run(
        self, *args: str, check: bool = True, input: str | None = None, timeout: float = 120
    ) -> subprocess.CompletedProcess[str]:
        """Run kubectl against the sandbox (with `input` on stdin) and return the process."""
        return subprocess.run(
            [str(self.kubectl), "--kubeconfig", str(self.kubeconfig), *args],
            capture_output=True,
            text=True,
            check=check,
            timeout=timeout,
            input=input,
        )

    @contextlib.contextmanager
    def fresh_namespace(self, prefix: str) -> Iterator[str]:
        """A new namespace `<prefix>-<8 hex>`, deleted afterwards (without waiting)."""
        name = f"{prefix}-{uuid.uuid4().hex[:8]}"
        self.kubectl_run("create", "namespace", name)
        try:
            yield name
        finally:
            self.kubectl_run("delete", "namespace", name, "--wait=false", check=False)

    def kubectl_json(self, *args: str) -> Any:
        """`kubectl ARGS -o json`, parsed: answered in-process (tests/support/kubeget.py) for
        the `get`s it understands, by a kubectl process otherwise."""
        from tests.support.kubeget import Reader

        reader = _readers.get(self.kubeconfig) or _readers.setdefault(
            self.kubeconfig, Reader(self.kubeconfig)
        )
        found = reader.get(args)
        if found is not None:
            return found
        return json.loads(self.kubectl_run(*args, "-o", "json").stdout)

    def apply(
        self,
        *objs: dict[str, Any],
        namespace: str | None = None,
        verb: str = "apply",
        check: bool = True,
        extra: tuple[str, ...] = (),
    ) -> subprocess.CompletedProcess[str]:
        """`kubectl apply` (or `create`) the objects as one List (JSON keeps label values
        strings), in `namespace` when given; `extra` adds flags such as `--as`."""
        where = ("-n", namespace) if namespace else ()
        return self.kubectl_run(
            verb,
            *where,
            *extra,
            "-f",
            "-",
            input=json.dumps({"apiVersion": "v1", "kind": "List", "items": list(objs)}),
            check=check,
            timeout=300,
        )


# -- one set of cluster helpers for every integration test ---------------------------------------


def kubectl_json(sandbox: SandboxHandle, *args: str) -> Any:
    """`kubectl ARGS -o json` against the sandbox, parsed (see SandboxHandle.kubectl_json)."""
    return sandbox.kubectl_json(*args)


def create(
    sandbox: SandboxHandle, ns: str, *objs: dict[str, Any], check: bool = True
) -> subprocess.CompletedProcess[str]:
    """`kubectl create` the objects in namespace `ns`."""
    return sandbox.apply(*objs, namespace=ns, verb="create", check=check)


def get_job(sandbox: SandboxHandle, ns: str, name: str) -> dict[str, Any]:
    """The GryviaAIJob `ns/name`."""
    obj: dict[str, Any] = sandbox.kubectl_json("get", "gryviaaijob", "-n", ns, name)
    return obj


def wait_phase(
    sandbox: SandboxHandle, ns: str, name: str, *phases: str, timeout: float = 180
) -> dict[str, Any]:
    """Wait until job `ns/name`'s phase is one of `phases`; return the job (AssertionError
    naming the phases after `timeout` seconds)."""
    from tests.support.wait import wait_for

    def check() -> dict[str, Any] | None:
        job = get_job(sandbox, ns, name)
        return job if (job.get("status") or {}).get("phase") in phases else None

    result: dict[str, Any] = wait_for(check, timeout=timeout, what=f"{ns}/{name} in {phases}")
    return result


@pytest.fixture(scope="session")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SandboxHandle]:
    """A full sandbox cluster (real control plane, simulated GPU nodes, pod runner, Dex as
    OIDC issuer) for the whole session; torn down with every process it started, even when
    tests fail."""
    from gryvia_cli.sandbox import binaries, cluster

    home = tmp_path_factory.mktemp("sandbox-home")
    previous = os.environ.get("GRYVIA_SANDBOX_HOME")
    os.environ["GRYVIA_SANDBOX_HOME"] = str(home)
    name = f"t{os.getpid()}-{uuid.uuid4().hex[:4]}"
    try:
        # With Dex (`--oidc`): about a second more, and OIDC logins work in every test.
        box = cluster.up(name, "2xH100:8,2xA100-80G:8,2xL40:4,1xcpu", with_oidc=True)
        yield SandboxHandle(name, box.kubeconfig, binaries.path_of("kubectl"), box.audit_log)
    finally:
        cluster.down(name)
        if previous is None:
            os.environ.pop("GRYVIA_SANDBOX_HOME", None)
        else:
            os.environ["GRYVIA_SANDBOX_HOME"] = previous


@pytest.fixture
def sandbox_api(sandbox: SandboxHandle) -> Iterator[object]:
    """A `kubernetes.client.ApiClient` for the sandbox."""
    with _api_client(sandbox.kubeconfig) as client:
        yield client


@pytest.fixture(scope="session")
def crds(sandbox: SandboxHandle) -> None:
    """Every Gryvia CRD, applied to the sandbox and Established."""
    from tests.support.operator import apply_crds

    apply_crds(sandbox.kubectl, sandbox.kubeconfig)


@pytest.fixture(scope="session")
def tenant_roles(sandbox: SandboxHandle) -> None:
    """The chart's ClusterRoles gryvia-tenant-viewer|member|admin, rendered by helm from
    charts/gryvia and applied to the sandbox (the operator binds them in tenant namespaces)."""
    from gryvia_cli.sandbox import binaries
    from tests.support.chartaccount import render_tenant_roles

    rendered = render_tenant_roles(binaries.path_of("helm"))
    sandbox.kubectl_run("apply", "-f", "-", input=rendered)


@pytest.fixture(scope="session")
def operator(
    sandbox: SandboxHandle, crds: None, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[OperatorProcess]:
    """The operator running against the sandbox for the whole session as the chart's
    ServiceAccount (`tests/support/chartaccount.py`; tests may kill and restart it); stopped,
    and its webhook configuration removed, at the end."""
    from gryvia_cli.sandbox import binaries
    from gryvia_operator.webhook.configuration import mutating_name
    from tests.support.chartaccount import install_account
    from tests.support.operator import WEBHOOK_CONFIG, OperatorProcess, configuration

    folder = tmp_path_factory.mktemp("operator")
    # The operator authenticates as the chart's ServiceAccount: every call it makes goes
    # through the chart's ClusterRole, so a permission the chart lacks fails a test here.
    account = install_account(
        binaries.path_of("helm"), sandbox.kubectl, sandbox.kubeconfig, folder / "account.yaml"
    )
    # The session configuration; a test that wants another gets it from
    # `_operator_configuration`, after its module fixtures (a grant it needs at start).
    proc = OperatorProcess(account, folder / "operator.log", extra=configuration(None))
    proc.start()
    _session_operator.append(proc)
    try:
        yield proc
    finally:
        _session_operator.clear()
        proc.stop()
        sandbox.kubectl_run(
            "delete",
            "validatingwebhookconfiguration",
            WEBHOOK_CONFIG,
            "--ignore-not-found",
            check=False,
        )
        sandbox.kubectl_run(
            "delete",
            "mutatingwebhookconfiguration",
            mutating_name(WEBHOOK_CONFIG),
            "--ignore-not-found",
            check=False,
        )


@pytest.fixture
def live_operator(operator: OperatorProcess) -> OperatorProcess:
    """The session's operator, (re)started if an earlier test stopped it."""
    operator.ensure_running()
    return operator
