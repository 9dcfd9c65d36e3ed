"""`helm uninstall` leaves no job pod held by the save-log finalizer (issue #38, failure 6):
a pre-delete hook Job strips it from every job pod with the operator's own account, before
the operator and its RBAC go."""

from __future__ import annotations

from tests.unit.test_chart import NAMESPACE, find, grants, one, render


def test_a_pre_delete_hook_releases_the_save_log_finalizers() -> None:
    objs = render()
    job = one(objs, "Job", "gryvia-release-finalizers")
    annotations = job["metadata"]["annotations"]
    assert annotations["helm.sh/hook"] == "pre-delete"
    assert "hook-succeeded" in annotations["helm.sh/hook-delete-policy"]
    assert job["metadata"]["namespace"] == NAMESPACE
    assert job["spec"]["activeDeadlineSeconds"] <= 300
    pod = job["spec"]["template"]["spec"]
    deployment = one(objs, "Deployment", "gryvia-operator")["spec"]["template"]["spec"]
    assert pod["serviceAccountName"] == deployment["serviceAccountName"]
    assert pod["restartPolicy"] == "Never"
    [box] = pod["containers"]
    assert box["image"] == deployment["containers"][0]["image"]
    shell, flag, script, argv0 = box["command"]
    assert (shell, flag, argv0) == ("sh", "-c", "release-finalizers")
    # the module's own exit status never fails the hook (that would stop the uninstall)
    assert script.startswith('python -m gryvia_operator.release_finalizers "$@" ||')
    assert "args" not in box
    assert box["securityContext"]["readOnlyRootFilesystem"] is True
    # the account the hook runs as may list and patch pods everywhere
    role = one(objs, "ClusterRole", "gryvia-operator")
    assert {("", "pods", "list", ""), ("", "pods", "patch", "")} <= grants(role)


def test_the_hook_follows_the_watched_namespaces_and_can_be_turned_off() -> None:
    objs = render("--set", "operator.watchNamespaces={ml,cv}")
    [box] = one(objs, "Job")["spec"]["template"]["spec"]["containers"]
    assert box["args"] == ["--namespace=ml", "--namespace=cv"]
    off = render("--set", "operator.releaseFinalizersOnUninstall=false")
    assert find(off, "Job") == []
