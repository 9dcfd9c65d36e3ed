"""Who submitted a job: the webhooks' stamp and refusals, and the per-user GPU limit."""

from __future__ import annotations

import base64
import datetime as dt
import json
from typing import Any

from gryvia_operator.api import GryviaAIJob, GryviaQuota
from gryvia_operator.api import submitter as sub
from gryvia_operator.api.jobfacts import job_facts
from gryvia_operator.api.names import ANNOTATION_SUBMITTER, ANNOTATION_SUBMITTER_GROUPS
from gryvia_operator.reconcile.pending import WaitContext, wait_status
from gryvia_operator.reconcile.quotas import JobView, decide, job_view, plan, quota_state
from gryvia_operator.webhook.configuration import build_mutating_configuration, mutating_name
from gryvia_operator.webhook.review import (
    PolicyContext,
    admit_aijob,
    review_aijob,
    review_aijob_mutation,
)
from tests.builders import gpu_node, make_job

ALICE = {"username": "alice@example.com", "groups": ["vision", "system:authenticated"]}
BOB = {"username": "bob@example.com", "groups": ["nlp"]}
STAMPED = {
    ANNOTATION_SUBMITTER: "alice@example.com",
    ANNOTATION_SUBMITTER_GROUPS: "vision,system:authenticated",
}
T0 = dt.datetime(2026, 12, 1, 14, 0, tzinfo=dt.UTC)


def _review(obj: Any, operation: str = "CREATE", old: Any = None, user: Any = None) -> Any:
    request: dict[str, Any] = {"uid": "u1", "operation": operation, "object": obj}
    if old is not None:
        request["oldObject"] = old
    if user is not None:
        request["userInfo"] = user
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}


def _patched(answer: dict[str, Any], obj: dict[str, Any]) -> dict[str, Any]:
    """`obj` with the answer's JSONPatch applied (only the `add` operations it emits)."""
    response = answer["response"]
    assert response["patchType"] == "JSONPatch"
    out = json.loads(json.dumps(obj))
    for op in json.loads(base64.b64decode(response["patch"])):
        assert op["op"] == "add"
        *parents, last = [
            p.replace("~1", "/").replace("~0", "~") for p in op["path"].split("/")[1:]
        ]
        target = out
        for part in parents:
            target = target[part]
        target[last] = op["value"]
    return out


def test_the_mutating_webhook_stamps_the_requesting_user_and_groups() -> None:
    bare = make_job("a").obj()
    bare["metadata"].pop("annotations", None)
    answer = review_aijob_mutation(_review(bare, user=ALICE))
    assert answer["response"]["allowed"] is True
    assert _patched(answer, bare)["metadata"]["annotations"] == STAMPED
    other = make_job("b").annotate("team", "x").obj()
    stamped = _patched(review_aijob_mutation(_review(other, user=ALICE)), other)
    assert stamped["metadata"]["annotations"] == {"team": "x", **STAMPED}


def test_a_forged_submitter_is_refused_naming_the_annotation() -> None:
    forged = make_job("a").annotate(ANNOTATION_SUBMITTER, "bob@example.com").obj()
    for review in (review_aijob_mutation, review_aijob):
        response = review(_review(forged, user=ALICE))["response"]
        assert response["allowed"] is False
        message = response["status"]["message"]
        assert "annotation gryvia.io/submitted-by is set by the admission webhook" in message
        assert "'bob@example.com'" in message
    groups = make_job("a").annotate(ANNOTATION_SUBMITTER_GROUPS, "system:masters").obj()
    assert review_aijob_mutation(_review(groups, user=ALICE))["response"]["allowed"] is False
    own = make_job("a").obj()
    own["metadata"]["annotations"] = dict(STAMPED)
    answer = review_aijob_mutation(_review(own, user=ALICE))["response"]
    assert answer["allowed"] is True and "patch" not in answer
    assert review_aijob(_review(own, user=ALICE))["response"]["allowed"] is True


