"""`list_readable`: an all-namespaces list for a user who may not list across the cluster reads
the context's namespace and every tenant's, skipping the ones refused."""

from __future__ import annotations

from typing import Any

import pytest

from gryvia_cli.errors import ForbiddenError
from gryvia_cli.kube import resources as r
from gryvia_cli.views.readable import list_readable, readable_namespaces


class Access:
    """Lists answer from `allowed` (namespace -> job names); None is the cluster-wide list."""

    def __init__(self, allowed: dict[str | None, list[str]], tenants: list[str] | None) -> None:
        self.allowed, self.tenants = allowed, tenants
        self.asked: list[str | None] = []

    def items(self, res: r.Resource, namespace: str | None = None) -> list[dict[str, Any]]:
        assert res is r.TENANT
        if self.tenants is None:
            raise ForbiddenError("forbidden: gryviatenants")
        return [{"metadata": {"name": t}} for t in self.tenants]

    def list_objects(self, res: r.Resource, namespace: str | None, **kw: Any) -> dict[str, Any]:
        self.asked.append(namespace)
        if namespace not in self.allowed:
            raise ForbiddenError(f"forbidden: jobs in {namespace}")
        names = self.allowed[namespace]
        return {"items": [{"metadata": {"name": n, "namespace": namespace}} for n in names]}


def test_a_cluster_wide_list_is_used_when_allowed() -> None:
    access = Access({None: ["a", "b"]}, tenants=["x"])
    data, read = list_readable(access, r.AIJOB, "default")
    assert read is None and [i["metadata"]["name"] for i in data["items"]] == ["a", "b"]
    assert access.asked == [None]


def test_a_member_sees_the_tenant_namespaces_they_may_read(
    capsys: pytest.CaptureFixture[str],
) -> None:
    access = Access({"tenant-nlp": ["bob-job"], "default": []}, tenants=["vision", "nlp"])
    data, read = list_readable(access, r.AIJOB, "default")
    assert read == ["default", "tenant-nlp"]
    assert [i["metadata"]["name"] for i in data["items"]] == ["bob-job"]
    assert data["kind"] == "GryviaAIJobList"
    warning = capsys.readouterr().err
    assert "you may not list jobs in all namespaces" in warning
    assert "default, tenant-nlp" in warning and "tenant-vision" not in warning


def test_without_the_tenant_directory_only_the_context_namespace_is_tried() -> None:
    assert readable_namespaces(Access({}, tenants=None), "team-a") == ["team-a"]
    assert readable_namespaces(Access({}, tenants=["a"]), "tenant-a") == ["tenant-a"]


def test_nothing_readable_is_the_original_refusal() -> None:
    with pytest.raises(ForbiddenError, match="jobs in None"):
        list_readable(Access({}, tenants=["vision"]), r.AIJOB, "default")
