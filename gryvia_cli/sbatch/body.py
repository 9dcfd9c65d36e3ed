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
    "sbatch": "jobs cannot submit jobs from inside a pod; submit the next job with "
    "`gryvia submit` from outside (`--wait` waits for this one to end)",
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


_HEREDOC: Final = re.compile(r"(?<!<)<<(-?)[ \t]*(['\"]?)([A-Za-z_][\w]*)\2")
_QUOTED: Final = re.compile(r"\"(?:[^\"\\]|\\.)*\"|'[^']*'")
_SUBSTITUTION: Final = re.compile(r"\$\(([^()]*)\)|`([^`]*)`")
_GUARD: Final = re.compile(
    r"(?<![\w-])(?:command[ \t]+-[vV]|which|type|hash)[ \t]+(" + "|".join(SLURM_COMMANDS) + r")\b"
)
_ECHO: Final = re.compile(r"(?<![\w./-])(echo|printf)[ \t][^;&|)`]*")
_PRINTED: Final = re.compile(r"(?<![\w./-])(echo|printf)([ \t]+-\w+)*[ \t]*$")
_STARTS_WITH_COMMAND: Final = re.compile(r"[ \t]*(" + "|".join(SLURM_COMMANDS) + r")(?![\w.-])")
_ERREXIT: Final = re.compile(r"^(#!.*\s-\w*e|[ \t]*set[ \t]+(-\w*e\w*|-o[ \t]+errexit))", re.M)
"""errexit on: `set -e` (alone or in a group of flags), `set -o errexit` or `#!/bin/bash -e`."""
_MODULE: Final = re.compile(r"^[ \t]*(module|ml)[ \t]+(load|add|swap|switch|use|purge|restore)\b")


def _strip_comment(line: str) -> str:
    return re.sub(r"(^|\s)#.*$", "", line)


def _unquote(line: str) -> str:
    """The line as far as commands go: a quoted string counts only when it is a command string
    (`--cluster "sbatch -p ..."`, `sh -c 'srun ...'`), else only its `$(...)` parts do; the
    words `echo`/`printf` print are no commands."""

    def keep(match: re.Match[str]) -> str:
        text = match.group(0)
        inner = text[1:-1]
        printed = _PRINTED.search(match.string[: match.start()]) is not None
        if not printed and _STARTS_WITH_COMMAND.match(inner):
            return f" ; {inner} ; "
        if text.startswith("'"):
            return " "
        parts = [a or b for a, b in _SUBSTITUTION.findall(inner)]
        return " ; " + " ; ".join(parts) + " ; " if parts else " "

    text = _QUOTED.sub(keep, line)
    return _ECHO.sub(" ", text)


def code_lines(text: str, first_command_line: int) -> list[tuple[int, str]]:
    """(line number, code) from the first command on: comments, heredoc bodies and printed or
    quoted text removed (see `_unquote`)."""
    lines = text.split("\n")
    out: list[tuple[int, str]] = []
    until: tuple[str, bool] | None = None
    for number in range(first_command_line, len(lines) + 1):
        raw = lines[number - 1]
        if until is not None:
            word, tabs = until
            if (raw.lstrip("\t") if tabs else raw).rstrip() == word:
                until = None
            continue
        heredoc = _HEREDOC.search(raw)
        if heredoc is not None:
            until = (heredoc.group(3), heredoc.group(1) == "-")
        out.append((number, _strip_comment(_unquote(raw))))
    return out


def scan_body(text: str, first_command_line: int | None) -> tuple[list[CommandUse], list[Issue]]:
    """Find Slurm commands in the lines from the first command on; report what is not handled.

    `srun` and `scontrol show hostnames|hostlist|job` run through the in-pod runtime; other
    Slurm commands fail inside the pod, so each is reported as unsupported with advice, unless
    it only appears in printed text, a heredoc, or behind a `command -v`/`which` guard.
    `module load` is warned about once (no module system in most images).
    """
    uses: list[CommandUse] = []
    issues: list[Issue] = []
    if first_command_line is None:
        return uses, issues
    reported: set[str] = set()
    code = code_lines(text, first_command_line)
    guarded = {match.group(1) for _, line in code for match in _GUARD.finditer(line)}
    for number, line in code:
        line = _GUARD.sub(" ", line)
        if _MODULE.match(line) and "module" not in reported:
            reported.add("module")
            effect = (
                "the pod fails with `module: command not found` (errexit is on)"
                if _ERREXIT.search(text)
                else "the line prints `module: command not found` and the script goes on "
                "without what it loads"
            )
            issues.append(
                warning(
                    "module-command",
                    "`module` needs Environment Modules or Lmod, which container images rarely "
                    f"have: {effect}; install the software in the image (or guard the line "
                    "with `command -v module`)",
                    number,
                    "module",
                )
            )
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
            if not supported and key not in reported and command not in guarded:
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
