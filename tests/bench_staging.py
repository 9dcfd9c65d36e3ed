"""Dataset staging throughput: the copy Job of a GryviaDataset against a plain `rclone copy` of
the same objects, from the sandbox's S3 server (SeaweedFS) on the same machine.

Needs `make storage-bin s3-bin` (the provisioner and `weed`). For each run: 100 objects of
`SIZE_MB / 100` MB in a new bucket; `rclone copy` run here with default flags into a local
folder; the copy in the copy Job (rclone's own elapsed time, `status.copySeconds`); the copy
Job as a whole (its startTime to completionTime, whole seconds: the pod's start and the
re-listing that checks the source did not change); and the whole staging (the dataset created
to Ready: check Job, claim provisioning, copy Job, the operator's passes). Prints MB/s of
each and the ratios. `python -m tests.bench_staging [SIZE_MB]`
(default 200).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from tests.support.benchbox import BenchBox, kubectl_run, operator_sandbox

RUNS = 2
FILES = 100
API = "gryvia.io/v1alpha1"


def _seconds(start: str, end: str) -> float:
    parse = dt.datetime.fromisoformat
    return (parse(end.replace("Z", "+00:00")) - parse(start.replace("Z", "+00:00"))).total_seconds()


def _status(box: BenchBox, name: str) -> dict[str, Any]:
    out = kubectl_run(box.kubectl, "get", "gryviadataset", name, "-o", "json")
    return dict(json.loads(out).get("status") or {})


def _stage(box: BenchBox, run: int, bucket: str, endpoint: str) -> tuple[float, float, float]:
    """(rclone's copy seconds in the copy Job, the Job's seconds, create-to-Ready seconds) of
    one dataset of `bucket`."""
    name = f"bench-{run}"
    body = {
        "apiVersion": API,
        "kind": "GryviaDataset",
        "metadata": {"name": name},
        "spec": {
            "source": {"url": f"s3://{bucket}/d", "endpoint": endpoint,
                       "secretRef": {"name": "s3"}},
            "cache": {"storage": "bench", "size": "10Gi", "refreshSeconds": 0},
        },
    }  # fmt: skip
    t0 = time.monotonic()
    kubectl_run(box.kubectl, "create", "-f", "-", body=body)
    job_seconds = None
    selector = f"gryvia.io/dataset-role=copy,gryvia.io/dataset={name}"
    while time.monotonic() - t0 < 1800:
        got = kubectl_run(box.kubectl, "get", "jobs", "-n", "default", "-l", selector, "-o", "json")
        for job in json.loads(got)["items"]:
            st = job.get("status") or {}
            if st.get("completionTime") and st.get("startTime"):
                job_seconds = _seconds(st["startTime"], st["completionTime"])
        status = _status(box, name)
        if status.get("phase") == "Ready":
            if status.get("copySeconds") is None:
                raise RuntimeError("the dataset's status has no copySeconds")
            job = float("nan") if job_seconds is None else job_seconds  # deleted unseen
            return float(status["copySeconds"]), job, time.monotonic() - t0
        if status.get("phase") == "Failed":
            raise RuntimeError(f"staging failed: {status.get('message')}")
        time.sleep(0.25)
    raise RuntimeError("staging did not finish in 30 minutes")


def main() -> None:
    """Print the staging throughput table."""
    from gryvia_cli.sandbox import cluster, s3, storage

    own = len(sys.argv) > 1 and sys.argv[0].endswith("bench_staging.py")
    size_mb = int(sys.argv[1]) if own else 200
    rclone = shutil.which("rclone")
    if rclone is None or s3.missing() or storage.missing():
        raise RuntimeError("needs rclone, weed and the provisioner: make storage-bin s3-bin")
    with operator_sandbox("stage", "1xH100:8", []) as box:
        sb = cluster.Sandbox(box.name)
        storage.start(sb, lambda _: None)
        creds = s3.start(sb, lambda _: None)
        kubectl_run(
            box.kubectl, "create", "-f", "-",
            body={"apiVersion": "v1", "kind": "List", "items": [
                {"apiVersion": API, "kind": "GryviaStorage", "metadata": {"name": "bench"},
                 "spec": {"backend": "existing", "storageClass": storage.STORAGE_CLASS}},
                {"apiVersion": "v1", "kind": "Secret",
                 "metadata": {"name": "s3", "namespace": "default"},
                 "stringData": {"AWS_ACCESS_KEY_ID": creds.access_key_id,
                                "AWS_SECRET_ACCESS_KEY": creds.secret_access_key}},
            ]},
        )  # fmt: skip
        env = {"PATH": os.environ["PATH"], "HOME": str(box.workdir), "RCLONE_CONFIG": "/dev/null"}
        env |= s3.rclone_env(creds, "src")
        rows = []
        for run in range(RUNS):
            bucket = f"bench{run}"
            with tempfile.TemporaryDirectory() as tmp:
                src = Path(tmp) / "src"
                src.mkdir()
                for i in range(FILES):
                    (src / f"shard-{i:04d}.bin").write_bytes(os.urandom(size_mb * 10_000))
                subprocess.run([rclone, "copy", str(src), f"src:{bucket}/d"], env=env, check=True)
                t0 = time.monotonic()
                subprocess.run(
                    [rclone, "copy", f"src:{bucket}/d", str(Path(tmp) / "plain")],
                    env=env, check=True,
                )  # fmt: skip
                plain = time.monotonic() - t0
            copy, job, whole = _stage(box, run, bucket, creds.pod_endpoint)
            rows.append((plain, copy, job, whole))
        heads = ("rclone copy", "Job's copy", "copy Job", "create to Ready")
        print(f"dataset staging, {FILES} objects, {size_mb} MB, S3 (SeaweedFS) on loopback")
        print("  run  " + "  ".join(f"{h:>20}" for h in heads))
        for run, row in enumerate(rows):
            cells = [f"{t:6.2f} s {size_mb / t:6.1f} MB/s" for t in row]
            print(f"  {run:>3}  " + "  ".join(f"{c:>20}" for c in cells))
        best = [min((r[i] for r in rows), key=lambda t: (t != t, t)) for i in range(4)]
        print(
            f"  best of {RUNS}, time against rclone copy: the Job's copy {best[1] / best[0]:.2f}x, "
            f"the copy Job {best[2] / best[0]:.2f}x, create to Ready {best[3] / best[0]:.2f}x"
        )


if __name__ == "__main__":
    main()
