"""etcd bytes of `gryvia sacct`'s history: 10,000 finished-job GryviaJobRecords in a bare
sandbox (no operator), as the operator writes them (`reconcile.jobrecords.build_job_record`,
then `handlers.jobrecords.write_record`: create, and clear the managedFields the create
recorded).

Prints the stored bytes per record (each object's JSON as the API server returns it, which is
what etcd holds for a custom resource), the API server's etcd database growth
(`apiserver_storage_size_bytes`, which also counts etcd's history and free pages), a sample of
records created with managedFields for comparison, and the roll-up pass's planning time over
the 10,000. `python -m tests.bench_jobrecords [N]` (default 10000).
"""

from __future__ import annotations

import datetime as dt
import json
import re
import sys
import time
from typing import Any

from gryvia_operator.reconcile.jobrecords import build_job_record, plan_rollup
from gryvia_operator.reconcile.views import PodView
from tests.builders import make_job
from tests.support.benchbox import BenchBox, kubectl_run, operator_sandbox

NAMESPACE = "history"
COMPARE = "with-managed-fields"
PARALLEL = 16
SAMPLE = 500
NOW = dt.datetime(2026, 12, 1, tzinfo=dt.UTC)


def _record(n: int) -> dict[str, Any]:
    """A typical record: a 2-pod, 16-GPU failed run with a submitter, nodes, cost and GPU use."""
    start = NOW - dt.timedelta(minutes=10 * n + 60)
    stamp = start.strftime("%Y-%m-%dT%H:%M:%SZ")
    end = (start + dt.timedelta(minutes=47)).strftime("%Y-%m-%dT%H:%M:%SZ")
    job = (
        make_job(f"train-{n:05d}", NAMESPACE).uid(f"5b0c1d2e-3f40-4a5b-8c6d-{n:012d}")
        .gpus(8).gpu_type("H100").distributed(nodes=2).timeout("4h")
        .annotate("gryvia.io/submitted-by", "alice@example.com")
        .meta(creationTimestamp=stamp)
        .status(phase="Failed", startTime=stamp, completionTime=end,
                metrics={"samples": 12, "meanActivityPercent": 63.2})
    ).obj()  # fmt: skip
    pods = [PodView(NAMESPACE, f"p{i}", node_name=f"gpu-h100-{i}", replica=i, exit_code=1)
            for i in range(2)]  # fmt: skip
    usage = [{"spec": {"gpuHours": 12.5333, "cost": "51.3867", "final": True}}]
    return build_job_record(job, tenant=NAMESPACE, pods=pods, usage=usage, now=NOW)


def _create(box: BenchBox, items: list[dict[str, Any]], *, strip: bool = True) -> None:
    """Create `items` PARALLEL at a time through the operator's own client and writer
    (`handlers.jobrecords.write_record`: create, then clear managedFields); `strip` False
    creates them only (managedFields kept), for the comparison."""
    import asyncio

    from gryvia_operator.controller.kubeapi import KubeApi, load_configuration
    from gryvia_operator.handlers.jobrecords import write_record

    async def run() -> None:
        api = KubeApi(load_configuration(box.kubeconfig), workers=PARALLEL)
        limit = asyncio.Semaphore(PARALLEL)

        async def one(body: dict[str, Any]) -> None:
            async with limit:
                await (write_record(api, body) if strip else api.create(body))

        try:
            await asyncio.gather(*(one(body) for body in items))
        finally:
            api.close()

    asyncio.run(run())


def _stored(box: BenchBox, namespace: str) -> list[dict[str, Any]]:
    out = kubectl_run(
        box.kubectl, "get", "gryviajobrecords", "-n", namespace, "-o", "json",
        "--show-managed-fields",
    )  # fmt: skip
    return list(json.loads(out)["items"])


def _db_bytes(box: BenchBox) -> int:
    text = kubectl_run(box.kubectl, "get", "--raw", "/metrics")
    found = re.findall(r"^apiserver_storage_size_bytes\{[^}]*\} (\S+)$", text, re.M)
    return int(sum(float(v) for v in found))


def _size(obj: dict[str, Any]) -> int:
    return len(json.dumps(obj, separators=(",", ":")).encode())


def main(argv: list[str] | None = None) -> int:
    """Create the records, measure, print."""
    args = argv if argv is not None else sys.argv[1:]
    n = int(args[0]) if args else 10_000
    records = [_record(i) for i in range(n)]
    with operator_sandbox("jrec", "1xcpu", [NAMESPACE, COMPARE]) as box:
        box.operator.kill()  # a bare sandbox: only the API server and etcd
        box.operator.wait()
        before = _db_bytes(box)
        started = time.monotonic()
        _create(box, records)
        took = time.monotonic() - started
        after = _db_bytes(box)
        stored = _stored(box, NAMESPACE)
        sample = [_record(i) for i in range(SAMPLE)]
        for rec in sample:
            rec["metadata"]["namespace"] = COMPARE
        _create(box, sample, strip=False)
        managed = _stored(box, COMPARE)
    sizes = [_size(o) for o in stored]
    with_mf = sum(_size(o) for o in managed) / max(len(managed), 1)
    assert all(not o["metadata"].get("managedFields") for o in stored)
    plan_started = time.perf_counter()
    plan = plan_rollup(stored, NOW)  # every record past the cut: the worst pass
    plan_ms = (time.perf_counter() - plan_started) * 1000
    print(f"{len(stored)} GryviaJobRecords created in {took:.1f} s")
    print(f"stored bytes per record: mean {sum(sizes) / len(sizes):.0f}, max {max(sizes)}")
    print(f"stored bytes, all records: {sum(sizes) / 1e6:.2f} MB")
    grown = after - before
    print(
        f"etcd database growth (apiserver_storage_size_bytes): {grown / 1e6:.2f} MB "
        f"({grown / len(stored):.0f} B per record, keys, history and free pages included)"
    )
    print(f"the same record with the managedFields of its create: {with_mf:.0f} B ({SAMPLE})")
    print(
        f"roll-up plan over {len(stored)} records: {plan_ms:.0f} ms, "
        f"{len(plan.writes)} roll-ups, {len(plan.deletes)} deletions"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
