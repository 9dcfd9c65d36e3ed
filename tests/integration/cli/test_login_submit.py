"""Logged in through the real Dex, users see their tenants' jobs and nothing else: alice logs in
(device flow) and submits in her tenant, the job carries her name; bob, a member of another
tenant, lists all namespaces and sees his tenant's jobs but none of alice's; kubectl with
alice's kubeconfig user reads her job."""

from __future__ import annotations

import json
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from gryvia_operator.api.names import ANNOTATION_SUBMITTER
from tests.builders import sh_job
from tests.conftest import SandboxHandle
from tests.integration.cli.conftest import Gryvia
from tests.support.cli import run_gryvia
from tests.support.oidclogin import login, login_env
from tests.support.operator import OperatorProcess
from tests.support.wait import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.sandbox]

GET = ("get", "gryviaaijobs", "-o", "name", "-n")
USERS = {"alice": "alice@example.com", "bob": "bob@example.com"}


@pytest.fixture
def tenants(
    sandbox: SandboxHandle, operator: OperatorProcess, tenant_roles: None, gryvia: Gryvia
) -> Iterator[dict[str, str]]:
    """Two tenants, alice a member of the first and bob of the second: user -> namespace."""
    rid = uuid.uuid4().hex[:5]
    made = {"alice": f"v{rid}", "bob": f"n{rid}"}
    try:
        for who, tenant in made.items():
            assert gryvia("tenant", "create", tenant).returncode == 0
            user = f"oidc:{USERS[who]}"
            added = gryvia("tenant", "add-member", tenant, user, "--role", "member")
            assert added.returncode == 0, added.stderr
        for who, tenant in made.items():
            wait_for(
                lambda t=tenant, w=who: _can_create(sandbox, f"tenant-{t}", f"oidc:{USERS[w]}"),
                timeout=60,
                what=f"{who}'s binding in tenant-{tenant}",
            )
        yield {who: f"tenant-{tenant}" for who, tenant in made.items()}
    finally:
        for tenant in made.values():
            for args in (("gryviatenant", tenant), ("namespace", f"tenant-{tenant}")):
                sandbox.kubectl_run("delete", *args, "--ignore-not-found", "--wait=false")


def _can_create(sandbox: SandboxHandle, ns: str, user: str) -> bool:
    done = sandbox.kubectl_run(
        "auth", "can-i", "create", "gryviaaijobs.gryvia.io", "-n", ns, "--as", user, check=False
    )
    return done.stdout.strip() == "yes"


def _submit(env: dict[str, str], ns: str, name: str, tmp_path: Path) -> None:
    job = sh_job(name, gpus=0, script="true", suspend=True)
    job["spec"].pop("gpuType")
    manifest = tmp_path / f"{name}.yaml"
    manifest.write_text(yaml.safe_dump(job))
    done = run_gryvia("submit", "-f", str(manifest), "-n", ns, env=env)
    assert done.returncode == 0, done.stderr


def test_alice_submits_and_bob_lists_all_namespaces_without_her_jobs(
    sandbox: SandboxHandle, tenants: dict[str, str], tmp_path: Path
) -> None:
    from gryvia_cli.sandbox import oidc

    issuer = oidc.load(sandbox.name)
    assert issuer is not None, "the session sandbox runs with --oidc"
    envs = {}
    for who, email in USERS.items():
        env, _kube, _keyring = login_env(sandbox, tmp_path / who)
        said = login(env, issuer.issuer, str(issuer.ca_file), email, f"{who}-password")
        assert f"logged in as {email}" in said
        envs[who] = env

    _submit(envs["alice"], tenants["alice"], "alice-train", tmp_path)
    _submit(envs["bob"], tenants["bob"], "bob-train", tmp_path)
    job = sandbox.kubectl_json("get", "gryviaaijob", "-n", tenants["alice"], "alice-train")
    assert job["metadata"]["annotations"][ANNOTATION_SUBMITTER] == "oidc:alice@example.com"

    # bob: all namespaces is forbidden to him; he sees the tenants he may read
    listed = run_gryvia("list", "jobs", "-A", "-o", "json", env=envs["bob"])
    assert listed.returncode == 0, listed.stderr
    items = json.loads(listed.stdout)["items"]
    names = {(i["metadata"]["namespace"], i["metadata"]["name"]) for i in items}
    assert (tenants["bob"], "bob-train") in names
    assert not [n for n in names if n[0] == tenants["alice"]], names
    assert "you may not list jobs in all namespaces" in listed.stderr
    table = run_gryvia("list", "jobs", "-A", env=envs["bob"])
    assert table.returncode == 0 and "bob-train" in table.stdout
    assert "alice-train" not in table.stdout
    refused = run_gryvia("list", "jobs", "-n", tenants["alice"], env=envs["bob"])
    assert refused.returncode != 0 and "forbidden" in refused.stderr

    # kubectl with alice's kubeconfig user (the exec plugin `gryvia auth token`)
    kubectl = subprocess.run(
        [str(sandbox.kubectl), "--user", f"gryvia-{sandbox.name}-oidc", *GET, tenants["alice"]],
        env=envs["alice"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert kubectl.returncode == 0, kubectl.stderr
    assert kubectl.stdout.split() == ["gryviaaijob.gryvia.io/alice-train"]
