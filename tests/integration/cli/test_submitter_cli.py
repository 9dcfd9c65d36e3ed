"""Who submitted a job, against the sandbox (issue 16, part 4): the mutating webhook stamps the
submitter, a forged or changed one is refused, `list jobs --mine`/`-u` filter, and a per-user
GPU limit holds a user's second job (a reason naming the user) while another user's job runs.

Users: the admin kubeconfig user, and alice and bob through impersonation
(`kubectl --as USER --as-group GROUP`), allowed to work with GryviaAIJobs in the test's
namespace by a Role.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gryvia_operator.api.names import (
    ANNOTATION_SUBMITTER,
    ANNOTATION_SUBMITTER_GROUPS,
    SUBMITTER_ANNOTATIONS,
)
from tests.builders import sh_job
from tests.integration.cli.conftest import CliCase, kubectl_json
from tests.support.wait import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.sandbox]
ALICE = ("--as", "alice@example.com", "--as-group", "vision")
BOB = ("--as", "bob@example.com", "--as-group", "nlp")


def _grant(case: CliCase) -> None:
    """A Role on GryviaAIJobs in the test's namespace, bound to alice and bob."""
    role = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "Role",
        "metadata": {"name": "jobs"},
        "rules": [{"apiGroups": ["gryvia.io"], "resources": ["gryviaaijobs"], "verbs": ["*"]}],
    }
    binding = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {"name": "jobs"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "jobs"},
        "subjects": [
            {"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}
            for user in ("alice@example.com", "bob@example.com")
        ],
    }
    case.sandbox.apply(role, binding, namespace=case.namespace, verb="create")


def _create(case: CliCase, job: dict[str, Any], *who: str, check: bool = True) -> Any:
    return case.sandbox.apply(job, namespace=case.namespace, verb="create", extra=who, check=check)


def _annotations(case: CliCase, name: str) -> dict[str, str]:
    job = kubectl_json(case.sandbox, "get", "gryviaaijob", "-n", case.namespace, name)
    return dict(job["metadata"].get("annotations") or {})


def _admin(case: CliCase) -> str:
    review = kubectl_json(case.sandbox, "auth", "whoami")
    return str(review["status"]["userInfo"]["username"])


def test_the_submitter_is_stamped_cannot_be_forged_or_changed_and_filters_lists(
    case: CliCase,
) -> None:
    _grant(case)
    held = {"suspend": True}  # nothing needs to run here
    _create(case, sh_job("by-alice", gpus=1, gpu_type="L40", **held), *ALICE)
    _create(case, sh_job("by-admin", gpus=1, gpu_type="L40", **held))
    stamped = _annotations(case, "by-alice")
    assert stamped[ANNOTATION_SUBMITTER] == "alice@example.com"
    assert stamped[ANNOTATION_SUBMITTER_GROUPS].split(",")[:1] == ["vision"]
    assert "system:authenticated" in stamped[ANNOTATION_SUBMITTER_GROUPS].split(",")
    admin = _admin(case)
    assert admin != "alice@example.com"
    assert _annotations(case, "by-admin")[ANNOTATION_SUBMITTER] == admin

    forged = sh_job("forged", gpus=1, gpu_type="L40", **held)
    forged["metadata"]["annotations"] = {ANNOTATION_SUBMITTER: "bob@example.com"}
    out = _create(case, forged, *ALICE, check=False)
    assert out.returncode != 0
    assert f"annotation {ANNOTATION_SUBMITTER} is set by the admission webhook" in out.stderr
    gone = case.sandbox.kubectl_run(
        "get", "gryviaaijob", "-n", case.namespace, "forged", check=False
    )
    assert gone.returncode != 0

    for who in ((), ALICE):  # nobody changes it, not even the admin
        patch = case.sandbox.kubectl_run(
            "annotate",
            *who,
            "gryviaaijob",
            "-n",
            case.namespace,
            "by-alice",
            f"{ANNOTATION_SUBMITTER}=mallory",
            "--overwrite",
            check=False,
        )
        assert patch.returncode != 0
        assert f"annotation {ANNOTATION_SUBMITTER} records who submitted the job" in patch.stderr
    assert _annotations(case, "by-alice")[ANNOTATION_SUBMITTER] == "alice@example.com"
    again = sh_job("by-alice", gpus=1, gpu_type="L40", **held)  # the manifest, no annotations
    stored = kubectl_json(case.sandbox, "get", "gryviaaijob", "-n", case.namespace, "by-alice")
    again["metadata"]["resourceVersion"] = stored["metadata"]["resourceVersion"]  # CRs need it
    case.sandbox.apply(again, namespace=case.namespace, verb="replace", extra=ALICE)
    kept = _annotations(case, "by-alice")  # put back by the mutating webhook
    assert {k: kept.get(k) for k in SUBMITTER_ANNOTATIONS} == {
        k: stamped[k] for k in SUBMITTER_ANNOTATIONS
    }

    listed = case.gryvia("list", "jobs", "-n", case.namespace)
    assert listed.returncode == 0, listed.stderr
    header, *rows = listed.stdout.splitlines()
    assert header.split()[:2] == ["NAME", "USER"]
    assert {tuple(r.split()[:2]) for r in rows} == {
        ("by-admin", admin),
        ("by-alice", "alice@example.com"),
    }
    mine = case.gryvia("list", "jobs", "-n", case.namespace, "--mine", "-o", "name")
    assert mine.returncode == 0, mine.stderr
    assert mine.stdout.split() == ["gryviaaijob.gryvia.io/by-admin"]
    hers = case.gryvia(
        "list", "jobs", "-n", case.namespace, "-u", "alice@example.com", "-o", "name"
    )
    assert hers.stdout.split() == ["gryviaaijob.gryvia.io/by-alice"]
    queue = case.gryvia("queue", "-n", case.namespace, "-u", "alice@example.com", "-o", "json")
    assert [(i["name"], i["user"]) for i in json.loads(queue.stdout)["items"]] == [
        ("by-alice", "alice@example.com")
    ]


