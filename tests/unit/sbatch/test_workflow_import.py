"""Scripts imported together: `--dependency` between them becomes one GryviaWorkflow."""

from __future__ import annotations

from typing import Any

import pytest

from gryvia_cli.sbatch.model import Directive, Severity
from gryvia_cli.sbatch.workflow import WorkflowImport, convert_workflow, parse_dependency
from gryvia_operator.api.workflow import GryviaWorkflow
from tests.unit.sbatch.helpers import codes, sbatch


def dep(value: str) -> Any:
    return parse_dependency(Directive("dependency", "--dependency", value, 3, "-d"), "b.sh")


def together(*scripts: tuple[str, bytes], **options: Any) -> WorkflowImport:
    options.setdefault("image", "registry.example/train:1")
    return convert_workflow([(data, name) for name, data in scripts], **options)


def steps(imported: WorkflowImport) -> dict[str, dict[str, Any]]:
    assert imported.workflow is not None, [i.message for i in imported.issues]
    return {s["name"]: s for s in imported.workflow["spec"]["steps"]}


def errors(imported: WorkflowImport) -> list[str]:
    """Every error: the scripts' (in their reports), then the workflow's."""
    return [e["message"] for report in imported.reports for e in report["errors"]] + [
        i.message for i in imported.issues
    ]


@pytest.mark.parametrize(
    ("value", "condition", "names"),
    [
        ("afterok:prep", "afterok", ("prep",)),
        ("afterany:a:b", "afterany", ("a", "b")),
        ("afternotok:a,afternotok:b", "afternotok", ("a", "b")),
        ("AFTEROK:a:a", "afterok", ("a",)),
    ],
)
def test_mapped_dependency_types(value: str, condition: str, names: tuple[str, ...]) -> None:
    found = dep(value)
    assert (found.condition, found.names, found.issues) == (condition, names, ())


@pytest.mark.parametrize(
    ("value", "code", "fix"),
    [
        ("afterok:a?afterok:b", "dependency-any-of", "use ',' or ':'"),
        ("afterok:a,afterany:b", "dependency-mixed", "one condition"),
        ("after:a+5", "dependency-type", "write afterok, afterany or afternotok"),
        ("aftercorr:a", "dependency-type", "write afterok"),
        ("soon:a", "dependency-type", "is not a dependency type"),
        ("afterok", "dependency-name", "write afterok:<name>"),
    ],
)
def test_unmapped_dependencies_are_refused_with_the_fix(value: str, code: str, fix: str) -> None:
    found = dep(value)
    assert found.condition is None and codes(found.issues) == [code]
    issue = found.issues[0]
    assert issue.severity is Severity.ERROR and issue.line == 3
    assert issue.message.startswith(f"b.sh: --dependency={value}: ") and fix in issue.message


def test_singleton_is_dropped_with_a_warning() -> None:
    found = dep("singleton")
    assert found.condition is None and found.names == ()
    assert codes(found.issues) == ["dependency-singleton"]
    assert found.issues[0].severity is Severity.WARNING


