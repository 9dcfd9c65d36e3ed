"""Tenant membership is enforced: `gryvia tenant add-member|remove-member` against the sandbox
with the operator running and the chart's tenant ClusterRoles applied, judged by what
`kubectl auth can-i` answers for the users (impersonated with --as / --as-group)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from tests.conftest import SandboxHandle
from tests.integration.cli.conftest import Gryvia, kubectl_json
from tests.support.operator import OperatorProcess
from tests.support.wait import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.sandbox]

ALICE = "alice@example.com"
BOB = "bob@example.com"
JOBS = "gryviaaijobs.gryvia.io"


@pytest.fixture
def team(
    sandbox: SandboxHandle, operator: OperatorProcess, tenant_roles: None, gryvia: Gryvia
) -> Iterator[str]:
    """A tenant `m<id>` without members, its namespace made; tenant and namespace removed
    after the test."""
    name = f"m{uuid.uuid4().hex[:6]}"
    created = gryvia("tenant", "create", name)
    assert created.returncode == 0, created.stderr
    wait_for(
        lambda: sandbox.kubectl_run("get", "ns", f"tenant-{name}", check=False).returncode == 0,
        what="the tenant's namespace",
    )
    yield name
    for args in (("gryviatenant", name), ("namespace", f"tenant-{name}")):
        sandbox.kubectl_run("delete", *args, "--ignore-not-found", "--wait=false", check=False)


def can_i(sandbox: SandboxHandle, ns: str, who: tuple[str, ...], verb: str, *what: str) -> bool:
    """What `kubectl auth can-i VERB WHAT -n NS` answers for `who` (--as/--as-group flags)."""
    done = sandbox.kubectl_run("auth", "can-i", verb, *what, "-n", ns, *who, check=False)
    answer = done.stdout.strip()
    assert answer in ("yes", "no"), done.stdout + done.stderr
    return answer == "yes"


def becomes(sandbox: SandboxHandle, ns: str, who: tuple[str, ...], verb: str, want: bool) -> None:
    """Wait until `who` may (`want`) or may not `VERB gryviaaijobs` in `ns`."""
    wait_for(
        lambda: can_i(sandbox, ns, who, verb, JOBS) == want,
        what=f"{' '.join(who)} {'allowed' if want else 'denied'} to {verb} jobs in {ns}",
    )


def bindings(sandbox: SandboxHandle, ns: str) -> dict[str, list[str]]:
    """The tenant's RoleBindings: name -> subject names."""
    items = kubectl_json(sandbox, "get", "rolebindings", "-n", ns)["items"]
    return {b["metadata"]["name"]: [s["name"] for s in b.get("subjects") or []] for b in items}


def member_count(sandbox: SandboxHandle, tenant: str) -> int | None:
    """The tenant's status.memberCount (None until written)."""
    status = kubectl_json(sandbox, "get", "gryviatenant", tenant).get("status") or {}
    count = status.get("memberCount")
    return int(count) if count is not None else None


def test_members_added_and_removed_change_what_they_may_do(
    sandbox: SandboxHandle, gryvia: Gryvia, team: str
) -> None:
    ns = f"tenant-{team}"
    alice, bob = ("--as", ALICE), ("--as", BOB)
    assert not can_i(sandbox, ns, alice, "list", JOBS)

    added = gryvia("tenant", "add-member", team, ALICE, "--role", "member")
    assert added.returncode == 0, added.stderr
    assert f"{ALICE} added to tenant {team} as member" in added.stderr
    becomes(sandbox, ns, alice, "create", True)
    assert can_i(sandbox, ns, alice, "list", JOBS)
    assert can_i(sandbox, ns, alice, "create", "pods", "--subresource=portforward")
    assert not can_i(sandbox, ns, alice, "get", "secrets")
    assert not can_i(sandbox, ns, alice, "create", "pods", "--subresource=exec")
    assert not can_i(sandbox, ns, alice, "create", "gryviausagerecords.gryvia.io")
    assert not can_i(sandbox, "default", alice, "list", JOBS)  # only the tenant's namespace

    again = gryvia("tenant", "add-member", team, ALICE, "--role", "member")
    assert again.returncode == 0 and "nothing changed" in again.stderr

    assert gryvia("tenant", "add-member", team, BOB).returncode == 0  # viewer by default
    becomes(sandbox, ns, bob, "list", True)
    assert not can_i(sandbox, ns, bob, "create", JOBS)
    assert not can_i(sandbox, ns, bob, "get", "secrets")
    wait_for(
        lambda: member_count(sandbox, team) == 2,
        timeout=120,  # one accounting pass after the edit, on a loaded machine
        what="status.memberCount 2",
    )

    group = ("--as", "carol@example.com", "--as-group", "vision-ml")
    joined = gryvia("tenant", "add-member", team, "vision-ml", "--group", "--role", "member")
    assert joined.returncode == 0, joined.stderr
    becomes(sandbox, ns, group, "create", True)

    removed = gryvia("tenant", "remove-member", team, ALICE)
    assert removed.returncode == 0 and f"{ALICE} removed from tenant {team}" in removed.stderr
    becomes(sandbox, ns, alice, "create", False)
    assert not can_i(sandbox, ns, alice, "list", JOBS)
    assert bindings(sandbox, ns)["gryvia-tenant-member"] == ["vision-ml"]  # the group stays

    assert gryvia("tenant", "remove-member", team, "vision-ml", "--group").returncode == 0
    becomes(sandbox, ns, group, "create", False)
    wait_for(
        lambda: "gryvia-tenant-member" not in bindings(sandbox, ns),
        what="the member binding deleted with its last subject",
    )
    assert bindings(sandbox, ns) == {"gryvia-tenant-viewer": [BOB]}

    deleted = gryvia("tenant", "delete", team, "--yes")  # deletionPolicy Retain
    assert deleted.returncode == 0, deleted.stderr
    becomes(sandbox, ns, bob, "list", False)  # the tenant owned its bindings
    assert sandbox.kubectl_run("get", "ns", ns, check=False).returncode == 0
