"""`gryvia apply -f`: every document checked before anything is written, each applied in its
own namespace, other APIs skipped, `--dry-run` passed to the API server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from typer.testing import CliRunner, Result

from gryvia_cli.cli.session import Session
from gryvia_cli.kube import resources as r
from tests.unit.cli.fakes import FakeAccess

ROOT = Path(__file__).resolve().parents[3]


class Recording(FakeAccess):
    """FakeAccess that remembers the keyword arguments of each apply."""

    def __init__(self, *objects: dict[str, Any]) -> None:
        super().__init__(*objects)
        self.applies: list[dict[str, Any]] = []

    def apply(
        self, res: r.Resource, body: dict[str, Any], namespace: str | None = None, **kw: Any
    ) -> dict[str, Any]:
        self.applies.append({"kind": body["kind"], "namespace": namespace, **kw})
        return super().apply(res, body, namespace, **kw)


def run(args: list[str], fake: FakeAccess, stdin: str | None = None) -> Result:
    from gryvia_cli.main import app

    return CliRunner().invoke(app, args, obj=Session(access_factory=lambda _s: fake), input=stdin)


def _docs(*names: str) -> str:
    return "".join((ROOT / "docs" / "examples" / n).read_text() + "\n---\n" for n in names)


def test_apply_writes_each_kind_in_its_namespace() -> None:
    fake = Recording()
    text = (
        _docs("idlepolicy.yaml", "gpusku.yaml")
        + "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"
    )
    result = run(["apply", "-f", "-"], fake, stdin=text)
    assert result.exit_code == 0, result.output
    assert [(a["kind"], a["namespace"]) for a in fake.applies] == [
        ("GryviaIdlePolicy", "tenant-vision"),
        *[("GryviaGpuSku", None)] * 3,  # the example holds three SKUs
    ]
    assert "gryviaidlepolicy.gryvia.io/idle-gpus applied in tenant-vision" in result.output
    assert "skipped" in result.output and fake.get(r.IDLE_POLICY, "idle-gpus", "tenant-vision")


def test_nothing_is_applied_when_one_document_is_invalid() -> None:
    fake = Recording()
    bad = yaml.safe_load((ROOT / "docs" / "examples" / "idlepolicy.yaml").read_text())
    bad["spec"]["windowSeconds"] = 5
    text = _docs("gpusku.yaml") + yaml.safe_dump(bad)
    result = run(["apply", "-f", "-"], fake, stdin=text)
    assert result.exit_code == 1 and "spec.windowSeconds" in result.output
    assert "nothing was applied" in result.output and fake.applies == []


def test_dry_run_and_a_conflicting_namespace() -> None:
    fake = Recording()
    text = _docs("idlepolicy.yaml")
    assert run(["apply", "-f", "-", "--dry-run"], fake, stdin=text).exit_code == 0
    assert fake.applies[0]["dry_run"] is True
    conflict = run(["apply", "-f", "-", "-n", "other"], fake, stdin=text)
    assert (
        conflict.exit_code == 2 and "is for namespace tenant-vision, not other" in conflict.output
    )


def test_a_namespace_conflict_in_a_later_document_writes_nothing() -> None:
    fake = Recording()
    text = _docs("gpusku.yaml", "idlepolicy.yaml")
    result = run(["apply", "-f", "-", "-n", "other"], fake, stdin=text)
    assert result.exit_code == 2 and fake.applies == []
