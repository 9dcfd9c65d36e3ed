"""The sandbox's OCI registry (`gryvia_cli/sandbox/registry.py`): its configuration keeps it on
loopback with its storage in the sandbox's folder, and a missing server or image is said, not
guessed."""

from __future__ import annotations

from pathlib import Path

import pytest

from gryvia_cli.sandbox import registry


def test_the_registry_listens_on_loopback_and_stores_in_the_sandbox(tmp_path: Path) -> None:
    conf = registry.config(tmp_path / "data", 5123)
    assert conf["http"] == {"addr": "127.0.0.1:5123"}
    assert conf["storage"]["filesystem"] == {"rootdirectory": str(tmp_path / "data")}
    assert conf["storage"]["delete"] == {"enabled": True}


def test_a_missing_server_names_the_make_target(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry, "binary", lambda: None)
    assert "make registry-bin" in registry.missing()


def test_no_podman_or_no_image_pushes_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry.shutil, "which", lambda _: None)
    assert registry.push_image("localhost/gryvia-operator:0.1.0", "127.0.0.1:1", "0.1.0") is None
