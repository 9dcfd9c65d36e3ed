"""The krew manifest of `kubectl gryvia` (plugins/krew/gryvia.yaml): valid against the JSON
schema of krew's Plugin manifest, named after its file, pointing at the archive that
plugins/krew/archive.py builds (same sha256), and the pip entry point kubectl finds."""

from __future__ import annotations

import copy
import hashlib
import importlib.util
import tomllib
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
KREW = ROOT / "plugins" / "krew"


def _manifest() -> dict[str, Any]:
    return yaml.safe_load((KREW / "gryvia.yaml").read_text())


def _validator() -> jsonschema.Draft202012Validator:
    import json

    schema = json.loads((KREW / "plugin.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def test_manifest_is_a_valid_krew_plugin_named_after_its_file() -> None:
    manifest = _manifest()
    _validator().validate(manifest)
    assert manifest["metadata"]["name"] == (KREW / "gryvia.yaml").stem
    selectors = {
        (p["selector"]["matchLabels"]["os"], p["selector"]["matchLabels"]["arch"])
        for p in manifest["spec"]["platforms"]
    }
    assert {("linux", "amd64"), ("darwin", "arm64")} <= selectors


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (("spec", "version"), "0.1.0"),  # krew's semver needs the leading v
        (("spec", "shortDescription"), "two\nlines"),
        (("spec", "platforms"), []),
        (("spec", "platforms", 0, "sha256"), "ABC"),
        (("spec", "platforms", 0, "selector"), {"matchLabels": {"distro": "debian"}}),
        (("kind",), "Plugins"),
    ],
)
def test_the_schema_refuses_what_krew_refuses(path: tuple[Any, ...], value: Any) -> None:
    manifest = copy.deepcopy(_manifest())
    target: Any = manifest
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    assert list(_validator().iter_errors(manifest))


def test_every_platform_points_at_the_archive_the_repository_builds() -> None:
    spec = importlib.util.spec_from_file_location("krew_archive", KREW / "archive.py")
    assert spec and spec.loader
    archive = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(archive)
    digest = hashlib.sha256(archive.build()).hexdigest()
    for platform in _manifest()["spec"]["platforms"]:
        assert platform["sha256"] == digest, "run make krew-archive and update gryvia.yaml"
        assert platform["uri"].endswith(f"/{archive.VERSION}/{archive.NAME}")
        assert platform["bin"] == "kubectl-gryvia"
    assert _manifest()["spec"]["version"] == archive.VERSION


def test_pip_installs_the_kubectl_plugin_entry_point() -> None:
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["kubectl-gryvia"] == "gryvia_cli.main:kubectl_main"
