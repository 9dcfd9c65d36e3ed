"""Generated CRDs: content, Helm wrapping, the command line and drift against the repository."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from gryvia_operator.api import AIJOB_KIND, ALL_KINDS, GPUSKU_KIND, USAGE_RECORD_KIND
from gryvia_operator.api.crd.generate import (
    CRDGenerationError,
    build_crd,
    build_crds,
    crd_filename,
    drift,
    main,
    render_crd,
)

ROOT = Path(__file__).resolve().parents[3]
CRD_DIR = ROOT / "charts" / "gryvia" / "templates" / "crds"
DOCS = ROOT / "docs" / "reference" / "crds.md"


def _version(crd: dict[str, Any]) -> dict[str, Any]:
    versions = crd["spec"]["versions"]
    assert len(versions) == 1
    return dict(versions[0])


def _schema(crd: dict[str, Any]) -> dict[str, Any]:
    return dict(_version(crd)["schema"]["openAPIV3Schema"])


def test_every_kind_has_a_crd() -> None:
    crds = build_crds()
    assert [c["spec"]["names"]["kind"] for c in crds] == [i.kind for i in ALL_KINDS]
    for crd, info in zip(crds, ALL_KINDS, strict=True):
        assert crd["apiVersion"] == "apiextensions.k8s.io/v1"
        assert crd["metadata"]["name"] == info.crd_name
        assert crd["spec"]["group"] == "gryvia.io"
        assert crd["spec"]["scope"] == info.scope
        assert crd["spec"]["names"]["categories"] == ["gryvia"]
        assert crd["spec"]["names"]["listKind"] == info.kind + "List"
        version = _version(crd)
        assert (version["name"], version["served"], version["storage"]) == ("v1alpha1", True, True)
        assert ("subresources" in version) is info.has_status


def test_aijob_printer_columns_short_names_and_status() -> None:
    crd = build_crd(AIJOB_KIND)
    assert crd["spec"]["names"]["shortNames"] == ["gaj"]
    columns = [
        (c["name"].upper(), c["jsonPath"]) for c in _version(crd)["additionalPrinterColumns"]
    ]
    assert columns == [
        ("TYPE", ".spec.type"),
        ("GPUS", ".spec.gpus"),
        ("GPU-TYPE", ".spec.gpuType"),
        ("PHASE", ".status.phase"),
        ("AGE", ".metadata.creationTimestamp"),
        ("NODES", ".spec.distributed.nodes"),
        ("PRIORITY", ".spec.priority"),
        ("TIMEOUT", ".spec.timeout"),
        ("MESSAGE", ".status.message"),
        ("WAITING-FOR", ".status.pending.kind"),
        ("LIKELY-START", ".status.estimatedStart.likely"),
    ]
    wide = [c["name"] for c in _version(crd)["additionalPrinterColumns"] if c.get("priority")]
    assert wide == [
        "Nodes",
        "Priority",
        "Timeout",
        "Message",
        "Waiting-For",
        "Likely-Start",
    ]  # shown by -o wide only
    assert _version(crd)["subresources"] == {"status": {}}
    assert _schema(crd)["required"] == ["spec"]


def test_aijob_schema_essentials() -> None:
    spec = _schema(build_crd(AIJOB_KIND))["properties"]["spec"]
    props = spec["properties"]
    assert spec["required"] == ["type", "gpus", "image"]
    assert props["type"]["enum"] == ["training", "inference", "fine-tuning", "evaluation"]
    assert props["gpus"]["minimum"] == 0
    assert props["network"]["enum"] == ["", "standard", "rdma", "sriov"]
    assert props["workloadKind"]["enum"] == ["job", "statefulset"]
    for quantity in (
        props["storageRequest"],
        props["resources"]["properties"]["requests"]["additionalProperties"],
    ):
        assert quantity["x-kubernetes-int-or-string"] is True
    assert props["storageRequest"]["default"] == "100Gi"
    assert props["affinity"]["x-kubernetes-preserve-unknown-fields"] is True
    assert props["volumes"]["items"]["x-kubernetes-preserve-unknown-fields"] is True
    assert "x-kubernetes-preserve-unknown-fields" not in props["tolerations"]["items"]
    conditions = _schema(build_crd(AIJOB_KIND))["properties"]["status"]["properties"]["conditions"]
    assert conditions["x-kubernetes-list-type"] == "map"
    assert conditions["x-kubernetes-list-map-keys"] == ["type"]


def _messages(node: dict[str, Any]) -> list[str]:
    return [r["message"] for r in node.get("x-kubernetes-validations", [])]


def test_aijob_cel_rules_name_their_fields() -> None:
    spec = _schema(build_crd(AIJOB_KIND))["properties"]["spec"]
    assert _messages(spec["properties"]["priority"]) == ["spec.priority must be between 0 and 100"]
    assert _messages(spec["properties"]["distributed"]) == [
        "distributed.nodes must be greater than 0 when distributed training is enabled",
        "distributed.elastic.minNodes must be between 1 and distributed.nodes",
    ]
    assert _messages(spec) == [
        "total GPU count (nodes x GPUs per node) seems unreasonably large; "
        "maximum supported is 1024",
        "spec.gpus, spec.gpuType and spec.distributed cannot change once the job exists "
        "(admission judged them); delete the job and submit it again",
    ]
    assert spec["x-kubernetes-validations"][0]["rule"].endswith("<= 1024")
    rules = [r for node in _walk_schema(spec) for r in node.get("x-kubernetes-validations", [])]
    assert rules and all(set(r) == {"rule", "message"} for r in rules)


def _walk_schema(node: dict[str, Any]) -> list[dict[str, Any]]:
    out = [node]
    for sub in node.get("properties", {}).values():
        out.extend(_walk_schema(sub))
    if "items" in node:
        out.extend(_walk_schema(node["items"]))
    return out


def test_usage_record_spec_is_immutable_once_final() -> None:
    spec = _schema(build_crd(USAGE_RECORD_KIND))["properties"]["spec"]
    (rule,) = spec["x-kubernetes-validations"]
    assert rule["rule"] == "!has(oldSelf.final) || !oldSelf.final || self == oldSelf"


def test_no_nulls_titles_or_refs_anywhere() -> None:
    text = "".join(render_crd(info, plain=True) for info in ALL_KINDS)
    for word in ("$ref", "title:", "nullable", "type: 'null'", "default: null", "$defs"):
        assert word not in text


def test_templated_file_is_wrapped_for_helm() -> None:
    text = render_crd(GPUSKU_KIND)
    lines = text.splitlines()
    assert lines[0] == "{{- if .Values.crds.enabled }}"
    assert lines[-1] == "{{- end }}"
    assert (
        "    {{- if .Values.crds.keep }}\n    helm.sh/resource-policy: keep\n    {{- end }}\n"
        in text
    )
    rendered_keep = _render(text, enabled=True, keep=True)
    rendered_drop = _render(text, enabled=True, keep=False)
    assert rendered_keep["metadata"]["annotations"]["helm.sh/resource-policy"] == "keep"
    assert "helm.sh/resource-policy" not in rendered_drop["metadata"]["annotations"]
    assert rendered_drop == build_crd(GPUSKU_KIND)
    assert _render(text, enabled=False, keep=True) is None


def _render(text: str, *, enabled: bool, keep: bool) -> Any:
    """A stand-in for Helm on these line-oriented templates: `{{- if X }}` / `{{- end }}` lines
    trim their own line, so a block is kept or dropped line by line."""
    values = {".Values.crds.enabled": enabled, ".Values.crds.keep": keep}
    stack: list[bool] = []
    kept: list[str] = []
    for line in text.splitlines():
        opening = re.fullmatch(r"\s*\{\{- if (\S+) \}\}", line)
        if opening:
            stack.append(values[opening.group(1)])
        elif re.fullmatch(r"\s*\{\{- end \}\}", line):
            stack.pop()
        elif all(stack):
            assert "{{" not in line
            kept.append(line)
    assert not stack
    return yaml.safe_load("\n".join(kept))


def test_plain_file_is_raw_yaml() -> None:
    text = render_crd(GPUSKU_KIND, plain=True)
    assert "{{" not in text
    assert yaml.safe_load(text) == build_crd(GPUSKU_KIND)


def test_helm_delimiters_in_a_schema_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    import gryvia_operator.api.crd.generate as crdgen

    original = crdgen.build_crd

    def with_braces(info: Any) -> dict[str, Any]:
        crd = original(info)
        crd["metadata"]["labels"]["x"] = "{{ oops }}"
        return crd

    monkeypatch.setattr(crdgen, "build_crd", with_braces)
    with pytest.raises(CRDGenerationError, match="Helm delimiters"):
        render_crd(GPUSKU_KIND)


def test_committed_crds_and_docs_match_the_generator() -> None:
    problems = drift(CRD_DIR, DOCS)
    assert problems == [], (
        "regenerate with: python -m gryvia_operator.api.crd.generate "
        "--out charts/gryvia/templates/crds --docs docs/reference/crds.md"
    )


def test_cli_writes_checks_and_detects_drift(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, docs = tmp_path / "crds", tmp_path / "crds.md"
    assert main(["--check", "--out", str(out), "--docs", str(docs)]) == 1
    assert main(["--out", str(out), "--docs", str(docs)]) == 0
    assert sorted(p.name for p in out.iterdir()) == sorted(crd_filename(i) for i in ALL_KINDS)
    assert main(["--check", "--out", str(out), "--docs", str(docs)]) == 0
    target = out / crd_filename(AIJOB_KIND)
    target.write_text(target.read_text() + "# edited\n")
    (out / "gryvia.io_gryviaolds.yaml").write_text("old: true\n")
    capsys.readouterr()
    assert main(["--check", "--out", str(out), "--docs", str(docs)]) == 1
    err = capsys.readouterr().err
    assert "gryvia.io_gryviaaijobs.yaml: differs" in err
    assert "gryvia.io_gryviaolds.yaml: stale" in err
    assert main(["--out", str(out)]) == 0
    assert not (out / "gryvia.io_gryviaolds.yaml").exists()
    assert main(["--check", "--out", str(out)]) == 0


def test_cli_plain_and_stdout(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--plain", "--out", str(tmp_path)]) == 0
    text = (tmp_path / crd_filename(AIJOB_KIND)).read_text()
    assert yaml.safe_load(text) == build_crd(AIJOB_KIND)
    assert main(["--check", "--plain", "--out", str(tmp_path)]) == 0
    assert main(["--check", "--out", str(tmp_path)]) == 1, "templated differs from plain"
    capsys.readouterr()
    assert main([]) == 0
    docs = list(yaml.safe_load_all(capsys.readouterr().out))
    assert docs == build_crds()
    with pytest.raises(SystemExit):
        main(["--check"])


def test_docs_cover_every_kind_field_and_omission() -> None:
    text = DOCS.read_text(encoding="utf-8")
    for info in ALL_KINDS:
        assert f"## {info.kind}" in text
        for note in info.omitted:
            assert note in text
    assert "| `distributed.gpusPerNode` | integer |" in text
    assert "spec.priority must be between 0 and 100" in text
