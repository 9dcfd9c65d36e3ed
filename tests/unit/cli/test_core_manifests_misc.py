"""Manifest splitting and validation findings, catalog rows, events (pure)."""

from __future__ import annotations

import pytest

from gryvia_cli.core.catalog import sku_rows, sku_summary
from gryvia_cli.core.events import event_rows, since
from gryvia_cli.core.manifests import check_text, split_documents
from gryvia_cli.core.timefmt import parse_time
from gryvia_cli.errors import InvalidInputError
from tests.unit.cli.helpers import NOW, ago, event

GOOD = """\
apiVersion: gryvia.io/v1alpha1
kind: GryviaAIJob
metadata:
  name: good
spec: {type: training, gpus: 1, image: busybox}
"""
BAD = """\
---
# comment only
---
apiVersion: gryvia.io/v1alpha1
kind: GryviaAIJob
metadata:
  name: Bad_Name
spec:
  type: training
  gpus: -1
  image: busybox
  priority: 500
---
apiVersion: v1
kind: ConfigMap
metadata: {name: cm}
"""


def test_split_keeps_document_numbers_and_lines() -> None:
    docs = split_documents(GOOD + "---\n" + GOOD.replace("good", "two"), "f.yaml")
    assert [(d.index, d.line) for d in docs] == [(1, 1), (2, 7)]


def test_yaml_errors_name_file_line_and_column() -> None:
    with pytest.raises(InvalidInputError) as err:
        split_documents("a: [1, 2\nb: 3\n", "broken.yaml")
    assert "broken.yaml: line" in err.value.message and "column" in err.value.message


def test_findings_name_file_document_object_and_field() -> None:
    reports = check_text(BAD, "jobs.yaml")
    assert len(reports) == 2
    job, configmap = reports
    fields = {f.field for f in job.errors}
    assert {"metadata.name", "spec.gpus", "spec.priority"} <= fields
    gpus = next(f for f in job.errors if f.field == "spec.gpus")
    assert gpus.render() == (
        "jobs.yaml (document 2, GryviaAIJob/Bad_Name, line 10): "
        "spec.gpus must not be negative, got -1"
    )  # the field's line; the document starts on line 4
    assert job.document.line == 4
    assert job.document.line_of("spec.priority") == 12
    assert job.document.line_of("spec.nope.deeper") == 8  # its nearest parent, spec
    assert job.document.line_of("") == 4
    assert configmap.skipped == "not a Gryvia object" and not configmap.errors
    assert job.as_dict()["valid"] is False and job.as_dict()["document"] == 2


def test_unknown_gryvia_kind_and_non_mapping_are_errors() -> None:
    reports = check_text(
        "apiVersion: gryvia.io/v1alpha1\nkind: GryviaThing\n---\n- a list\n", "x.yaml"
    )
    assert reports[0].errors[0].field == "kind"
    assert reports[1].errors


def test_catalog_rows_apply_defaults() -> None:
    skus = [
        {
            "metadata": {"name": "h100"},
            "spec": {"gpuType": "H100", "hourlyRate": 8, "spotDiscount": 60},
        },
        {
            "metadata": {"name": "a100"},
            "spec": {
                "gpuType": "A100-80G",
                "hourlyRate": 4.5,
                "currency": "EUR",
                "enabled": False,
                "gpusPerUnit": 8,
            },
        },
    ]
    rows = sku_rows(skus)
    assert [r[0] for r in rows] == ["a100", "h100"]
    assert rows[0][2:5] == [8, "4.50 EUR", "-"] and str(rows[0][5]) == "no"
    assert rows[1][2:5] == [1, "8.00 USD", "60%"] and str(rows[1][5]) == "yes"
    assert sku_summary(skus) == "Total: 2 SKUs (1 enabled)"


def test_event_rows_sorted_counted_and_trimmed() -> None:
    events = [event("p", "newer", seconds_ago=5), event("p", "x" * 300, seconds_ago=60)]
    events[0]["count"] = 3
    rows = event_rows(events, NOW)
    assert rows[0][0] == "60s" and rows[1][0] == "5s (x3)"
    assert len(rows[0][4]) == 160 and rows[0][3] == "pod/p"
    assert since(events, None) == events
    assert since(events, parse_time(ago(30))) == [events[0]]


def test_fields_inside_lists_have_their_own_lines() -> None:
    text = "spec:\n  env:\n  - name: A\n    value: '1'\n  - name: B\n"
    (doc,) = split_documents(text, "x.yaml")
    assert doc.line_of("spec.env[1].name") == 5
    assert doc.line_of("spec.env[0].value") == 4
    assert doc.line_of("spec.env") == 2
