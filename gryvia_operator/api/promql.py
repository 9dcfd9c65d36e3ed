"""Reading dcgm-exporter's series back from a Prometheus server: the PromQL instant query and
the vector it answers, as the same `GpuReading`s the exporter's own text gives
(`api.dcgm.parse`), so the operator's sampler and the CLI compute the same numbers from
either path (docs/gpu-metrics.md, "Two ways to read").

The query asks for the fields of `api.dcgm.FIELDS` only, in one request, optionally only the
series of some pods (dcgm-exporter's `pod` label) or of some hosts (its `Hostname` label).
Prometheus answers `GET /api/v1/query?query=...` with
`{"status": "success", "data": {"resultType": "vector", "result": [{"metric": {...},
"value": [<unix time>, "<number>"]}, ...]}}` (Prometheus HTTP API v1, stable since 2.0).

Standard library only, like `api.dcgm`.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from gryvia_operator.api.dcgm import FIELDS, GpuReading, reading_of

QUERY_PATH = "/api/v1/query"
"""The instant-query endpoint of Prometheus' HTTP API v1."""


def _alternatives(values: Collection[str]) -> str:
    """An RE2 alternation matching exactly `values` (each escaped)."""
    return "|".join(re.escape(v) for v in sorted(values))


def _quoted(value: str) -> str:
    """A PromQL double-quoted string literal of `value`."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def exporter_query(pods: Collection[str] = (), hosts: Collection[str] = ()) -> str:
    """The PromQL selector of dcgm-exporter's GPU series: every field of `FIELDS`, only the
    series labelled with one of `pods` when given, else only those of `hosts` (`Hostname`)
    when given, else all."""
    matchers = [f"__name__=~{_quoted(_alternatives([f.name for f in FIELDS]))}"]
    if pods:
        matchers.append(f"pod=~{_quoted(_alternatives(pods))}")
    elif hosts:
        matchers.append(f"Hostname=~{_quoted(_alternatives(hosts))}")
    return "{" + ",".join(matchers) + "}"


def readings_from_http(status: int, text: str) -> list[GpuReading]:
    """The readings of one HTTP answer of `/api/v1/query`: its status code and body text.
    Prometheus answers a bad query with 400 or 422 and an error body, which is read for its
    message. Raises OSError for any other HTTP error, ValueError when the body is not JSON
    or not a vector (`readings_from_response`)."""
    import json

    if status >= 400 and status not in (400, 422):
        raise OSError(f"HTTP {status}")
    try:
        body = json.loads(text)
    except ValueError as exc:
        raise ValueError(f"not a JSON answer (HTTP {status})") from exc
    if not isinstance(body, dict):
        raise ValueError(f"not a query result (HTTP {status})")
    return readings_from_response(body)


def readings_from_response(body: Mapping[str, Any]) -> list[GpuReading]:
    """The readings in a Prometheus instant-query response (the parsed JSON): series grouped
    by `Hostname`, `gpu` and `UUID` as `api.dcgm.parse` groups them; series without a `gpu`
    label are ignored.

    Raises ValueError when the response is an error (`status` not `success`, with
    Prometheus' `errorType` and `error`) or is not a vector.
    """
    if body.get("status") != "success":
        raise ValueError(
            f"Prometheus answered {body.get('errorType') or 'an error'}: "
            f"{body.get('error') or body.get('status')}"
        )
    data = body.get("data") or {}
    if data.get("resultType") != "vector":
        raise ValueError(f"expected a vector, Prometheus answered {data.get('resultType')!r}")
    return readings_from_vector(data.get("result") or [])


def readings_from_vector(result: Sequence[Mapping[str, Any]]) -> list[GpuReading]:
    """One reading per GPU from a PromQL vector's samples (see `readings_from_response`).
    A sample whose value is not a number is skipped."""
    by_gpu: dict[tuple[str, str, str], dict[str, float]] = {}
    labels_of: dict[tuple[str, str, str], Mapping[str, str]] = {}
    for sample in result:
        labels = sample.get("metric") or {}
        if "gpu" not in labels or "__name__" not in labels:
            continue
        try:
            value = float(sample["value"][1])
        except (KeyError, IndexError, TypeError, ValueError):
            continue
        key = (labels.get("Hostname", ""), labels["gpu"], labels.get("UUID", ""))
        by_gpu.setdefault(key, {})[labels["__name__"]] = value
        labels_of.setdefault(key, labels)
    return [reading_of(labels_of[key], values) for key, values in by_gpu.items()]
