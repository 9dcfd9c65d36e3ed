"""GryviaAIJob manifests: shape, distributed jobs, env, arrays, image, names, the report."""

from __future__ import annotations

import json

import yaml

from gryvia_cli.sbatch.launcher import MAX_SCRIPT_BYTES, entrypoint, fallback
from gryvia_cli.sbatch.mapping import pyxis_image
from gryvia_operator.api.names import LABEL_ARRAY_INDEX, LABEL_ARRAY_NAME
from tests.unit.sbatch.helpers import codes, convert, env_of, make_script, sbatch


def test_a_single_gpu_job() -> None:
    conversion = convert(
        sbatch("--job-name=resnet-ft", "--gres=gpu:1", "-c 8", "--mem=32G", "-t 12:00:00")
    )
    assert conversion.ok
    (job,) = conversion.jobs
    assert job["apiVersion"] == "gryvia.io/v1alpha1"
    assert job["kind"] == "GryviaAIJob"
    assert job["metadata"]["name"] == "resnet-ft"
    assert job["metadata"]["labels"] == {"gryvia.io/imported-from": "sbatch"}
    spec = job["spec"]
    assert spec["type"] == "training"
    assert spec["gpus"] == 1
    assert "gpuType" not in spec and "distributed" not in spec
    assert spec["resources"] == {
        "requests": {"cpu": "8", "memory": "32Gi"},
        "limits": {"memory": "32Gi"},
    }
    assert spec["timeout"] == "12h"
    assert spec["retryLimit"] == 0
    assert spec["command"][:2] == ["/bin/sh", "-c"]
    assert spec["image"] == "registry.example/train:1"


def test_a_multi_node_job_is_distributed_one_pod_per_node() -> None:
    (job,) = convert(sbatch("-J llm", "-N 4", "--gres=gpu:a100:8", "--mem=0")).jobs
    spec = job["spec"]
    assert spec["distributed"] == {"enabled": True, "nodes": 4, "gpusPerNode": 8, "backend": "nccl"}
    assert spec["gpus"] == 8
    assert spec["gpuType"] == "A100"
    assert spec["resources"] == {"requests": {"cpu": "1"}}
    env = env_of(job)
    assert env["SLURM_NNODES"] == env["SLURM_JOB_NUM_NODES"] == "4"
    hosts = [f"llm-{i}.llm-headless" for i in range(4)]
    assert env["SLURM_JOB_NODELIST"] == ",".join(hosts)


def test_cpu_only_multi_node_jobs_use_gloo() -> None:
    (job,) = convert(sbatch("-N 2")).jobs
    assert job["spec"]["distributed"]["backend"] == "gloo"
    assert job["spec"]["gpus"] == 0


def test_slurm_variables_follow_slurms_conditions() -> None:
    (job,) = convert(sbatch("-J a", "-N 2", "--ntasks-per-node=4", "-c 2", "--gpus-per-node=4",
                            "--mem-per-cpu=1G", "-p gpu")).jobs  # fmt: skip
    env = env_of(job)
    assert env["SLURM_JOB_NAME"] == "a"
    assert env["SLURM_NTASKS"] == env["SLURM_NPROCS"] == "8"
    assert env["SLURM_NTASKS_PER_NODE"] == "4"
    assert env["SLURM_TASKS_PER_NODE"] == "4(x2)"
    assert env["SLURM_CPUS_PER_TASK"] == "2"
    assert env["SLURM_CPUS_ON_NODE"] == "8"
    assert env["SLURM_GPUS_ON_NODE"] == env["SLURM_GPUS_PER_NODE"] == "4"
    assert env["SLURM_MEM_PER_CPU"] == "1024"
    assert env["SLURM_JOB_PARTITION"] == "gpu"
    assert env["SLURM_CLUSTER_NAME"] == "gryvia"
    (plain,) = convert(sbatch("-J b")).jobs
    assert "SLURM_NTASKS" not in env_of(plain)
    assert "SLURM_CPUS_PER_TASK" not in env_of(plain)


def test_an_uneven_layout_reaches_the_pods() -> None:
    # issue 39, finding 4: -N 2 -n 5 was refused; Slurm runs it as 3 + 2 tasks
    conversion = convert(sbatch("-N 2", "-n 5", "-c 2"))
    assert conversion.ok, conversion.report["errors"]
    (job,) = conversion.jobs
    env = env_of(job)
    assert (env["SLURM_NTASKS"], env["SLURM_TASKS_PER_NODE"]) == ("5", "3,2")
    assert env["GRYVIA_SLURM_TASKS_PER_NODE"] == "3,2"
    assert job["spec"]["distributed"]["nodes"] == 2
    assert job["spec"]["resources"]["requests"]["cpu"] == "6"  # the largest share, 3 x 2
    assert conversion.report["resources"]["taskLayout"] == [3, 2]
    (four,) = convert(sbatch("-N 4", "-n 6")).jobs
    assert env_of(four)["SLURM_TASKS_PER_NODE"] == "2(x2),1(x2)"


