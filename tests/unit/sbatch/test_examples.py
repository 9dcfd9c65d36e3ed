"""Every case in the sbatch examples passes, compared per the examples' README rules.

The cases live in `tests/unit/sbatch/examples/` (written for this project, kept byte for byte:
see the folder's `.gitattributes`). Each
`NN-name.expect.yaml` names its script; the script is converted by its path (the file name is
the default job name).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from gryvia_cli.sbatch.convert import Conversion, convert_file
from tests.unit.sbatch.helpers import env_of

EXAMPLES = Path(__file__).resolve().parent / "examples"
CASES = sorted(EXAMPLES.glob("*.expect.yaml"))


def _load(path: Path) -> dict[str, Any]:
    data = yaml.safe_load(path.read_text())
    assert data["schema"] == "sbatch-import-expect/v1"
    return dict(data)


def _directives(items: list[dict[str, Any]]) -> set[str]:
    return {str(item["directive"]) for item in items if item.get("directive")}


def _check_resources(expect: dict[str, Any], conversion: Conversion) -> None:
    report = conversion.report
    res = report["resources"]
    assert report["jobName"] == expect["job_name"]
    assert res["nodes"] == expect["nodes"]
    assert res["gpusPerNode"] == expect["gpus_per_node"]
    assert res["totalGpus"] == expect["total_gpus"]
    gpu_type = expect["gpu_type"]
    assert (res["gpuType"] or "").lower() == (gpu_type or "").lower()
    if gpu_type is not None and expect.get("gpu_type_source"):
        assert res["gpuTypeSource"] == expect["gpu_type_source"]
    assert res["timeLimitSeconds"] == expect["time_limit_seconds"]
    assert res["cpusPerPod"] == expect["cpus_per_pod"]
    assert res["memoryPerPodBytes"] == expect["memory_per_pod_bytes"]
    assert res["memoryWholeNode"] == expect["memory_whole_node"]
    assert res["tasksPerPod"] == expect["tasks_per_pod"]
    array = expect["array"]
    if array is None:
        assert report["array"] is None
        assert len(conversion.jobs) == 1
    else:
        assert set(report["array"]["indices"]) == set(array["indices"])
        assert report["array"]["maxParallel"] == array["max_parallel"]
        assert len(conversion.jobs) == len(array["indices"])
    for job in conversion.jobs:
        spec = job["spec"]
        assert spec["gpus"] == expect["gpus_per_node"]
        assert spec.get("distributed", {}).get("nodes", 1) == expect["nodes"]


def _check_behaviour(expect: dict[str, Any], conversion: Conversion, script: Path) -> None:
    report = conversion.report
    if expect.get("command_runs_script"):
        for job in conversion.jobs:  # the script itself runs, via its own #! line, on pod 0
            env = env_of(job, conversion.runtime)
            assert env["GRYVIA_SBATCH_SCRIPT"] == script.read_text()
            assert job["spec"]["command"][:2] == ["/bin/sh", "-c"]
    handled = {use["command"] for use in report["slurmCommands"] if use["supported"]}
    reported = _directives(report["unsupported"]) | _directives(report["warnings"])
    for command in expect.get("slurm_commands_used") or []:
        assert command in handled or command in reported, command
    available = set(report["env"]) | set(report["runtimeEnv"])
    for name in expect.get("env_expected") or []:
        assert name in available, name
    for job in conversion.jobs:
        env = env_of(job)
        for name, value in (expect.get("env_values") or {}).items():
            if name != "SLURM_ARRAY_TASK_ID":
                assert env[name] == str(value), name
        for name, value in (expect.get("env_set") or {}).items():
            assert env[name] == str(value), name


def _check_findings(expect: dict[str, Any], conversion: Conversion) -> None:
    report = conversion.report
    unsupported = _directives(report["unsupported"]) | _directives(report["errors"])
    for directive in expect.get("unsupported") or []:
        assert directive in unsupported, directive
    mapped = {item["directive"] for item in report["mapped"]}
    known = unsupported | _directives(report["warnings"]) | mapped
    for directive in expect.get("report_or_map") or []:
        assert directive in known, directive
    warned = {item["code"] for item in report["warnings"]}
    for code in expect.get("warnings") or []:
        assert code in warned, code
    lines = {item["line"] for item in report["warnings"]}
    for ignored in expect.get("ignored_directives") or []:
        if isinstance(ignored, dict) and ignored.get("warn") == "required":
            assert ignored.get("line") in lines, ignored


def _check_errors(expect: dict[str, Any], conversion: Conversion) -> None:
    assert conversion.jobs == ()
    assert conversion.report["outcome"] == "reject"
    errors = conversion.report["errors"]
    for wanted in expect.get("errors") or []:
        matches = [
            found
            for found in errors
            if (found["code"] == wanted.get("code") or found["directive"] == wanted["directive"])
            and (wanted.get("line") is None or found["line"] == wanted["line"])
        ]
        assert matches, (wanted, errors)


@pytest.mark.parametrize("case", CASES, ids=[case.name.split(".")[0] for case in CASES])
def test_shared_example(case: Path) -> None:
    expect = _load(case)
    script = case.parent / expect["script"]
    conversion = convert_file(script, image="registry.example/train:1")
    outcome = expect["outcome"]
    if outcome == "reject":
        _check_errors(expect, conversion)
        return
    if outcome == "import_or_refuse" and not conversion.jobs:
        named = _directives(conversion.report["errors"])
        assert named & set(expect.get("unsupported") or []), conversion.report["errors"]
        return
    assert conversion.ok, conversion.report["errors"]
    _check_resources(expect, conversion)
    _check_behaviour(expect, conversion, script)
    _check_findings(expect, conversion)


def test_the_examples_folder_is_found() -> None:
    assert CASES, f"no sbatch examples in {EXAMPLES}"