def test_any_change_of_the_submitter_on_update_is_refused() -> None:
    old = make_job("a").obj()
    old["metadata"]["annotations"] = dict(STAMPED)
    for change in (
        {ANNOTATION_SUBMITTER: "bob@example.com"},
        {ANNOTATION_SUBMITTER_GROUPS: "gryvia-admins"},
    ):
        new = json.loads(json.dumps(old))
        new["metadata"]["annotations"].update(change)
        verdict = admit_aijob({"operation": "UPDATE", "object": new, "oldObject": old})
        assert not verdict.allowed
        assert "records who submitted the job and cannot be changed" in verdict.message
    removed = json.loads(json.dumps(old))
    del removed["metadata"]["annotations"][ANNOTATION_SUBMITTER]
    assert not admit_aijob({"operation": "UPDATE", "object": removed, "oldObject": old}).allowed
    unattributed = make_job("a").obj()
    added = make_job("a").annotate(ANNOTATION_SUBMITTER, "alice@example.com").obj()
    assert not admit_aijob(
        {"operation": "UPDATE", "object": added, "oldObject": unattributed}
    ).allowed
    cancelled = json.loads(json.dumps(old))
    cancelled["metadata"]["annotations"]["gryvia.io/cancel"] = "true"
    assert admit_aijob({"operation": "UPDATE", "object": cancelled, "oldObject": old}).allowed
    assert review_aijob_mutation(_review(old, "UPDATE", old, BOB))["response"] == {
        "uid": "u1",
        "allowed": True,
    }


def test_an_update_that_leaves_the_submitter_out_gets_it_back() -> None:
    old = make_job("a").annotate("x", "y").obj()
    old["metadata"]["annotations"].update(STAMPED)
    bare = make_job("a").obj()
    bare["metadata"].pop("annotations", None)  # a manifest without any annotation
    for replaced in (bare, make_job("a").annotate("x", "z").obj()):
        answer = review_aijob_mutation(_review(replaced, "UPDATE", old, BOB))
        restored = _patched(answer, replaced)
        assert {k: restored["metadata"]["annotations"][k] for k in STAMPED} == STAMPED
        request = {"operation": "UPDATE", "object": restored, "oldObject": old}
        assert admit_aijob(request).allowed
    changed = json.loads(json.dumps(old))
    changed["metadata"]["annotations"][ANNOTATION_SUBMITTER] = "bob@example.com"
    answer = review_aijob_mutation(_review(changed, "UPDATE", old, BOB))["response"]
    assert answer["allowed"] is True and "patch" not in answer  # the validating one refuses


def test_no_user_no_stamp_and_pointer_escaping() -> None:
    assert sub.stamp({}) == {}
    assert sub.stamp_patch(make_job().obj(), None) == []
    obj = make_job().annotate("x", "y").obj()
    paths = [op["path"] for op in sub.stamp_patch(obj, BOB)]
    assert paths == [
        "/metadata/annotations/gryvia.io~1submitted-by",
        "/metadata/annotations/gryvia.io~1submitted-by-groups",
    ]
    assert sub.submitter_of({"metadata": {"annotations": {ANNOTATION_SUBMITTER: 3}}}) == ""


def test_the_mutating_configuration() -> None:
    body = build_mutating_configuration("https://127.0.0.1:9443/", b"PEM", name="m")
    assert body["kind"] == "MutatingWebhookConfiguration"
    (hook,) = body["webhooks"]
    assert (
        hook["clientConfig"]["url"]
        == "https://127.0.0.1:9443/mutate-gryvia-io-v1alpha1-gryviaaijob"
    )
    assert hook["rules"][0]["operations"] == ["CREATE", "UPDATE"]
    assert hook["reinvocationPolicy"] == "Never"
    assert mutating_name("gryvia-validating") == "gryvia-mutating"
    assert mutating_name("gryvia-validating-test") == "gryvia-mutating-test"
    assert mutating_name("hooks") == "hooks-mutating"


# -- the per-user GPU limit -----------------------------------------------------------------


def _quota(max_gpus: int = 8, per_user: int = 2) -> GryviaQuota:
    return GryviaQuota.model_validate(
        {
            "metadata": {"name": "vision"},
            "spec": {
                "team": "vision",
                "namespaces": ["ml"],
                "gpuQuota": {"maxGPUs": max_gpus, "maxGPUsPerUser": per_user},
            },
        }
    )