def test_runtime_variables_come_from_the_pod() -> None:
    conversion = convert(sbatch("-N 2", "-t 90"))
    (job,) = conversion.jobs
    env = {e["name"]: e for e in job["spec"]["env"]}
    assert env["GRYVIA_SLURM_TASKS_PER_NODE"]["value"] == "1"
    assert env["GRYVIA_SLURM_TIME_LIMIT"]["value"] == "5400"
    assert env["GRYVIA_JOB_UID"]["valueFrom"]["fieldRef"]["fieldPath"].endswith(
        "['batch.kubernetes.io/controller-uid']"
    )
    plain = env_of(job, conversion.runtime)
    assert plain["GRYVIA_SBATCH_SCRIPT"].startswith("#!/bin/bash\n")
    runtime = json.loads(plain["GRYVIA_SLURM_RUNTIME"])
    assert set(runtime) == {
        "shim.py", "slurm_common.py", "slurm_step.py", "slurm_commands.py", "slurm_output.py"
    }  # fmt: skip
    assert "MASTER_ADDR" in env["GRYVIA_SLURM_SCRUB"]["value"]


def test_exported_values_become_env_and_are_not_scrubbed() -> None:
    (job,) = convert(sbatch("--export=ALL,OMP_NUM_THREADS=8,NCCL_DEBUG=WARN")).jobs
    env = env_of(job)
    assert env["OMP_NUM_THREADS"] == "8"
    assert env["SLURM_EXPORT_ENV"] == "ALL,OMP_NUM_THREADS=8,NCCL_DEBUG=WARN"
    assert "NCCL_DEBUG" not in env["GRYVIA_SLURM_SCRUB"].split(",")
    names = [e["name"] for e in job["spec"]["env"]]
    assert names.index("OMP_NUM_THREADS") < names.index("SLURM_JOB_NAME")  # user env first


def test_export_of_a_name_without_value_warns() -> None:
    conversion = convert(sbatch("--export=ALL,HOME"))
    assert codes(conversion.report["warnings"]) == ["export-from-submit-shell"]


def test_job_name_defaults_to_the_script_file_name_and_is_sanitised() -> None:
    conversion = convert(sbatch("-N 1"), name="/home/u/jobs/17-Time_MMSS.sh")
    assert conversion.report["jobName"] == "17-Time_MMSS.sh"
    (job,) = conversion.jobs
    assert job["metadata"]["name"] == "job-17-time-mmss-sh"
    assert env_of(job)["SLURM_JOB_NAME"] == "17-Time_MMSS.sh"
    assert job["metadata"]["annotations"]["gryvia.io/sbatch-job-name"] == "17-Time_MMSS.sh"


def test_long_names_leave_room_for_the_service_and_array_suffix() -> None:
    jobs = convert(sbatch(f"-J {'x' * 90}", "--array=0-100")).jobs
    assert all(len(job["metadata"]["name"] + "-headless") <= 63 for job in jobs)


def test_partition_chdir_comment_map_to_fields() -> None:
    conversion = convert(sbatch("-p a100q", "-D /data/run", "--comment=nightly"))
    (job,) = conversion.jobs
    assert job["spec"]["queueName"] == "a100q"
    assert job["spec"]["workingDir"] == "/data/run"
    assert job["metadata"]["annotations"]["gryvia.io/sbatch-comment"] == "nightly"
    assert codes(conversion.report["warnings"]) == ["partition-as-queue"]
    fields = {item["directive"]: item["field"] for item in conversion.report["mapped"]}
    assert fields["--partition"] == "spec.queueName"
    assert fields["--chdir"] == "spec.workingDir"


def test_a_relative_chdir_warns() -> None:
    assert codes(convert(sbatch("-D work")).report["warnings"]) == ["relative-chdir"]


def test_image_from_flag_or_pyxis_directive() -> None:
    (job,) = convert(
        sbatch("--container-image='nvcr.io#nvidia/pytorch:24.05-py3'"), image=None
    ).jobs
    assert job["spec"]["image"] == "nvcr.io/nvidia/pytorch:24.05-py3"
    # unquoted, the '#' starts a comment, exactly as in Slurm
    conversion = convert(sbatch("--container-image=nvcr.io#nvidia/pytorch:1"), image=None)
    assert conversion.jobs[0]["spec"]["image"] == "nvcr.io"
    assert codes(conversion.report["warnings"]) == ["image-without-repository"]
    (job,) = convert(sbatch('--container-image="nvcr.io#nvidia/pytorch:1"'), image="mine:2").jobs
    assert job["spec"]["image"] == "mine:2"
    assert pyxis_image("user@nvcr.io#nvidia/pytorch:1") == "nvcr.io/nvidia/pytorch:1"
    assert pyxis_image("docker://ubuntu:22.04") == "ubuntu:22.04"


def test_missing_or_local_images_are_errors() -> None:
    assert codes(convert(sbatch("-N 1"), image=None).report["errors"]) == ["missing-image"]
    local = convert(sbatch("--container-image=/scratch/img.sqsh"), image=None)
    assert codes(local.report["errors"]) == ["local-image"]
    assert convert(sbatch("-N 1"), image=None, require_image=False).ok


