"""Tenant membership edits: the pure core (gryvia_cli/core/membership.py) and
`gryvia tenant add-member|remove-member` through CliRunner with a fake access layer that
checks resourceVersions like the API server (tests/integration/cli/test_membership_cli.py
covers the real one and what `kubectl auth can-i` answers)."""

from __future__ import annotations

import copy
import datetime as dt
import json
from typing import Any

import pytest

from gryvia_cli.core import membership as m
from gryvia_cli.errors import ConflictError
from gryvia_cli.kube import resources as r
from tests.unit.cli.fakes import FakeAccess
from tests.unit.cli.test_tenancy_commands import run
from tests.unit.cli.test_tenancy_core import tenant

NOW = dt.datetime(2026, 11, 18, 15, 30, tzinfo=dt.UTC)


def test_add_member_appends_with_role_and_join_time() -> None:
    change = m.add_member(
        {"members": [{"username": "ann", "role": "admin"}]}, "vision", "bob", "member", NOW
    )
    assert change.patch == {
        "members": [
            {"username": "ann", "role": "admin"},
            {"username": "bob", "role": "member", "joinedAt": "2026-11-18T15:30:00Z"},
        ]
    }
    assert change.message == "bob added to tenant vision as member"


def test_add_member_changes_a_role_and_keeps_the_join_time() -> None:
    spec = {"members": [{"username": "bob", "role": "viewer", "joinedAt": "2026-01-01T00:00:00Z"}]}
    change = m.add_member(spec, "vision", "bob", "admin", NOW)
    assert change.patch == {
        "members": [{"username": "bob", "role": "admin", "joinedAt": "2026-01-01T00:00:00Z"}]
    }
    assert change.message == "bob in tenant vision: role changed from viewer to admin"


def test_add_member_twice_changes_nothing() -> None:
    spec = {"members": [{"username": "bob"}]}  # role unset reads as the default, viewer
    change = m.add_member(spec, "vision", "bob", "viewer", NOW)
    assert change.patch is None
    assert change.message == "bob is already in tenant vision as viewer; nothing changed"


def test_add_member_merges_a_user_listed_twice() -> None:
    spec = {"members": [{"username": "bob", "role": "member"}, {"username": "bob"}]}
    change = m.add_member(spec, "vision", "bob", "member", NOW)
    assert change.patch == {"members": [{"username": "bob", "role": "member"}]}


def test_remove_member() -> None:
    spec = {"members": [{"username": "ann", "role": "admin"}, {"username": "bob"}]}
    change = m.remove_member(spec, "vision", "bob")
    assert change.patch == {"members": [{"username": "ann", "role": "admin"}]}
    assert change.message == "bob removed from tenant vision (was viewer)"
    last = m.remove_member({"members": [{"username": "bob"}]}, "vision", "bob")
    assert last.patch == {"members": None}  # the merge patch drops the field
    absent = m.remove_member(spec, "vision", "cy")
    assert absent.patch is None
    assert absent.message == "cy is not in tenant vision; nothing changed"


def test_groups_share_one_role() -> None:
    added = m.add_group({}, "vision", "ml", None)
    assert added.patch == {"oidcGroups": ["ml"]}
    assert added.message == "group ml added to tenant vision as viewer"
    spec = {"oidcGroups": ["ml"], "oidcGroupRole": "viewer"}
    promoted = m.add_group(spec, "vision", "cv", "member")
    assert promoted.patch == {"oidcGroups": ["ml", "cv"], "oidcGroupRole": "member"}
    assert promoted.message == (
        "group cv added to tenant vision as member (also for ml: OIDC groups share one role)"
    )
    assert m.add_group(spec, "vision", "ml", "viewer").patch is None
    assert m.add_group(spec, "vision", "ml", None).patch is None
    assert m.add_group(spec, "vision", "ml", "admin").patch == {"oidcGroupRole": "admin"}
    assert m.remove_group(spec, "vision", "ml").patch == {"oidcGroups": None}
    assert m.remove_group(spec, "vision", "cv").patch is None


@pytest.mark.parametrize(
    ("name", "problem"),
    [("", "empty"), (" ann", "blanks"), ("a" * 254, "at most 253")],
)
def test_bad_names(name: str, problem: str) -> None:
    assert problem in (m.name_problem(name, "user") or "")
    assert m.name_problem("system:serviceaccount:ml:bot", "user") is None
    assert (
        m.role_problem("owner")
        == '--role "owner" is not a tenant role: use one of admin, member, viewer'
    )


