"""Write N varied synthetic batch scripts into a folder (for `gryvia sbatch check` benchmarks).

Usage: python -m gryvia_cli.sbatch.corpus OUT_DIR N [--seed S]

The mix follows what real sites submit: single-GPU jobs, multi-node torchrun with srun and
scontrol, MPI layouts, throttled arrays, CPU follow-ups with dependencies, every Slurm time and
memory spelling, plus a share of scripts sbatch itself refuses (no shebang, CRLF, stray words,
conflicting memory options) and of directives Gryvia cannot translate. Deterministic per seed.
"""

from __future__ import annotations

import argparse
import random
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

TIMES = ("30", "45:00", "10:30", "2:00:00", "12:00:00", "1-12", "0-06:00", "2-00:00:00", "72:00:00")
MEMORY = ("4096", "16G", "32GB", "24000M", "8g", "20Gb", "512000K")
GPU_MODELS = ("a100", "h100", "v100", "l40s", "a100_80gb", "t4")
EXTRAS = (
    "--partition=gpu", "--account=proj123", "--qos=normal", "--exclusive", "--mail-type=END,FAIL",
    "--mail-user=me@example.org", "--output=logs/%x-%j.out", "--error=logs/%x-%j.err",
    "--requeue", "--signal=B:USR1@120", "--constraint=h100", "--export=ALL,OMP_NUM_THREADS=8",
    "--chdir=/data/project", "--comment=nightly", "--hint=nomultithread", "--nice=10",
)  # fmt: skip


def _header(rng: random.Random, name: str, lines: Sequence[str]) -> list[str]:
    shebang = rng.choice(("#!/bin/bash", "#!/bin/bash -l", "#!/bin/sh", "#!/usr/bin/env bash"))
    extras = rng.sample(EXTRAS, rng.randint(0, 4))
    directives = [f"--job-name={name}", *lines, f"--time={rng.choice(TIMES)}", *extras]
    out = [shebang]
    for directive in directives:
        comment = rng.choice(("", "", "   # tuned last week"))
        out.append(f"#SBATCH {directive}{comment}")
    return out


def _single(rng: random.Random, name: str) -> list[str]:
    gres = rng.choice(("--gres=gpu:1", f"--gres=gpu:{rng.choice(GPU_MODELS)}:1", "--gpus=1"))
    lines = [gres, f"--cpus-per-task={rng.choice((4, 8, 16))}", f"--mem={rng.choice(MEMORY)}"]
    return [*_header(rng, name, lines), "", "module load cuda", "python train.py --epochs 10"]


def _torchrun(rng: random.Random, name: str) -> list[str]:
    nodes, gpus = rng.choice((2, 4, 8)), rng.choice((4, 8))
    lines = [f"-N {nodes}", "--ntasks-per-node=1", f"--gres=gpu:{rng.choice(GPU_MODELS)}:{gpus}"]
    lines += [f"-c {rng.choice((32, 64, 96))}", f"--mem={rng.choice(('0', '480G'))}"]
    body = [
        "set -euo pipefail",
        'MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)',
        "export MASTER_ADDR MASTER_PORT=29500",
        f'srun torchrun --nnodes "$SLURM_NNODES" --nproc-per-node {gpus} \\',
        '  --rdzv-endpoint "$MASTER_ADDR:$MASTER_PORT" train.py',
    ]
    return [*_header(rng, name, lines), "", *body]


def _mpi(rng: random.Random, name: str) -> list[str]:
    lines = ["-N 2", f"--tasks-per-node={rng.choice((2, 4))}", "-c 2", "--gpus-per-node 4"]
    lines.append(f"--mem-per-cpu={rng.choice(('2G', '6G', '4000'))}")
    return [
        *_header(rng, name, lines),
        "",
        'echo "ranks: $SLURM_NTASKS"',
        "srun --mpi=pmix ./a.out",
    ]


def _array(rng: random.Random, name: str) -> list[str]:
    spec = rng.choice(("0-9%2", "1-100%10", "0-15:4", "1,3,7-9", "0-3"))
    lines = [f"--array={spec}", "--gpus=1", "-c 4", f"--mem={rng.choice(MEMORY)}"]
    body = ['echo "task ${SLURM_ARRAY_TASK_ID} of ${SLURM_ARRAY_TASK_COUNT}"', "python eval.py"]
    return [*_header(rng, name, lines), "", *body]


def _cpu(rng: random.Random, name: str) -> list[str]:
    lines = ["--gres=gpu:0", "--dependency=afterok:4242", "-c 2", "--mem=4096"]
    return [*_header(rng, name, lines), "", "python aggregate.py"]


def _late_directive(rng: random.Random, name: str) -> list[str]:
    script = _single(rng, name)
    return [*script, "#SBATCH --nodes=4", "echo done"]


def _broken(rng: random.Random, name: str) -> list[str]:
    script = _single(rng, name)
    kind = rng.choice(("shebang", "stray", "memory", "time", "nodes"))
    if kind == "shebang":
        return script[1:]
    if kind == "stray":
        return [script[0], f"#SBATCH --job-name={name} finetune", *script[2:]]
    if kind == "memory":
        return [script[0], "#SBATCH --mem=8G", "#SBATCH --mem-per-cpu=2G", *script[1:]]
    if kind == "time":
        return [script[0], "#SBATCH --time=24h", *script[1:]]
    return [script[0], "#SBATCH --nodes=NUM_NODES", *script[1:]]


KINDS: tuple[tuple[Callable[[random.Random, str], list[str]], int], ...] = (
    (_single, 30), (_torchrun, 20), (_mpi, 10), (_array, 12), (_cpu, 8), (_late_directive, 8),
    (_broken, 12),
)  # fmt: skip


def generate(out_dir: Path, count: int, seed: int = 7) -> list[Path]:
    """Write `count` scripts into `out_dir` (created if needed); returns their paths."""
    rng = random.Random(seed)
    out_dir.mkdir(parents=True, exist_ok=True)
    makers = [maker for maker, weight in KINDS for _ in range(weight)]
    paths = []
    for number in range(count):
        maker = rng.choice(makers)
        name = f"{maker.__name__.strip('_')}-{number:05d}"
        lines = maker(rng, name)
        text = "\n".join(lines) + "\n"
        if rng.random() < 0.02:
            text = text.replace("\n", "\r\n")
        path = out_dir / f"{name}.sh"
        path.write_bytes(text.encode())
        paths.append(path)
    return paths


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry: `python -m gryvia_cli.sbatch.corpus OUT_DIR N [--seed S]`."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("count", type=int)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    paths = generate(args.out_dir, args.count, args.seed)
    sys.stderr.write(f"wrote {len(paths)} scripts to {args.out_dir}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