def test_arrays_become_one_job_per_index_with_labels_and_env() -> None:
    jobs = convert(sbatch("-J eval", "--array=0-15:4")).jobs
    assert [job["metadata"]["name"] for job in jobs] == ["eval-0", "eval-4", "eval-8", "eval-12"]
    for job, index in zip(jobs, (0, 4, 8, 12), strict=True):
        labels = job["metadata"]["labels"]
        assert labels[LABEL_ARRAY_NAME] == "eval"
        assert labels[LABEL_ARRAY_INDEX] == str(index)
        env = env_of(job)
        assert env["SLURM_ARRAY_TASK_ID"] == str(index)
        assert env["SLURM_ARRAY_TASK_COUNT"] == "4"
        assert (env["SLURM_ARRAY_TASK_MIN"], env["SLURM_ARRAY_TASK_MAX"]) == ("0", "12")
        assert env["SLURM_ARRAY_TASK_STEP"] == "4"
        assert env["SLURM_JOB_NODELIST"] == f"eval-{index}-0.eval-{index}-headless"
        assert "suspend" not in job["spec"]
    assert len({env_of(job)["SLURM_ARRAY_JOB_ID"] for job in jobs}) == 1


def test_throttled_arrays_suspend_the_elements_beyond_the_limit() -> None:
    jobs = convert(sbatch("-J eval", "--array=0-9%2")).jobs
    assert [job["spec"]["suspend"] for job in jobs] == [False, False] + [True] * 8
    annotations = jobs[5]["metadata"]["annotations"]
    assert annotations["gryvia.io/array-max-parallel"] == "2"


def test_array_job_id_changes_with_the_submission_id() -> None:
    first = convert(sbatch("--array=1-2"), submission_id="a").jobs
    second = convert(sbatch("--array=1-2"), submission_id="b").jobs
    assert env_of(first[0])["SLURM_ARRAY_JOB_ID"] != env_of(second[0])["SLURM_ARRAY_JOB_ID"]


def test_namespace_is_set_when_given() -> None:
    (job,) = convert(sbatch("-N 1"), namespace="team-a").jobs
    assert job["metadata"]["namespace"] == "team-a"


def test_the_manifest_stays_small_and_serialises() -> None:
    (job,) = convert(sbatch("-N 2")).jobs
    assert len(json.dumps(job)) < 200 * 1024
    assert yaml.safe_load(yaml.safe_dump(job)) == job


def test_too_large_scripts_are_refused() -> None:
    body = "echo " + "x" * MAX_SCRIPT_BYTES
    assert codes(convert(make_script("#SBATCH -N 1", body=body)).report["errors"]) == [
        "script-too-large"
    ]


def test_the_fallback_srun_knows_every_srun_option_with_an_argument() -> None:
    text = fallback()
    assert "--ntasks|" in text and "--cpus-per-task|" in text
    assert "@" not in text.split("GRYVIA_EOF")[0][-50:]
    assert "GRYVIA_SLURM_RUNTIME" in entrypoint() and "GRYVIA_SLURM_FALLBACK" in entrypoint()


def test_report_shape() -> None:
    report = convert(sbatch("-J r", "-N 2", "--gres=gpu:h100:4", "-c 4", "--mem=8G", "-t 1-12",
                            "--mail-type=END", "--array=0-3%1")).report  # fmt: skip
    assert report["jobName"] == "r"
    assert report["resources"] == {
        "nodes": 2,
        "gpusPerNode": 4,
        "totalGpus": 8,
        "gpuType": "h100",
        "gryviaGpuType": "H100",
        "gpuTypeSource": "gres",
        "cpusPerPod": 4,
        "memoryPerPodBytes": 8 * 2**30,
        "memoryWholeNode": False,
        "tasksPerPod": 1,
        "taskLayout": [1, 1],
        "timeLimitSeconds": 129600,
    }
    assert report["array"] == {"indices": [0, 1, 2, 3], "maxParallel": 1}
    assert report["env"]["SLURM_ARRAY_TASK_COUNT"] == "4"
    assert not any(name.startswith("GRYVIA_") for name in report["env"])
    (item,) = report["unsupported"]
    assert set(item) == {"code", "line", "directive", "message"}
    assert item["directive"] == "--mail-type" and item["line"] == 8
    assert report["errors"] == []


def test_finding_6_partition_list_and_exclusive_user() -> None:
    # issue 39, finding 6: Slurm sets SLURM_JOB_PARTITION to the one partition the job runs
    # in, never the list; --exclusive=user|mcs is said, not dropped silently
    conversion = convert(sbatch("-p gpu,debug", "--exclusive=user"))
    assert env_of(conversion.jobs[0])["SLURM_JOB_PARTITION"] == "gpu"
    (said,) = [i for i in conversion.issues if i.code == "exclusive-shared-node"]
    assert "--exclusive=user" in said.message and "any other pod" in said.message
    assert "exclusive-shared-node" in codes(convert(sbatch("--exclusive=mcs")).issues)