def _view(name: str, user: str, gpus: int = 1, phase: str = "Pending", minute: int = 0) -> JobView:
    created = T0 + dt.timedelta(minutes=minute)
    return JobView("ml", name, created, 0, phase, gpus, "H100", user=user)


def test_a_user_over_the_limit_waits_while_another_users_job_starts() -> None:
    jobs = [
        _view("a1", "alice", 2, "Running"),
        _view("a2", "alice", 1, minute=1),
        _view("a3", "alice", 1, minute=2),
        _view("b1", "bob", 2, minute=3),
        _view("anon", "", 4, minute=4),
    ]
    decisions = plan(quota_state(_quota(), jobs))
    assert decisions["ml/a2"].verdict == "queue"
    assert decisions["ml/a2"].message == (
        "waiting for quota: user alice holds 2 of the 2 GPUs one user may hold in team "
        "vision, this job needs 1"
    )
    assert decisions["ml/a3"].verdict == "queue"
    assert "behind earlier jobs of user alice" in decisions["ml/a3"].message
    assert decisions["ml/b1"].verdict == "allow"
    assert decisions["ml/anon"].verdict == "allow"  # no submitter: not counted per user
    done = [_view("a1", "alice", 2, "Succeeded"), _view("a2", "alice", 1, minute=1)]
    assert decide(done[1], [quota_state(_quota(), done)]).verdict == "allow"


def test_a_job_larger_than_the_per_user_limit_never_fits() -> None:
    big = _view("big", "alice", 3)
    decision = decide(big, [quota_state(_quota(), [big])])
    assert (decision.verdict, decision.reason) == ("reject", "QuotaExceeded")
    assert "more than the 2 GPUs one user may hold at once in team vision" in decision.message
    assert "(user alice)" in decision.message
    policy = PolicyContext(quotas=(_quota(),))
    obj = make_job("big").gpus(3).gpu_type("H100").obj()
    obj["metadata"]["annotations"] = dict(STAMPED)
    verdict = admit_aijob({"operation": "CREATE", "object": obj, "userInfo": ALICE}, None, policy)
    assert not verdict.allowed
    assert "3 GPUs exceeds the per-user limit of 2 (user alice@example.com)" in verdict.message


def _body(name: str, user: str, gpus: int, *, running: bool = False, minute: int = 0) -> Any:
    builder = make_job(name).gpus(gpus).gpu_type("H100").annotate(ANNOTATION_SUBMITTER, user)
    if running:
        builder = builder.phase("Running").timeout("1h")
        builder = builder.status(startTime="2026-12-01T13:30:00Z", nodesAllocated=["h1"])
    body = builder.obj()
    body["metadata"]["creationTimestamp"] = (T0 + dt.timedelta(minutes=minute)).strftime(
        "%Y-%m-%dT%H:%M:%SZ"
    )
    return body


def test_the_pending_reason_names_the_user() -> None:
    mine = _body("a1", "alice", 2, running=True, minute=-40)
    waiting = _body("a2", "alice", 1, minute=-1)
    other = _body("b1", "bob", 2, running=True, minute=-30)
    assert job_facts(waiting).user == "alice" and job_view(waiting).user == "alice"
    state = quota_state(_quota(), [job_view(b) for b in (mine, waiting, other)])
    ctx = WaitContext(jobs=tuple(job_facts(b) for b in (mine, waiting, other)), quotas=(state,))
    nodes = [gpu_node("h1", "H100")]
    out = wait_status(GryviaAIJob.model_validate(waiting), {"phase": "Queued"}, nodes, [], ctx, T0)
    pending = out["pending"]
    assert pending["kind"] == "Quota"
    assert pending["resource"] == "quota vision, user alice"
    assert pending["message"] == (
        "user alice holds 2 of the 2 GPUs one user may hold in team vision, this job needs 1"
    )
    assert pending["holders"] == [
        {"name": "a1", "gpus": 2, "expectedEnd": "2026-12-01T14:30:00Z", "basis": "timeout"}
    ]
    assert out["estimatedStart"]["likely"] == "2026-12-01T14:30:00Z"
