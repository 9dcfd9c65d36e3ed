"""Patterns seen in real batch scripts (issue: Slurm migration 2.0, points 1-6), on small
scripts of our own: --exclusive, MIG profiles, overlapping GPU options, site plugins, large
array indices, false alarms and `module load`."""

from __future__ import annotations

import pytest

from gryvia_cli.sbatch.model import ImportSettings
from gryvia_cli.sbatch.policy import ADVICE
from gryvia_cli.sbatch.resources import resolve
from gryvia_operator.api.gputype import gpu_resource_name, normalize_gpu_type
from tests.unit.sbatch.helpers import codes, convert, make_script, parse, sbatch

TORCHRUN = "srun torchrun --nproc_per_node=$GPUS_PER_NODE train.py"


def issue(conversion: object, code: str) -> str:
    found = [i for i in conversion.issues if i.code == code]  # type: ignore[attr-defined]
    assert found, f"no {code} in {codes(conversion.issues)}"  # type: ignore[attr-defined]
    return str(found[0].message)


# 1. --exclusive takes whole nodes, GPUs included


def test_exclusive_without_gpus_is_refused_with_what_to_add() -> None:
    conversion = convert(sbatch("-N 2", "--exclusive", "--ntasks-per-node=1", body=TORCHRUN))
    assert not conversion.ok and conversion.jobs == ()
    message = issue(conversion, "exclusive-needs-gpus")
    assert "--gpus-per-node=N" in message and "--gres=gpu:TYPE:N" in message


def test_exclusive_takes_every_gpu_of_the_only_type() -> None:
    settings = ImportSettings(node_gpus={"H100": 8})
    conversion = convert(sbatch("-N 2", "--exclusive", body=TORCHRUN), settings=settings)
    assert conversion.ok
    spec = conversion.jobs[0]["spec"]
    assert (spec["gpus"], spec["gpuType"], spec["distributed"]["nodes"]) == (8, "H100", 2)
    assert "all 8 GPUs of a H100 node" in issue(conversion, "exclusive-whole-node")


def test_exclusive_uses_the_requested_type_among_several() -> None:
    settings = ImportSettings(node_gpus={"H100": 8, "A100-80G": 4})
    ok = convert(sbatch("--exclusive", "--constraint=a100_80gb"), settings=settings)
    assert ok.ok and ok.jobs[0]["spec"]["gpus"] == 4
    refused = convert(sbatch("--exclusive"), settings=settings)
    assert "several GPU types: A100-80G (4 per node), H100 (8 per node)" in issue(
        refused, "exclusive-needs-gpus"
    )


def test_exclusive_with_a_gpu_count_keeps_it_or_fills_the_node() -> None:
    alone = convert(sbatch("--exclusive", "--gres=gpu:2"))
    assert alone.ok and alone.jobs[0]["spec"]["gpus"] == 2
    assert "exclusive-shared-node" in codes(alone.issues)
    filled = convert(
        sbatch("--exclusive", "--gres=gpu:h100:2"), settings=ImportSettings(node_gpus={"H100": 8})
    )
    assert filled.jobs[0]["spec"]["gpus"] == 8


def test_exclusive_cpu_job_with_an_explicit_zero_imports() -> None:
    conversion = convert(sbatch("--exclusive", "--gres=gpu:0", "-c 16"))
    assert conversion.ok and conversion.jobs[0]["spec"]["gpus"] == 0


def test_exclusive_user_shares_nodes() -> None:
    assert convert(sbatch("--exclusive=user")).ok


# 2. MIG profiles are slices


def test_mig_profile_in_a_gres_type_is_a_slice() -> None:
    conversion = convert(sbatch("--gres=gpu:nvidia_h100_80gb_hbm3_3g.40gb:1"))
    assert conversion.ok
    spec = conversion.jobs[0]["spec"]
    assert (spec["gpus"], spec["gpuType"]) == (1, "H100-MIG-3G.40GB")
    assert gpu_resource_name(spec["gpuType"]) == "nvidia.com/mig-3g.40gb"


@pytest.mark.parametrize(
    ("name", "canonical"),
    [
        ("nvidia_h100_80gb_hbm3_3g.40gb", "H100-MIG-3G.40GB"),
        ("NVIDIA-H100-80GB-HBM3-MIG-3g.40gb", "H100-MIG-3G.40GB"),
        ("H100-MIG-3G.40GB", "H100-MIG-3G.40GB"),
        ("a100_80gb_1g.10gb", "A100-80G-MIG-1G.10GB"),
        ("NVIDIA-H100-80GB-HBM3", "H100"),
    ],
)
def test_the_shared_gpu_type_rule_keeps_mig_profiles(name: str, canonical: str) -> None:
    assert normalize_gpu_type(name) == canonical
    assert normalize_gpu_type(canonical) == canonical
    assert gpu_resource_name(canonical).startswith("nvidia.com/mig-") == ("MIG" in canonical)


# 3. accepted by Slurm before 26.05, site plugins, large array indices