@pytest.fixture
def per_user_quota(case: CliCase) -> Iterator[str]:
    """A quota on the test's namespace: 4 GPUs for the team, 1 per user."""
    team = f"u{uuid.uuid4().hex[:6]}"
    case.sandbox.apply(
        {
            "apiVersion": "gryvia.io/v1alpha1",
            "kind": "GryviaQuota",
            "metadata": {"name": team},
            "spec": {
                "team": team,
                "namespaces": [case.namespace],
                "gpuQuota": {"maxGPUs": 4, "maxGPUsPerUser": 1},
            },
        }
    )
    yield team
    case.sandbox.kubectl_run("delete", "gryviaquota", team, "--wait=false", check=False)


def test_a_per_user_limit_holds_a_users_second_job_while_another_users_runs(
    case: CliCase, per_user_quota: str, tmp_path: Path
) -> None:
    _grant(case)
    ns, team = case.namespace, per_user_quota
    gate = tmp_path / "release"  # alice's first job holds its GPU until the test says so
    hold = f"while [ ! -e {gate} ]; do sleep 0.2; done"
    _create(case, sh_job("a1", gpus=1, gpu_type="L40", script=hold), *ALICE)
    wait_for(lambda: _phase(case, "a1") in ("Scheduling", "Running"), what="a1 admitted")
    _create(case, sh_job("a2", gpus=1, gpu_type="L40", script="echo a2 done"), *ALICE)
    _create(case, sh_job("b1", gpus=1, gpu_type="L40", script=hold), *BOB)
    queued = wait_for(lambda: _job_if(case, "a2", "Queued"), what="a2 Queued")
    expected = (
        f"user alice@example.com holds 1 of the 1 GPU one user may hold in team {team}, "
        "this job needs 1"
    )
    assert queued["status"]["message"] == "waiting for quota: " + expected
    wait_for(lambda: _phase(case, "b1") in ("Scheduling", "Running"), what="bob's job runs")
    pending = wait_for(
        lambda: (_job_if(case, "a2", "Queued") or {}).get("status", {}).get("pending"),
        what="a2's status.pending",
    )
    assert pending["kind"] == "Quota" and pending["message"] == expected
    assert pending["resource"] == f"quota {team}, user alice@example.com"
    shown = case.gryvia("queue", "-n", ns, "--mine")
    assert shown.returncode == 0 and "No jobs waiting" in shown.stderr  # the admin's: none
    theirs = json.loads(
        case.gryvia("queue", "-n", ns, "-u", "alice@example.com", "-o", "json").stdout
    )
    (item,) = theirs["items"]
    assert (item["name"], item["user"]) == ("a2", "alice@example.com")
    assert "user alice@example.com holds 1 of the 1 GPU" in item["reason"]
    gate.touch()  # alice's first job ends: her second starts
    wait_for(lambda: _phase(case, "a2") == "Succeeded", timeout=120, what="a2 runs after a1")


def _phase(case: CliCase, name: str) -> str:
    return str(_job(case, name).get("status", {}).get("phase") or "")


def _job(case: CliCase, name: str) -> dict[str, Any]:
    found: dict[str, Any] = kubectl_json(
        case.sandbox, "get", "gryviaaijob", "-n", case.namespace, name
    )
    return found


def _job_if(case: CliCase, name: str, phase: str) -> dict[str, Any] | None:
    job = _job(case, name)
    return job if job.get("status", {}).get("phase") == phase else None
