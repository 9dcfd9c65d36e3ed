"""The exporter's NVML mode on a machine with an NVIDIA GPU: a busy GPU reads busy, an idle
one reads idle.

Starts `python -m gryvia_operator.exporter` (NVML), then on GPU 0 a PyTorch loop of
bf16 matrix products (busy) and, after it, a process that holds GPU memory and sleeps (idle).
During each it scrapes /metrics once a second and reads the activity the way the operator
does (`gryvia_operator.api.dcgm.activity`: the profiling field where served, else
`DCGM_FI_DEV_GPU_UTIL`). Prints a table and writes the samples to $OUT/nvml-check.json (or
./nvml-check.json). Exit 0 when busy reads at least 80 % and idle at most 5 % (medians),
1 when not, 2 when the machine has no GPU or PyTorch.

Needs: python3 with torch (CUDA), nvidia-ml-py and prometheus-client. Run from the
repository's root: `python3 tools/gpu/nvml_check.py`.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from gryvia_operator.api.dcgm import (
    FIELD_FB_USED,
    FIELD_GPU_UTIL,
    FIELD_POWER_USAGE,
    activity,
    parse,
    tensor_activity,
)

PORT = 9417
BUSY = """
import time, torch
a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
b = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
print("ready", flush=True)
end = time.time() + float(__import__("sys").argv[1])
while time.time() < end:
    for _ in range(20):
        c = a @ b
    torch.cuda.synchronize()
"""
IDLE = """
import time, torch
held = torch.empty(4 * 1024**3, dtype=torch.uint8, device="cuda")
torch.cuda.synchronize()
print("ready", flush=True)
time.sleep(float(__import__("sys").argv[1]))
"""


def scrape() -> dict[str, object] | None:
    """GPU 0's figures from one scrape, or None when the exporter does not answer yet."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{PORT}/metrics", timeout=5) as answer:
            text = answer.read().decode()
    except OSError:
        return None
    gpu0 = next((r for r in parse(text) if r.gpu == 0), None)
    if gpu0 is None:
        return None
    measured = activity(gpu0)
    return {
        "time": round(time.time(), 2),
        "activity_percent": round(measured[0], 2) if measured else None,
        "field": measured[1] if measured else None,
        "gpu_util_percent": gpu0.values.get(FIELD_GPU_UTIL),
        "tensor_percent": None if (t := tensor_activity(gpu0)) is None else round(t, 2),
        "memory_used_mib": gpu0.values.get(FIELD_FB_USED),
        "power_w": gpu0.values.get(FIELD_POWER_USAGE),
        "model": gpu0.model,
        "fields": sorted(gpu0.values),
    }


def phase(name: str, program: str, seconds: float) -> list[dict[str, object]]:
    """Run `program` on the GPU and scrape once a second while it runs (after a 3 s settle)."""
    child = subprocess.Popen(
        [sys.executable, "-c", program, str(seconds + 10)], stdout=subprocess.PIPE, text=True
    )
    assert child.stdout is not None
    if child.stdout.readline().strip() != "ready":
        child.kill()
        raise SystemExit(f"{name}: the GPU program did not start")
    time.sleep(3)  # let the device counters cover a window of this phase only
    samples = []
    end = time.time() + seconds
    while time.time() < end:
        if (sample := scrape()) is not None:
            sample["phase"] = name
            samples.append(sample)
        time.sleep(1)
    child.terminate()
    child.wait(30)
    return samples


def main() -> int:
    """Run both phases; print and save the samples; return the exit code."""
    try:
        import torch

        if not torch.cuda.is_available():
            print("no CUDA GPU here", file=sys.stderr)
            return 2
    except ImportError:
        print("PyTorch is not installed", file=sys.stderr)
        return 2
    exporter = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gryvia_operator.exporter",
            "--address",
            f"127.0.0.1:{PORT}",
        ],
        cwd=Path(__file__).resolve().parents[2],
    )
    try:
        deadline = time.time() + 60
        while scrape() is None:
            if exporter.poll() is not None or time.time() > deadline:
                print("the exporter did not serve GPU 0", file=sys.stderr)
                return 1
            time.sleep(0.5)
        samples = phase("busy", BUSY, 15) + phase("idle", IDLE, 12)
    finally:
        exporter.terminate()
        exporter.wait(30)
    medians = {}
    for name in ("busy", "idle"):
        values = [s["activity_percent"] for s in samples if s["phase"] == name]
        numbers = [float(v) for v in values if isinstance(v, int | float)]
        medians[name] = statistics.median(numbers) if numbers else None
    print(
        f"{'phase':5} {'activity%':>9} {'field':30} {'util%':>5} {'tensor%':>7} "
        f"{'memMiB':>7} {'powerW':>7}"
    )
    for s in samples:
        print(
            f"{s['phase']:5} {s['activity_percent']!s:>9} {s['field']!s:30} "
            f"{s['gpu_util_percent']!s:>5} {s['tensor_percent']!s:>7} "
            f"{s['memory_used_mib']!s:>7} {s['power_w']!s:>7}"
        )
    print(
        f"model: {samples[0]['model'] if samples else '?'}; fields served: "
        f"{samples[-1]['fields'] if samples else []}"
    )
    print(f"median activity: busy {medians['busy']} %, idle {medians['idle']} %")
    out = Path(os.environ.get("OUT", ".")) / "nvml-check.json"
    out.write_text(json.dumps({"medians": medians, "samples": samples}, indent=1))
    busy, idle = medians["busy"], medians["idle"]
    ok = busy is not None and idle is not None and busy >= 80 and idle <= 5
    print("PASS" if ok else "FAIL: expected busy >= 80 % and idle <= 5 %")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
