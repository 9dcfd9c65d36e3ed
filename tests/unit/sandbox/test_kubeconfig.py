"""Merging the sandbox context into the user's kubeconfig, and removing it again."""

from __future__ import annotations

from pathlib import Path

import yaml

from gryvia_cli.sandbox.kubeconfig import merge, remove, write_sandbox_kubeconfig


def _kwok_file(path: Path) -> Path:
    path.write_text(
        yaml.safe_dump(
            {
                "clusters": [{"name": "kwok-x", "cluster": {"server": "https://127.0.0.1:1"}}],
                "users": [{"name": "kwok-x", "user": {"client-certificate": "/a.crt"}}],
                "contexts": [
                    {"name": "kwok-x", "context": {"cluster": "kwok-x", "user": "kwok-x"}}
                ],
                "current-context": "kwok-x",
            }
        )
    )
    return path


def test_merge_keeps_other_contexts_and_reports_changes(tmp_path: Path) -> None:
    sandbox = tmp_path / "sandbox.kubeconfig"
    write_sandbox_kubeconfig(_kwok_file(tmp_path / "kwok.yaml"), sandbox, "gryvia-x")
    user = tmp_path / "config"
    user.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "current-context": "prod",
                "clusters": [{"name": "prod", "cluster": {"server": "https://prod"}}],
                "users": [{"name": "prod", "user": {"token": "t"}}],
                "contexts": [{"name": "prod", "context": {"cluster": "prod", "user": "prod"}}],
            }
        )
    )
    notes = merge(sandbox, user)
    assert notes == ["switched current-context from 'prod' to 'gryvia-x'"]
    data = yaml.safe_load(user.read_text())
    assert [c["name"] for c in data["contexts"]] == ["prod", "gryvia-x"]
    assert data["users"][0]["user"] == {"token": "t"}
    assert user.stat().st_mode & 0o777 == 0o600

    again = merge(sandbox, user, switch=False)
    assert "replaced context 'gryvia-x'" in " ".join(again)

    removed = remove("gryvia-x", user)
    assert "unset current-context 'gryvia-x'" in removed
    data = yaml.safe_load(user.read_text())
    assert [c["name"] for c in data["contexts"]] == ["prod"]


def test_merge_into_missing_file_creates_it(tmp_path: Path) -> None:
    sandbox = tmp_path / "s"
    write_sandbox_kubeconfig(_kwok_file(tmp_path / "k"), sandbox, "gryvia-y")
    target = tmp_path / "new" / "config"
    assert merge(sandbox, target) == ["set current-context to 'gryvia-y'"]
    assert yaml.safe_load(target.read_text())["current-context"] == "gryvia-y"
