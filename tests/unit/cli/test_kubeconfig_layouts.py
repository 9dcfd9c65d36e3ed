"""`KUBECONFIG=a:b:c` layouts: `gryvia config` resolves each exactly as the real
`kubectl config view --minify` (the built binary) does."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.unit.cli.helpers import run

Layout = Callable[[Path], list[str]]


@pytest.fixture(scope="module")
def kubectl() -> Path:
    """The kubectl the sandbox uses (resolved before the per-test HOME is set)."""
    from gryvia_cli.sandbox import binaries

    return binaries.path_of("kubectl")


def write(path: Path, contexts: dict[str, str], current: str | None, **extra: Any) -> str:
    """A kubeconfig whose contexts map to clusters `<file>-<cluster>` named after the file,
    so the answer shows which file each entry came from; `current` None omits the key."""
    data: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {"name": c, "cluster": {"server": f"https://{path.name}-{c}:6443"}}
            for c in contexts.values()
        ],
        "users": [{"name": f"user-{path.name}", "user": {"token": "t"}}],
        "contexts": [
            {
                "name": name,
                "context": {"cluster": c, "user": f"user-{path.name}", "namespace": path.name},
            }
            for name, c in contexts.items()
        ],
        **extra,
    }
    if current is not None:
        data["current-context"] = current
    path.write_text(yaml.safe_dump(data))
    return str(path)


def missing_file(d: Path) -> list[str]:
    return [str(d / "gone"), write(d / "a", {"prod": "p"}, "prod"), str(d / "gone2")]


def empty_current_contexts(d: Path) -> list[str]:
    # kubectl writes `current-context: ""` into files it creates: they must not hide `c`'s
    return [
        write(d / "a", {"dev": "d"}, ""),
        write(d / "b", {"x": "x"}, ""),
        write(d / "c", {"prod": "p"}, "prod"),
    ]


def context_defined_twice(d: Path) -> list[str]:
    return [
        write(d / "a", {"prod": "first"}, "prod"),
        write(d / "b", {"prod": "second", "first": "first"}, ""),
    ]


def two_current_contexts(d: Path) -> list[str]:
    return [write(d / "a", {"dev": "d"}, "dev"), write(d / "b", {"prod": "p"}, "prod")]


def later_file_defines_the_current(d: Path) -> list[str]:
    return [write(d / "a", {"dev": "d"}, "prod"), write(d / "b", {"prod": "p"}, None)]


def empty_file_first(d: Path) -> list[str]:
    (d / "empty").write_text("")
    return [str(d / "empty"), write(d / "a", {"dev": "d"}, "dev")]


LAYOUTS: dict[str, tuple[Layout, tuple[str, str, str] | None]] = {
    "missing file": (missing_file, ("prod", "https://a-p:6443", "a")),
    "empty current-context values": (empty_current_contexts, ("prod", "https://c-p:6443", "c")),
    "context defined twice": (context_defined_twice, ("prod", "https://a-first:6443", "a")),
    "two current-contexts": (two_current_contexts, ("dev", "https://a-d:6443", "a")),
    "current context in a later file": (
        later_file_defines_the_current,
        ("prod", "https://b-p:6443", "b"),
    ),
    "empty file first": (empty_file_first, ("dev", "https://a-d:6443", "a")),
    "no current context at all": (
        lambda d: [write(d / "a", {"dev": "d"}, ""), write(d / "b", {"x": "x"}, None)],
        None,
    ),
}


def kubectl_answer(kubectl: Path, files: list[str]) -> tuple[str, str, str] | None:
    """(current context, server, namespace) from `kubectl config view --minify`; None when
    kubectl refuses (no current context)."""
    env = {**os.environ, "KUBECONFIG": os.pathsep.join(files)}
    done = subprocess.run(
        [str(kubectl), "config", "view", "--minify", "-o", "json"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        return None
    view = json.loads(done.stdout)
    ctx = view["contexts"][0]["context"]
    return view["current-context"], view["clusters"][0]["cluster"]["server"], ctx["namespace"]


def gryvia_answer(files: list[str]) -> tuple[str, str, str] | None:
    result = run(["config", "-o", "json"], KUBECONFIG=os.pathsep.join(files))
    if result.exit_code != 0:
        return None
    data = json.loads(result.stdout)
    return data["context"], data["server"], data["namespace"]


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_layout_resolves_like_kubectl(layout: str, kubectl: Path, tmp_path: Path) -> None:
    build, expected = LAYOUTS[layout]
    files = build(tmp_path)
    assert kubectl_answer(kubectl, files) == expected
    assert gryvia_answer(files) == expected


def test_no_current_context_names_the_contexts(tmp_path: Path) -> None:
    files = [write(tmp_path / "a", {"dev": "d"}, ""), write(tmp_path / "b", {"x": "x"}, "")]
    result = run(["config"], KUBECONFIG=os.pathsep.join(files))
    assert result.exit_code == 1
    assert "has no current context" in result.output and "dev, x" in result.output


def test_a_name_listed_twice_in_one_file_is_refused_like_kubectl(
    kubectl: Path, tmp_path: Path
) -> None:
    path = tmp_path / "dup"
    write(path, {"dev": "d"}, "dev")
    data = yaml.safe_load(path.read_text())
    data["clusters"].append({"name": "d", "cluster": {"server": "https://other:6443"}})
    path.write_text(yaml.safe_dump(data))
    assert kubectl_answer(kubectl, [str(path)]) is None
    result = run(["config"], KUBECONFIG=str(path))
    assert result.exit_code == 1
    assert f'kubeconfig {path} lists cluster "d" twice' in result.output


def test_context_names_are_the_merged_ones(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from gryvia_cli.kube.config import context_names

    files = context_defined_twice(tmp_path)
    (tmp_path / "empty").write_text("")
    monkeypatch.setenv("KUBECONFIG", os.pathsep.join([str(tmp_path / "empty"), *files]))
    assert context_names(None) == ["first", "prod"]


def test_context_flag_over_empty_current_contexts(kubectl: Path, tmp_path: Path) -> None:
    files = [write(tmp_path / "a", {"dev": "d"}, ""), write(tmp_path / "b", {"prod": "p"}, "")]
    env = {**os.environ, "KUBECONFIG": os.pathsep.join(files)}
    view = subprocess.run(
        [str(kubectl), "config", "view", "--minify", "--context", "prod", "-o", "json"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    server = json.loads(view.stdout)["clusters"][0]["cluster"]["server"]
    result = run(["--context", "prod", "config", "-o", "json"], KUBECONFIG=env["KUBECONFIG"])
    assert result.exit_code == 0, result.output
    assert (json.loads(result.stdout)["server"], server) == ("https://b-p:6443",) * 2
