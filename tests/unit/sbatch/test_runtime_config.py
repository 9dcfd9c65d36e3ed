"""The in-pod runtime and the script live once per job or array, in a ConfigMap the jobs own."""

from __future__ import annotations

import json
import time

from gryvia_cli.sbatch.launcher import RUNTIME_FILES, runtime_owners
from tests.unit.sbatch.helpers import convert, env_of, sbatch


def test_a_500_element_array_has_small_elements_and_one_runtime() -> None:
    start = time.perf_counter()
    conversion = convert(sbatch("--array=0-499%20", "--gres=gpu:1", "-c 4", body="python x.py"))
    elapsed = time.perf_counter() - start
    assert conversion.ok and len(conversion.jobs) == 500
    sizes = [len(json.dumps(job, separators=(",", ":"))) for job in conversion.jobs]
    assert max(sizes) <= 8 * 1024
    runtime = conversion.runtime
    assert runtime is not None and runtime["kind"] == "ConfigMap"
    assert runtime["metadata"]["name"] == "job-sh-slurm-runtime"
    assert runtime["metadata"]["labels"]["gryvia.io/array-name"] == "job-sh"
    assert set(json.loads(runtime["data"]["runtime"])) == set(RUNTIME_FILES)
    docs = conversion.documents
    assert docs[0] is runtime and len(docs) == 501
    assert elapsed < 10  # about 0.3 s; generous for a loaded machine


def test_every_element_reads_script_and_runtime_from_the_config_map() -> None:
    conversion = convert(sbatch("-N 2", "--array=1-3"), namespace="team-a")
    assert conversion.runtime is not None
    assert conversion.runtime["metadata"]["namespace"] == "team-a"
    for job in conversion.jobs:
        refs = {
            e["name"]: e["valueFrom"]["configMapKeyRef"]
            for e in job["spec"]["env"]
            if "configMapKeyRef" in e.get("valueFrom", {})
        }
        assert refs == {
            "GRYVIA_SBATCH_SCRIPT": {"name": "job-sh-slurm-runtime", "key": "script"},
            "GRYVIA_SLURM_RUNTIME": {"name": "job-sh-slurm-runtime", "key": "runtime"},
            "GRYVIA_SLURM_FALLBACK": {
                "name": "job-sh-slurm-runtime",
                "key": "fallback",
                "optional": True,
            },
        }
        assert env_of(job, conversion.runtime)["GRYVIA_SBATCH_SCRIPT"].startswith("#!/bin/bash")


def test_an_array_element_stays_small_whatever_the_runtime_carries() -> None:
    # 500 elements, each stored by the API server with status and managed fields: the
    # no-python3 fallback and the runtime live once in the ConfigMap, not in every element.
    conversion = convert(sbatch("--array=0-499%4", "-t 10"))
    sizes = {len(json.dumps(job)) for job in conversion.jobs}
    assert max(sizes) <= 5 * 1024, sizes  # was 7.4 KiB with the fallback inline
    assert conversion.runtime is not None
    assert "srun: error: starting" in conversion.runtime["data"]["fallback"]


def test_a_refused_script_has_no_runtime() -> None:
    conversion = convert(sbatch("--mem=1G", "--mem-per-cpu=1G"))
    assert conversion.runtime is None and conversion.documents == []


def test_the_created_jobs_own_the_runtime() -> None:
    kind = {"apiVersion": "gryvia.io/v1alpha1", "kind": "GryviaAIJob"}
    created = [kind | {"metadata": {"name": f"sweep-{i}", "uid": f"u{i}"}} for i in range(3)]
    created.append(kind | {"metadata": {"name": "no-uid-yet"}})
    patch = runtime_owners(created)
    owners = patch["metadata"]["ownerReferences"]
    assert [o["name"] for o in owners] == ["sweep-0", "sweep-1", "sweep-2"]
    assert owners[0] == {
        "apiVersion": "gryvia.io/v1alpha1", "kind": "GryviaAIJob", "name": "sweep-0", "uid": "u0"
    }  # fmt: skip
