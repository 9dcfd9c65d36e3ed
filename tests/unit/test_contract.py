"""The contract between the cluster side and the client is defined once, in
`gryvia_operator/api/`: no label, annotation, finalizer or name prefix of it appears as a
string literal anywhere else in the product code."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gryvia_operator.api import names

ROOT = Path(__file__).resolve().parents[2]
PRODUCT = ("gryvia_cli", "gryvia_operator")
CONTRACT_HOME = ROOT / "gryvia_operator" / "api"

# A quote directly before the value: string literals, not prose in docstrings.
LITERALS = [
    re.compile(r"""["']gryvia\.io/[a-z]"""),  # labels, annotations, finalizers, apiVersions
    re.compile(r"""["']tenant-["'{]"""),  # the tenant namespace prefix
    re.compile(r"""["']usage-["'{]"""),  # the usage record prefix
    # child name suffixes (not the kubeconfig's certificate-authority-data, client-key-data ...)
    re.compile(r"""(?<!authority)(?<!certificate)(?<!key)-(headless|training|data)["']"""),
]


def _product_files() -> list[Path]:
    out = []
    for package in PRODUCT:
        for path in sorted((ROOT / package).rglob("*.py")):
            if CONTRACT_HOME not in path.parents:
                out.append(path)
    return out


def test_the_scan_sees_the_product_code() -> None:
    files = _product_files()
    assert len(files) > 100
    assert ROOT / "gryvia_cli" / "main.py" in files
    assert not any(CONTRACT_HOME in f.parents for f in files)


@pytest.mark.parametrize("pattern", LITERALS, ids=lambda p: p.pattern)
def test_no_contract_literal_outside_the_api_package(pattern: re.Pattern[str]) -> None:
    found = [
        f"{path.relative_to(ROOT)}:{lineno}: {line.strip()}"
        for path in _product_files()
        for lineno, line in enumerate(path.read_text().splitlines(), 1)
        if pattern.search(line)
    ]
    assert found == [], "define these in gryvia_operator/api/names.py and import them:\n" + (
        "\n".join(found)
    )


def test_the_patterns_catch_what_they_are_for() -> None:
    samples = [
        'x = "gryvia.io/team"',
        "ns.startswith('tenant-')",
        'f"tenant-{name}"',
        'f"{name}-headless"',
        'name = "usage-" + uid',
    ]
    for sample in samples:
        assert any(p.search(sample) for p in LITERALS), sample
    assert not any(p.search('"""label gryvia.io/team on the namespace"""') for p in LITERALS)


def test_child_names_come_from_the_contract() -> None:
    assert names.service_name("a") == "a-headless"
    assert names.statefulset_name("a") == "a-training"
    assert names.pvc_name("a") == "a-data"
    assert names.child_names("a") == {"a", "a-headless", "a-training"}
    assert names.usage_record_name("u1") == "usage-u1"
