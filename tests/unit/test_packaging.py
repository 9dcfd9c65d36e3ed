"""Packaging: `pip install` of the project prints no deprecation warnings."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_license_is_an_spdx_string_with_a_backend_that_reads_it() -> None:
    # setuptools warns (BuildBackendWarning) for a TOML-table `project.license`; the SPDX
    # string form needs setuptools >= 77.
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert data["project"]["license"] == "Apache-2.0"
    requires = data["build-system"]["requires"]
    assert "setuptools>=77" in requires
