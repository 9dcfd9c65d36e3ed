"""Usage grouped by who submitted the jobs, their project and any job label (issue 44, point
1): each row sums its records, a record without the value is the row `-`, and a grouping
that is none of these is refused naming the option."""

from __future__ import annotations

from typing import Any

import pytest

from gryvia_cli.core.billing import aggregate, parse_group_by, usage_csv
from gryvia_operator.api import GryviaUsageRecord
from gryvia_operator.api.periods import month_bounds


def _rec(job: str, cost: float, **attribution: Any) -> GryviaUsageRecord:
    return GryviaUsageRecord.model_validate(
        {
            "metadata": {"name": f"usage-{job}", "namespace": "tenant-acme"},
            "spec": {
                "tenant": "acme",
                "job": job,
                "jobUID": job,
                "sku": "h100",
                "gpuType": "H100",
                "gpus": 1,
                "rate": 2.0,
                "start": "2026-11-03T10:00:00Z",
                "end": "2026-11-03T12:00:00Z",
                "gpuHours": cost / 2,
                "cost": cost,
                "final": True,
                **attribution,
            },
        }
    )


RECORDS = [
    _rec(
        "a1", 4.0, user="ada", project="llm", jobLabels={"gryvia.io/project": "llm", "env": "prod"}
    ),
    _rec("a2", 6.0, user="ada", project="cv", jobLabels={"gryvia.io/project": "cv"}),
    _rec(
        "b1", 10.0, user="bob", project="llm", jobLabels={"gryvia.io/project": "llm", "env": "dev"}
    ),
    _rec("old", 1.0),  # metered before records carried a submitter
]
NOV = month_bounds("2026-11")


@pytest.mark.parametrize(
    ("group_by", "expected"),
    [
        ("user", [("ada", 10.0, 2), ("bob", 10.0, 1), ("-", 1.0, 1)]),
        ("project", [("llm", 14.0, 2), ("cv", 6.0, 1), ("-", 1.0, 1)]),
        ("label:env", [("dev", 10.0, 1), ("-", 7.0, 2), ("prod", 4.0, 1)]),
    ],
)
def test_rows_sum_the_records_of_each_user_project_or_label(
    group_by: str, expected: list[tuple[str, float, int]]
) -> None:
    rows, total = aggregate(RECORDS, parse_group_by(group_by), *NOV)
    assert [(r.key, r.cost, r.jobs) for r in rows] == expected
    assert total.cost == 21.0 == sum(r.cost for r in rows)


def test_the_csv_names_a_label_grouping_label() -> None:
    rows, total = aggregate(RECORDS, "label:env", *NOV)
    header = usage_csv(rows, total, "label:env").splitlines()[0]
    assert header == "label,gpu_hours,cost,currency,jobs"


@pytest.mark.parametrize("text", ["team", "label:", "label:-x", "label:a/b/c", "users"])
def test_an_unknown_grouping_is_refused_naming_the_choices(text: str) -> None:
    with pytest.raises(ValueError, match=r"--group-by .*label:KEY"):
        parse_group_by(text)


def test_a_record_keeps_who_and_what_it_was_metered_for() -> None:
    spec = RECORDS[0].spec
    assert (spec.user, spec.project, spec.job_labels) == (
        "ada",
        "llm",
        {"gryvia.io/project": "llm", "env": "prod"},
    )
    assert RECORDS[0].model_dump(by_alias=True)["spec"]["jobLabels"]["env"] == "prod"
