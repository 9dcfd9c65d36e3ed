"""Random directive files never crash the importer: each imports or fails on a numbered line."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gryvia_cli.sbatch.options import OPTIONS
from tests.unit.sbatch.helpers import convert

SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])

VALUES = st.sampled_from(
    ["1", "2", "0", "-1", "4-2", "2-4", "gpu:a100:8", "gpu", "h100:4", "10:30", "1-12", "24h",
     "32G", "0", "1.5G", "0-9%2", "abc", "ALL,A=b", "NONE", "user", "", "a100|h100", "UNLIMITED",
     "'a b'", '"x#y"', "NUM_NODES", "gpu:-1", "5-1", "x\\ y", "#c"]
)  # fmt: skip
NAMES = st.sampled_from([spec.name for spec in OPTIONS] + ["bogus", "cpus-per", "ti"])


@st.composite
def words(draw: st.DrawFn) -> str:
    kind = draw(st.integers(0, 5))
    name = draw(NAMES)
    if kind == 0:
        return f"--{name}={draw(VALUES)}"
    if kind == 1:
        return f"--{name} {draw(VALUES)}"
    if kind == 2:
        return f"--{name[: draw(st.integers(1, len(name)))]}"
    if kind == 3:
        letter = draw(st.sampled_from([s.short for s in OPTIONS if s.short] + ["Z"]))
        return f"-{letter}{draw(VALUES)}"
    if kind == 4:
        return draw(VALUES)
    return draw(st.text(alphabet=" \t-=:#'\"\\abcN0129%,", max_size=12))


@st.composite
def scripts(draw: st.DrawFn) -> bytes:
    lines = ["#!/bin/bash"]
    for _ in range(draw(st.integers(0, 12))):
        choice = draw(st.integers(0, 9))
        if choice < 6:
            lines.append("#SBATCH " + " ".join(draw(st.lists(words(), max_size=3))))
        elif choice == 6:
            lines.append(draw(st.sampled_from(["", "# comment", "  #SBATCH -N 2", "# SBATCH"])))
        elif choice == 7:
            lines.append(draw(st.sampled_from(["hetjob", "-N 1 : -N 2", "packjob"])).join(
                ["#SBATCH ", ""]))  # fmt: skip
        else:
            lines.append(draw(st.sampled_from(["srun hostname", "echo hi", "scontrol requeue 1"])))
    return ("\n".join(lines) + "\n").encode()


def _check(data: bytes) -> None:
    conversion = convert(data)
    report = conversion.report
    count = data.count(b"\n") + 1
    if conversion.ok:
        assert conversion.jobs and report["outcome"] == "import"
        assert report["errors"] == []
    else:
        assert conversion.jobs == () and report["outcome"] == "reject"
        assert report["errors"]
        for item in report["errors"]:
            assert isinstance(item["line"], int) and 1 <= item["line"] <= count, item
    for key in ("warnings", "unsupported", "errors"):
        for item in report[key]:
            assert set(item) == {"code", "line", "directive", "message"} and item["message"]


@SETTINGS
@given(scripts())
def test_random_directive_files_import_or_fail_on_a_line(data: bytes) -> None:
    _check(data)


@SETTINGS
@given(st.binary(max_size=300))
def test_random_bytes_never_crash(data: bytes) -> None:
    _check(b"#!/bin/sh\n#SBATCH " + data)


@SETTINGS
@given(st.text(max_size=200))
def test_random_text_never_crashes(text: str) -> None:
    _check(("#!/bin/sh\n" + text).encode("utf-8", "surrogatepass"))
