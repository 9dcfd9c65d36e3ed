"""Unit tests of the CLI never read the developer's config, kubeconfig or colours."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from gryvia_cli import output


@pytest.fixture(autouse=True)
def isolated_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A private HOME, config folder and kubeconfig path; no GRYVIA_* or colour variables."""
    import os

    for key in list(os.environ):
        if key.startswith("GRYVIA_") or key in ("KUBECONFIG", "NO_COLOR", "CLICOLOR_FORCE"):
            monkeypatch.delenv(key, raising=False)
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GRYVIA_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "no-kubeconfig"))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    output.configure()
    yield home
    output.configure()
