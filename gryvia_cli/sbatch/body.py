"""What the script body runs: the Slurm commands it calls and how the runtime handles each."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from gryvia_cli.sbatch.model import Issue, unsupported, warning

SLURM_COMMANDS: Final = (
    "srun", "scontrol", "sbatch", "squeue", "scancel", "sacct", "sinfo", "salloc", "sstat",
    "sattach", "sbcast", "sprio", "sshare", "sreport", "sacctmgr", "strigger",
)  # fmt: skip
SCONTROL_SUPPORTED: Final = frozenset({"hostnames", "hostname", "hostlist", "job"})
_COMMAND: Final = re.compile(
    r"(?<![\w./${-])(" + "|".join(SLURM_COMMANDS) + r")(?![\w.-])(?P<rest>[^;&|)`]*)"
)
_MPI_LAUNCHER: Final = re.compile(r"(?<![\w./-])(mpirun|mpiexec)(?![\w.-])")
_ADVICE: Final[dict[str, str]] = {
    "sbatch": "jobs cannot submit jobs from inside a pod; chain them with a GryviaWorkflow",
    "salloc": "there is no interactive allocation inside a job",
    "scancel": "to end the job, exit the script; to cancel it use `gryvia cancel` outside",
    "squeue": "queue queries are not available inside a job; use `gryvia status` outside",
    "sacct": "accounting queries are not available inside a job; use `gryvia usage` outside",
    "sstat": "step statistics are not available inside a job",
    "sinfo": "partition queries are not available inside a job",
}


@dataclass(frozen=True)
class CommandUse:
    """A Slurm command in the script body: the word, its line, and whether the pod runs it."""

    command: str
    line: int
    supported: bool

    def to_dict(self) -> dict[str, object]:
        """JSON shape for the report."""
        return {"command": self.command, "line": self.line, "supported": self.supported}


def _strip_comment(line: str) -> str:
    return re.sub(r"(^|\s)#.*$", "", line)


def scan_body(text: str, first_command_line: int | None) -> tuple[list[CommandUse], list[Issue]]:
    """Find Slurm commands in the lines from the first command on; report what is not handled.

    `srun` and `scontrol show hostnames|hostlist|job` run through the in-pod runtime; other
    Slurm commands fail inside the pod, so each is reported as unsupported with advice.
    """
    uses: list[CommandUse] = []
    issues: list[Issue] = []
    if first_command_line is None:
        return uses, issues
    lines = text.split("\n")
    reported: set[str] = set()
    for number in range(first_command_line, len(lines) + 1):
        line = _strip_comment(lines[number - 1])
        for match in _COMMAND.finditer(line):
            command = match.group(1)
            rest = match.group("rest").split()
            supported = command == "srun"
            key = command
            if command == "scontrol":
                words = [word for word in rest if not word.startswith("-")]
                topic = words[1].lower() if len(words) > 1 and words[0] == "show" else ""
                supported = topic in SCONTROL_SUPPORTED
                key = " ".join([command, *words[:2]])
            uses.append(CommandUse(command, number, supported))
            if command == "srun" and any(w.startswith("--mpi") and w != "--mpi=none" for w in rest):
                issues.append(
                    warning(
                        "srun-mpi",
                        "srun --mpi: tasks start on every pod with SLURM_PROCID, SLURM_NTASKS "
                        "and the node list, but without PMI/PMIx wiring; MPI programs must "
                        "bootstrap from those variables (e.g. torch.distributed, Horovod with "
                        "Gloo) or use mpirun with a host file",
                        number,
                        "srun",
                    )
                )
            if not supported and key not in reported:
                reported.add(key)
                shown = key if command == "scontrol" else command
                advice = _ADVICE.get(command, "not available inside a Gryvia job")
                issues.append(
                    unsupported(
                        "slurm-command",
                        f"`{shown}` will fail in the pod: {advice}",
                        number,
                        command,
                    )
                )
        if _MPI_LAUNCHER.search(line) and "mpi-launcher" not in reported:
            reported.add("mpi-launcher")
            issues.append(
                warning(
                    "mpi-launcher",
                    "mpirun/mpiexec relies on Slurm's launcher integration to find the nodes; in "
                    "a pod give it a host file (scontrol show hostnames > hosts) and a launcher "
                    "that works without ssh, or launch the ranks with srun",
                    number,
                )
            )
    return uses, issues