def test_afterok_by_job_name_file_name_and_stem_map_to_depends_on() -> None:
    prep = sbatch("--job-name=prep", "-c 1")
    train = sbatch("--job-name=Train.Run", "--dependency=afterok:prep", "-N 2", "--gres=gpu:4")
    evaluate = sbatch("--dependency=afterany:train.sh")
    report = sbatch("--dependency=afternotok:eval")
    imported = together(
        ("prep.sh", prep), ("train.sh", train), ("eval.sh", evaluate), ("report.sh", report)
    )
    assert imported.ok and imported.issues == ()
    found = steps(imported)
    assert list(found) == ["prep", "train-run", "eval", "report"]
    assert "dependsOn" not in found["prep"]
    assert (found["train-run"]["dependsOn"], found["train-run"]["condition"]) == (
        ["prep"],
        "afterok",
    )
    assert (found["eval"]["dependsOn"], found["eval"]["condition"]) == (["train-run"], "afterany")
    assert (found["report"]["dependsOn"], found["report"]["condition"]) == (["eval"], "afternotok")
    GryviaWorkflow.model_validate(imported.workflow)
    assert imported.name == "prep" and imported.workflow is not None
    assert imported.workflow["metadata"]["name"] == "prep"
    train_spec = found["train-run"]["template"]
    assert train_spec["gpus"] == 4 and train_spec["distributed"]["nodes"] == 2
    env = {e["name"]: e for e in train_spec["env"]}
    host = "$(workflow.name)-$(workflow.run)-$(workflow.step)"
    assert env["SLURM_JOB_NODELIST"]["value"] == (
        f"{host}-0.{host}-headless,{host}-1.{host}-headless"
    )
    assert env["SLURM_JOB_NAME"]["value"] == "Train.Run"
    config = env["GRYVIA_SBATCH_SCRIPT"]["valueFrom"]["configMapKeyRef"]["name"]
    assert config == "prep-train-run-slurm-runtime"
    runtimes = {r["metadata"]["name"]: r for r in imported.runtimes}
    assert set(runtimes) == {
        "prep-prep-slurm-runtime", "prep-train-run-slurm-runtime",
        "prep-eval-slurm-runtime", "prep-report-slurm-runtime",
    }  # fmt: skip
    assert runtimes[config]["metadata"]["labels"]["gryvia.io/workflow"] == "prep"
    assert [d["kind"] for d in imported.documents] == ["ConfigMap"] * 4 + ["GryviaWorkflow"]
    # the single-script "dependencies are not supported" finding is gone
    assert all(not r["unsupported"] for r in imported.reports)


def test_a_name_among_no_script_is_refused_naming_the_option_and_the_fix() -> None:
    imported = together(
        ("prep.sh", sbatch("-c 1")), ("train.sh", sbatch("--dependency=afterok:$JOBID"))
    )
    assert not imported.ok and imported.workflow is None and imported.runtimes == ()
    (message,) = errors(imported)
    assert message.startswith("train.sh: --dependency=afterok:$JOBID names none of the scripts")
    assert "known as: prep, prep.sh" in message
    assert "--job-name or file name" in message
    assert imported.reports[1]["outcome"] == "reject"
    assert imported.reports[0]["outcome"] == "import"


def test_numeric_job_ids_self_references_and_ambiguous_names_are_refused() -> None:
    numeric = together(("a.sh", sbatch("-c 1")), ("b.sh", sbatch("--dependency=afterok:4242")))
    assert "names none of the scripts" in errors(numeric)[0]
    itself = together(("a.sh", sbatch("-J a")), ("b.sh", sbatch("--dependency=afterok:b")))
    assert "names this script itself" in errors(itself)[0]
    twice = together(
        ("x.sh", sbatch("-J same")),
        ("y.sh", sbatch("-J same")),
        ("z.sh", sbatch("--dependency=afterok:same")),
    )
    assert "names several scripts (x.sh, y.sh)" in errors(twice)[0]


def test_repeated_job_names_get_distinct_step_names() -> None:
    imported = together(("x.sh", sbatch("-J train")), ("y.sh", sbatch("-J train")))
    assert list(steps(imported)) == ["train", "train-2"]


def test_a_cycle_and_an_array_are_refused() -> None:
    cycle = together(
        ("a.sh", sbatch("--dependency=afterok:b")), ("b.sh", sbatch("--dependency=afterok:a"))
    )
    assert not cycle.ok and "cycle" in errors(cycle)[0]
    array = together(("a.sh", sbatch("--array=0-3")), ("b.sh", sbatch("--dependency=afterok:a")))
    assert not array.ok
    assert any("an array (--array) cannot be a workflow step" in m for m in errors(array))


def test_a_long_name_is_refused_naming_the_option() -> None:
    imported = together(("a.sh", sbatch("-c 1")), ("b.sh", sbatch("-c 1")), name="w" * 60)
    assert not imported.ok
    assert errors(imported)[0].startswith("--name: ")


def test_default_name_keeps_room_for_the_step_jobs() -> None:
    long = "x" * 40
    imported = together((f"{long}.sh", sbatch("-J " + "y" * 30)), ("b.sh", sbatch("-c 1")))
    assert imported.ok
    assert len(imported.name) + len(max(steps(imported), key=len)) <= 48