def test_gpus_per_node_with_the_same_gres_count_warns() -> None:
    conversion = convert(
        sbatch("-N 2", "--gres=gpu:v100:4", "--gpus-per-node=4", "--cpus-per-gpu=2")
    )
    assert conversion.ok
    spec = conversion.jobs[0]["spec"]
    assert (spec["gpus"], spec["gpuType"], spec["resources"]["requests"]["cpu"]) == (4, "V100", "8")
    assert "gpu-options-overlap" in codes(conversion.issues)
    assert "cpus-per-gpu-without-gpus" not in codes(conversion.issues)


def test_gpus_per_node_with_another_gres_count_is_refused() -> None:
    resources, issues = resolve(parse("--gres=gpu:4", "--gpus-per-node=8"))
    assert resources is None and "conflicting-gpu-options" in codes(issues)


@pytest.mark.parametrize(
    "directive", ["--image=docker:nersc/pytorch:24", "--module=gpu,nccl", "--environment=ngc"]
)
def test_site_plugin_options_are_reported_and_ignored(directive: str) -> None:
    conversion = convert(sbatch(directive, "--gpus=1"))
    assert conversion.ok
    assert "reported and ignored" in issue(conversion, "site-plugin-option")


def test_array_indices_above_1000_follow_the_site_limit() -> None:
    text = sbatch("--array=500-17000:1000%26")
    assert len(convert(text).jobs) == 17
    refused = convert(text, settings=ImportSettings(max_array_size=1001))
    message = issue(refused, "invalid-array-spec")
    assert "index 17000" in message and "0 to 1000 (MaxArraySize=1001" in message


# 4. false alarms and module load


@pytest.mark.parametrize(
    "comment",
    [
        "#   sbatch pipeline.sbatch              # once",
        "# sbatch 변수는 두 개뿐:",
        "#      sbatch --nodes=N run_multinode.sh",
        "# SBATCH file can't take command arguments",
    ],
)
def test_usage_comments_are_no_look_alikes(comment: str) -> None:
    conversion = convert(make_script("#SBATCH -N 1", comment))
    assert "look-alike-directive" not in codes(conversion.issues)


@pytest.mark.parametrize("comment", ["# SBATCH --exclusive", "#sbatch --time=10", "#  SBATCH -N 2"])
def test_commented_out_directives_still_warn(comment: str) -> None:
    conversion = convert(make_script("#SBATCH -N 1", comment))
    assert "look-alike-directive" in codes(conversion.issues)


@pytest.mark.parametrize(
    "body",
    [
        'echo "Usage: sbatch run.sh [options]"',
        "echo Did you forget to run with sbatch?",
        "cat <<EOF\nUSAGE\n  sbatch $0 -n\n  scancel 12\nEOF\necho done",
        "if command -v sbatch >/dev/null 2>&1; then\n  sbatch next.sh\nfi",
        "if which squeue >/dev/null; then squeue -u $USER; fi",
        "printf 'run squeue to see it\\n'",
    ],
)
def test_printed_or_guarded_slurm_commands_are_no_alarm(body: str) -> None:
    conversion = convert(sbatch("-N 1", body=body))
    assert "slurm-command" not in codes(conversion.issues), conversion.issues


@pytest.mark.parametrize(
    "body",
    [
        "sbatch next.sh",
        "JOB=$(sbatch --parsable next.sh)",
        'snakemake --cluster "sbatch -p {cluster.partition}"',
        'echo "queue: $(squeue -j $SLURM_JOB_ID)"',
        "cat <<EOT > next.sh\n#!/bin/bash\nEOT\nsbatch next.sh",
        "sbatch <<EOT\n#!/bin/bash\necho hi\nEOT",
    ],
)
def test_real_slurm_command_calls_still_warn(body: str) -> None:
    conversion = convert(sbatch("-N 1", body=body))
    assert "slurm-command" in codes(conversion.issues)


def test_module_load_is_warned_at_import() -> None:
    conversion = convert(sbatch("-N 1", body="module purge\nmodule load cuda/12.1\npython x.py"))
    assert conversion.ok
    found = [i for i in conversion.issues if i.code == "module-command"]
    assert len(found) == 1 and "module: command not found" in found[0].message
    # without errexit the script goes on; only with it does the pod fail (issue 39, 6)
    assert "the script goes on" in found[0].message and "pod fails" not in found[0].message
    for errexit in ("set -e", "set -euo pipefail", "set -o errexit"):
        strict = convert(sbatch("-N 1", body=f"{errexit}\nmodule load cuda/12.1\npython x.py"))
        (said,) = [i for i in strict.issues if i.code == "module-command"]
        assert "the pod fails" in said.message, errexit


def test_module_in_printed_text_is_no_command() -> None:
    conversion = convert(sbatch("-N 1", body='echo "module load is done by the image"'))
    assert "module-command" not in codes(conversion.issues)


# 5. advice names only what exists


@pytest.mark.parametrize(
    "word", ["Kueue", "GryviaWorkflow", "checkpoint-command", "spread-workers"]
)
def test_advice_names_nothing_that_does_not_exist(word: str) -> None:
    assert not [key for key, text in ADVICE.items() if word in text]
    conversion = convert(
        sbatch("--partition=gpu", "--dependency=afterok:1", "--signal=B:USR1@120",
               body="sbatch next.sh")
    )  # fmt: skip
    assert not [i for i in conversion.issues if word in i.message]
