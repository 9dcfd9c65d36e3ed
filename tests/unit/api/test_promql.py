"""Reading dcgm-exporter's series back from Prometheus: the query and the vector it answers
give the same readings as the exporter's own text (`api.dcgm.parse`)."""

from __future__ import annotations

from typing import Any

import pytest

from gryvia_operator.api.dcgm import (
    FIELD_ENGINE_ACTIVE,
    FIELD_FB_USED,
    FIELDS,
    GpuReading,
    parse,
    render,
)
from gryvia_operator.api.promql import exporter_query, readings_from_response

READINGS = [
    GpuReading(
        hostname="gpu-node-1",
        gpu=g,
        uuid=f"GPU-{g}",
        model="NVIDIA L40",
        namespace="team-a",
        pod=f"train-{g}",
        container="main",
        values={FIELD_ENGINE_ACTIVE: 0.97 - g * 0.9, FIELD_FB_USED: 1024.0},
    )
    for g in range(2)
]


def _vector(readings: list[GpuReading]) -> list[dict[str, Any]]:
    """What Prometheus answers for the scraped series (honor_labels: the exporter's labels,
    plus the scrape's own `instance`, `job` and `node`)."""
    return [
        {
            "metric": {"__name__": name, **r.labels(), "instance": "10.0.0.7:9400", "job": "x"},
            "value": [1764921600.123, repr(value)],
        }
        for r in readings
        for name, value in r.values.items()
    ]


def test_the_vector_reads_as_the_exporter_text_does() -> None:
    body = {"status": "success", "data": {"resultType": "vector", "result": _vector(READINGS)}}
    assert readings_from_response(body) == parse(render(READINGS))


def test_samples_without_a_gpu_or_a_number_are_skipped() -> None:
    series = _vector(READINGS[:1])
    series.append({"metric": {"__name__": FIELD_FB_USED, "Hostname": "h"}, "value": [1, "3"]})
    series.append({"metric": {**series[0]["metric"], "gpu": "5"}, "value": [1, "NaNx"]})
    body = {"status": "success", "data": {"resultType": "vector", "result": series}}
    assert readings_from_response(body) == parse(render(READINGS[:1]))


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"status": "error", "errorType": "bad_data", "error": "parse error"}, "bad_data"),
        ({"status": "success", "data": {"resultType": "matrix", "result": []}}, "matrix"),
    ],
)
def test_an_error_or_another_result_type_is_refused(body: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        readings_from_response(body)


def test_the_query_names_every_field_and_filters_pods_before_hosts() -> None:
    everything = exporter_query()
    assert everything.startswith('{__name__=~"') and everything.endswith('"}')
    assert all(f.name in everything for f in FIELDS)
    by_pod = exporter_query(["b.x", "a"], ["node-1"])
    assert by_pod.endswith(r',pod=~"a|b\\.x"}'), by_pod
    assert exporter_query((), ["node-1"]).endswith(',Hostname=~"node\\\\-1"}')


def test_an_http_answer_is_read_or_refused_by_its_status_and_body() -> None:
    from gryvia_operator.api.promql import readings_from_http

    ok = {"status": "success", "data": {"resultType": "vector", "result": _vector(READINGS)}}
    import json

    assert readings_from_http(200, json.dumps(ok)) == parse(render(READINGS))
    with pytest.raises(OSError, match="HTTP 503"):
        readings_from_http(503, "unavailable")
    with pytest.raises(ValueError, match="bad_data"):
        readings_from_http(400, json.dumps({"status": "error", "errorType": "bad_data"}))
    with pytest.raises(ValueError, match="not a JSON answer"):
        readings_from_http(200, "<html>")
