"""core.describe: kubectl-describe-like sections of any raw object (pure)."""

from __future__ import annotations

import datetime as dt

from gryvia_cli.core.describe import MAX_ROWS, describe, event_section, flatten

NOW = dt.datetime(2026, 12, 1, 12, 0, tzinfo=dt.UTC)


def test_flatten_paths_lists_and_scalars() -> None:
    value = {
        "containers": [{"name": "a", "args": ["x", 1, True]}],
        "limits": {"nvidia.com/gpu": "8"},
        "empty": {},
        "none": None,
    }
    assert flatten(value) == [
        ("containers[0].name", "a"),
        ("containers[0].args", "x, 1, true"),
        ("limits.nvidia.com/gpu", "8"),
        ("none", "<none>"),
    ]


def test_describe_sections_of_a_pod() -> None:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "p-0",
            "namespace": "team-a",
            "creationTimestamp": "2026-12-01T10:00:00Z",
            "labels": {"b": "2", "a": "1"},
            "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}", "x": "y"},
        },
        "spec": {"nodeName": "n1"},
        "status": {
            "phase": "Running",
            "conditions": [
                {
                    "type": "Ready",
                    "status": "False",
                    "reason": "ContainersNotReady",
                    "lastTransitionTime": "2026-12-01T11:30:00Z",
                    "message": "containers with unready status: [main]",
                }
            ],
        },
    }
    sections = {s.title: s.rows for s in describe(pod, NOW)}
    assert list(sections) == ["Object", "Spec", "Status", "Conditions", "Events"]
    obj = dict(sections["Object"][:4])
    assert obj["Created"] == "2026-12-01 10:00:00 UTC (120m)"
    assert ("Labels", "a=1") in sections["Object"] and ("", "b=2") in sections["Object"]
    assert ("Annotations", "x: y") in sections["Object"]  # last-applied hidden
    assert sections["Spec"] == [("nodeName", "n1")]
    assert sections["Status"] == [("phase", "Running")]
    assert sections["Conditions"] == [
        ("Ready", "False  ContainersNotReady  (30m)  containers with unready status: [main]")
    ]
    assert sections["Events"] == []


def test_events_newest_first_with_counts_and_long_specs_capped() -> None:
    events = [
        {"reason": "Old", "lastTimestamp": "2026-12-01T09:00:00Z", "message": "a"},
        {
            "reason": "New",
            "type": "Warning",
            "count": 4,
            "lastTimestamp": "2026-12-01T11:59:00Z",
            "involvedObject": {"kind": "Pod", "name": "p-0"},
            "message": " b ",
        },
    ]
    rows = event_section(events, NOW).rows
    assert rows == [("60s (x4)", "Warning  New  pod/p-0  b"), ("3h", "Normal  Old  /  a")]
    big = {"kind": "X", "metadata": {"name": "x"}, "spec": {f"k{i}": i for i in range(200)}}
    spec = next(s for s in describe(big, NOW) if s.title == "Spec")
    assert len(spec.rows) == MAX_ROWS + 1 and spec.rows[-1][0] == "…"


def test_describe_of_a_job_hook_hides_credential_like_header_values() -> None:
    """The console's describe (`d` in :hooks) flattens the spec: its headers are shown as
    `gryvia hook get` shows them, not with the Authorization token in clear."""
    hook = {
        "apiVersion": "gryvia.io/v1alpha1",
        "kind": "GryviaJobHook",
        "metadata": {"name": "h", "namespace": "a", "creationTimestamp": "2026-12-01T10:00:00Z"},
        "spec": {
            "events": ["Running"],
            "webhook": {
                "url": "https://h.example/x",
                "headers": {"Authorization": "Bearer s3cr3t", "X-Team": "nlp"},
            },
        },
    }
    spec = dict(next(s for s in describe(hook, NOW) if s.title == "Spec").rows)
    assert spec["webhook.headers.Authorization"] == "<hidden, 13 characters>"
    assert spec["webhook.headers.X-Team"] == "nlp"
    assert spec["webhook.url"] == "https://h.example/x"
    assert hook["spec"]["webhook"]["headers"]["Authorization"] == "Bearer s3cr3t"  # not changed
