"""`gryvia queue` attributes each job to the tenant the operator bills it to, against the
sandbox's API server (objects created directly; no operator needed)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator

import pytest

from gryvia_operator.api.attribution import tenant_namespace
from gryvia_operator.api.names import API_VERSION, LABEL_TEAM
from tests.builders import make_job
from tests.conftest import SandboxHandle
from tests.integration.cli.conftest import Gryvia, apply, kubectl_json, manifest

pytestmark = [pytest.mark.integration, pytest.mark.sandbox]


@pytest.fixture
def tenants(sandbox: SandboxHandle, crds: None) -> Iterator[tuple[str, str]]:
    """Two fresh GryviaTenants (a, b) and the namespace of a; all removed after the test."""
    suffix = uuid.uuid4().hex[:6]
    names = (f"a{suffix}", f"b{suffix}")
    for name in names:
        apply(
            sandbox,
            "default",
            {
                "apiVersion": API_VERSION,
                "kind": "GryviaTenant",
                "metadata": {"name": name},
                "spec": {},
            },
        )
    owned = tenant_namespace(names[0])
    if sandbox.kubectl_run("get", "namespace", owned, check=False).returncode != 0:
        sandbox.kubectl_run("create", "namespace", owned, check=False)
    yield names
    for args in (*(("gryviatenant", n) for n in names), ("namespace", owned)):
        sandbox.kubectl_run("delete", *args, "--ignore-not-found", "--wait=false", check=False)


def test_queue_attributes_a_job_to_the_tenant_owning_its_namespace(
    sandbox: SandboxHandle, tenants: tuple[str, str], gryvia: Gryvia
) -> None:
    a, b = tenants
    ns = tenant_namespace(a)
    assert kubectl_json(sandbox, "get", "namespace", ns)["metadata"]["name"] == ns
    job = manifest(make_job("train").gpus(8).gpu_type("H100").command("sleep", "600").obj())
    job["spec"]["suspend"] = True
    job["metadata"]["labels"] = {**job["metadata"].get("labels", {}), LABEL_TEAM: b}
    apply(sandbox, ns, job)
    result = gryvia("queue", "-A", "-o", "json")
    assert result.returncode == 0, result.stderr
    items = {(i["namespace"], i["name"]): i for i in json.loads(result.stdout)["items"]}
    assert items[(ns, "train")]["tenant"] == a
    wide = gryvia("queue", "-n", ns, "-o", "wide")
    assert wide.returncode == 0, wide.stderr
    header, row = wide.stdout.splitlines()[:2]
    assert header.split()[:4] == ["#", "NAME", "USER", "TENANT"]
    cells = row.split()
    # the position counts waiting jobs of the type in every namespace (other tests' too)
    assert cells[0].isdigit() and cells[1] == "train" and cells[3] == a
