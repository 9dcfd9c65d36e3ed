"""`scontrol` inside an imported job, and stand-ins for Slurm commands a pod cannot offer."""

from __future__ import annotations

import os
import sys

try:  # imported from the gryvia package (tests, type checking)
    from . import slurm_common as common
except ImportError:  # run from the pod's run directory, where the runtime files sit side by side
    import slurm_common as common  # type: ignore[no-redef]


def emit(text: str) -> None:
    """Print to stdout, tolerating a reader that went away (`... | head -n 1`)."""
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def scontrol_main(args: list[str]) -> int:
    """The parts of scontrol(1) batch scripts use: `show hostnames|hostname|hostlist|job`."""
    words = [word for word in args if not word.startswith("-")]
    what = words[1].lower() if len(words) > 1 and words[0].lower() == "show" else ""
    rest = words[2:]
    env = os.environ
    if what in ("hostnames", "hostname"):
        names = common.expand_hostlist(rest[0] if rest else env.get("SLURM_JOB_NODELIST", ""))
        emit("".join(name + "\n" for name in names))
        return 0
    if what == "hostlist" and rest:
        emit(common.compress_hostlist(common.expand_hostlist(rest[0])) + "\n")
        return 0
    if what == "job":
        nodelist = env.get("SLURM_JOB_NODELIST", "")
        fields = {
            "JobId": env.get("SLURM_JOB_ID", ""),
            "JobName": env.get("SLURM_JOB_NAME", ""),
            "JobState": "RUNNING",
            "NumNodes": env.get("SLURM_NNODES", "1"),
            "NumCPUs": env.get("SLURM_CPUS_ON_NODE", "1"),
            "NumTasks": env.get("SLURM_NTASKS", env.get("SLURM_NNODES", "1")),
            "CPUs/Task": env.get("SLURM_CPUS_PER_TASK", "1"),
            "Partition": env.get("SLURM_JOB_PARTITION", ""),
            "NodeList": nodelist,
            "BatchHost": (common.expand_hostlist(nodelist) or ["?"])[0],
            "WorkDir": env.get("SLURM_SUBMIT_DIR", ""),
        }
        emit("\n   ".join(f"{key}={value}" for key, value in fields.items()) + "\n")
        return 0
    command = " ".join(args)
    sys.stderr.write(
        f"scontrol: error: `scontrol {command}` is not available inside a Gryvia job "
        "(only show hostnames/hostname/hostlist/job)\n"
    )
    return 1


def missing_main(name: str) -> int:
    """Stand-in for a Slurm command with no meaning inside a pod."""
    sys.stderr.write(
        f"{name}: error: Slurm's `{name}` is not available inside a Gryvia job; see the import "
        "report (gryvia sbatch convert)\n"
    )
    return 1