class VersionedFake(FakeAccess):
    """FakeAccess whose merge patches carry a resourceVersion precondition: a stale one is a
    409 Conflict, each write bumps it; `racers` writes by someone else land just before the
    next patches (each adds a member)."""

    def __init__(self, *objects: dict[str, Any], racers: int = 0) -> None:
        super().__init__(*objects)
        for obj in self.objects:
            obj["metadata"]["resourceVersion"] = "1"
        self.racers = racers
        self.patches: list[dict[str, Any]] = []

    def merge_patch(
        self, res: r.Resource, name: str, namespace: str | None, patch: dict[str, Any]
    ) -> dict[str, Any]:
        obj = self._find(res, name, namespace)
        if self.racers:
            self.racers -= 1
            obj["spec"].setdefault("members", []).append({"username": f"racer{self.racers}"})
            obj["metadata"]["resourceVersion"] = str(int(obj["metadata"]["resourceVersion"]) + 1)
        self.patches.append(copy.deepcopy(patch))
        if patch["metadata"]["resourceVersion"] != obj["metadata"]["resourceVersion"]:
            raise ConflictError("the object has been modified")
        patch = copy.deepcopy(patch)
        del patch["metadata"]
        stored = super().merge_patch(res, name, namespace, patch)
        obj["metadata"]["resourceVersion"] = str(int(obj["metadata"]["resourceVersion"]) + 1)
        return stored


def _members(fake: FakeAccess) -> list[tuple[str, str]]:
    spec = fake.get(r.TENANT, "vision")["spec"]
    return [(x["username"], x.get("role", "viewer")) for x in spec.get("members") or []]


def test_add_member_retries_on_conflict_and_keeps_the_other_writers_change() -> None:
    fake = VersionedFake(tenant("vision", members=[{"username": "ann", "role": "admin"}]), racers=2)
    result = run(["tenant", "add-member", "vision", "alice@example.com", "--role", "member"], fake)
    assert result.exit_code == 0, result.output
    assert "alice@example.com added to tenant vision as member" in result.stderr
    assert result.stdout == "gryviatenant.gryvia.io/vision\n"
    assert len(fake.patches) == 3  # two conflicts, then the write
    assert _members(fake) == [
        ("ann", "admin"),
        ("racer1", "viewer"),
        ("racer0", "viewer"),
        ("alice@example.com", "member"),
    ]
    spec = fake.get(r.TENANT, "vision")["spec"]
    assert spec["members"][-1]["joinedAt"] == "2026-11-18T15:30:00Z"


def test_add_member_gives_up_after_five_conflicts_and_writes_nothing() -> None:
    fake = VersionedFake(tenant("vision"), racers=99)
    result = run(["tenant", "add-member", "vision", "alice"], fake)
    assert result.exit_code != 0
    assert "tenant vision changed 5 times while being edited; nothing written" in result.stderr
    assert ("alice", "viewer") not in _members(fake)


def test_add_then_remove_is_idempotent_with_clear_messages() -> None:
    fake = VersionedFake(tenant("vision"))
    first = run(["tenant", "add-member", "vision", "bob", "-o", "json"], fake)
    assert first.exit_code == 0, first.output
    assert json.loads(first.stdout)["spec"]["members"][0]["username"] == "bob"
    again = run(["tenant", "add-member", "vision", "bob"], fake)
    assert again.exit_code == 0
    assert "bob is already in tenant vision as viewer; nothing changed" in again.stderr
    assert len(fake.patches) == 1
    gone = run(["tenant", "remove-member", "vision", "bob"], fake)
    assert gone.exit_code == 0 and "bob removed from tenant vision (was viewer)" in gone.stderr
    assert "members" not in fake.get(r.TENANT, "vision")["spec"]
    twice = run(["tenant", "remove-member", "vision", "bob"], fake)
    assert twice.exit_code == 0
    assert "bob is not in tenant vision; nothing changed" in twice.stderr


def test_groups_through_the_cli() -> None:
    fake = VersionedFake(tenant("vision"))
    added = run(
        ["tenant", "add-member", "vision", "vision-ml", "--group", "--role", "member"], fake
    )
    assert added.exit_code == 0, added.output
    spec = fake.get(r.TENANT, "vision")["spec"]
    assert spec["oidcGroups"] == ["vision-ml"] and spec["oidcGroupRole"] == "member"
    gone = run(["tenant", "remove-member", "vision", "vision-ml", "--group"], fake)
    assert gone.exit_code == 0 and "group vision-ml removed from tenant vision" in gone.stderr
    assert "oidcGroups" not in fake.get(r.TENANT, "vision")["spec"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["vision", "ann", "--role", "owner"], "'owner' is not one of"),
        (["vision", " ann"], 'user name " ann" is empty or has blanks around it'),
        (["nope", "ann"], 'tenant "nope" not found'),
    ],
)
def test_add_member_refuses_bad_input(args: list[str], message: str) -> None:
    fake = VersionedFake(tenant("vision"))
    result = run(["tenant", "add-member", *args], fake)
    assert result.exit_code != 0
    assert message in result.stderr, result.stderr
    assert not fake.patches
