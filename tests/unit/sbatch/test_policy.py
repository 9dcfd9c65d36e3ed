"""Every sbatch option is interpreted, mapped or reported with advice; none is dropped silently."""

from __future__ import annotations

import pytest

from gryvia_cli.sbatch.options import OPTIONS, SHORT, SITE_PLUGINS, ArgKind, match_long
from gryvia_cli.sbatch.policy import ADVICE, CORE, MAPPED
from tests.unit.sbatch.helpers import codes, convert, sbatch


def test_every_option_has_a_class() -> None:
    keys = {spec.key for spec in OPTIONS}
    assert keys <= CORE | MAPPED | set(ADVICE) | set(SITE_PLUGINS)
    assert not (CORE & set(ADVICE)) and not (MAPPED & set(ADVICE))
    assert set(ADVICE) <= keys


def test_the_option_table_matches_slurm_for_well_known_options() -> None:
    assert SHORT["N"].name == "nodes" and SHORT["N"].arg is ArgKind.REQUIRED
    assert SHORT["H"].arg is ArgKind.NONE and SHORT["k"].arg is ArgKind.OPTIONAL
    assert match_long("exclusive")[0].arg is ArgKind.OPTIONAL  # type: ignore[union-attr]
    assert match_long("tasks-per-node")[0].key == "ntasks-per-node"  # type: ignore[union-attr]
    assert match_long("cpu-bind") == (None, [])  # srun only: sbatch refuses it


UNSUPPORTED = [
    "--mail-type=END", "--mail-user=a@b.c", "--dependency=afterok:1",
    "--account=p1", "--begin=now+1hour",
    "--deadline=2030-01-01", "-H", "--reservation=r1", "-w node01", "-x node02", "-L matlab",
    "--switches=1", "--time-min=10", "--nice=5", "--priority=10", "-M other", "--wckey=k",
    "--acctg-freq=30", "--profile=All", "--gpu-freq=high", "--network=x", "--bb=y",
    "--hint=nomultithread", "--gpu-bind=closest",
    "-m block", "--threads-per-core=1", "--wait-all-nodes=1", "--gres-flags=enforce-binding",
    "--container-mounts=/a:/b", "--parsable", "--wait",
]  # fmt: skip


@pytest.mark.parametrize("directive", UNSUPPORTED)
def test_each_unsupported_directive_is_reported_with_its_canonical_name(directive: str) -> None:
    conversion = convert(sbatch(directive))
    assert conversion.ok
    (item,) = conversion.report["unsupported"]
    assert item["code"] == "unsupported-directive"
    assert item["line"] == 2
    spec, _ = match_long(directive.lstrip("-").split("=")[0].split()[0])
    if directive.startswith("--"):
        assert spec is not None and item["directive"] == spec.directive
    assert item["message"].split(": ", 1)[1]  # advice follows the directive


def test_short_spellings_report_canonical_long_names() -> None:
    report = convert(sbatch("-A proj", "-M other", "-t 5")).report
    assert [item["directive"] for item in report["unsupported"]] == ["--account", "--clusters"]


def test_output_directives_are_mapped_to_the_runtime() -> None:
    conversion = convert(sbatch("-o logs/%x_%j.out", "-e err.txt", "--open-mode=a"))
    assert conversion.report["unsupported"] == []
    env = {e["name"]: e.get("value") for e in conversion.jobs[0]["spec"]["env"]}
    assert env["GRYVIA_SLURM_OUTPUT"] == "logs/%x_%j.out"
    assert env["GRYVIA_SLURM_ERROR"] == "err.txt"
    assert env["GRYVIA_SLURM_OPEN_MODE"] == "append"
    mapped = {m["directive"] for m in conversion.report["mapped"]}
    assert {"--output", "--error", "--open-mode"} <= mapped


def test_a_repeated_unsupported_directive_is_reported_once_at_its_last_line() -> None:
    report = convert(sbatch("--mail-type=END", "--mail-type=FAIL")).report
    assert [(i["directive"], i["line"]) for i in report["unsupported"]] == [("--mail-type", 3)]


@pytest.mark.parametrize(
    "directive",
    ["--exclusive=foo", "--open-mode=x", "--kill-on-invalid-dep=maybe", "--mail-type=SOMETIMES",
     "--signal=@@", "--nice=high", "--wait-all-nodes=2", "--time-min=abc", "--tmp=1.5G"],
)  # fmt: skip
def test_values_sbatch_would_refuse_are_errors_even_when_unsupported(directive: str) -> None:
    conversion = convert(sbatch(directive))
    assert codes(conversion.report["errors"]) == ["invalid-value"]
    assert conversion.jobs == ()
