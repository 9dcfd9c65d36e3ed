"""`--output`/`--error` in the pod: the batch script's stdout and stderr also go to the named
files, as slurmstepd writes them, and stay in the pod log (stdlib only, Python 3.7+).

Env (set by the importer): GRYVIA_SLURM_OUTPUT and GRYVIA_SLURM_ERROR hold the patterns as
written, GRYVIA_SLURM_OPEN_MODE `append` or `truncate` (the default). Patterns follow
sbatch(1) "filename pattern": %x job name, %j job id, %J job id.batch, %A array job id,
%a array index, %N first node, %n node id, %s step, %t task id, %u user, %% a percent sign,
and a number after % pads numbers with zeros (`%4a`). A relative path is taken from the
working directory. With only --output, stderr goes to that file too (Slurm's rule). Unlike
Slurm, a missing directory is created: a fresh pod cannot have made it beforehand.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any

OUTPUT_ENV = "GRYVIA_SLURM_OUTPUT"
ERROR_ENV = "GRYVIA_SLURM_ERROR"
OPEN_MODE_ENV = "GRYVIA_SLURM_OPEN_MODE"
NO_ARRAY_INDEX = "4294967294"  # Slurm's NO_VAL: %a of a job that is not an array element
_PATTERN = re.compile(r"%(\d*)([%AaJjNnstux])")


def expand(pattern: str, env: Mapping[str, str]) -> str:
    """A filename pattern with the batch step's values filled in."""
    job_id = env.get("SLURM_JOB_ID", "")
    values = {
        "A": env.get("SLURM_ARRAY_JOB_ID") or job_id,
        "a": env.get("SLURM_ARRAY_TASK_ID") or NO_ARRAY_INDEX,
        "J": job_id + ".batch",
        "j": job_id,
        "N": env.get("SLURMD_NODENAME", ""),
        "n": "0",
        "s": "batch",
        "t": "0",
        "u": env.get("SLURM_JOB_USER") or env.get("USER", ""),
        "x": env.get("SLURM_JOB_NAME", ""),
    }

    def one(match: re.Match[str]) -> str:
        width, letter = match.group(1), match.group(2)
        if letter == "%":
            return "%"
        value = values[letter]
        return value.zfill(int(width)) if width and value.isdigit() else value

    return _PATTERN.sub(one, pattern)


class Outputs:
    """The open --output/--error files and the threads copying the script's pipes."""

    def __init__(self, env: Mapping[str, str], cwd: str) -> None:
        append = env.get(OPEN_MODE_ENV, "truncate").lower().startswith("a")
        self.out = self._open(env.get(OUTPUT_ENV), env, cwd, append)
        error = env.get(ERROR_ENV)
        same = error is None or (
            self.out is not None and expand(error, env) == expand(env.get(OUTPUT_ENV, ""), env)
        )
        self.err = self.out if same else self._open(error, env, cwd, append)
        self.lock = threading.Lock()
        self.threads: list[threading.Thread] = []

    @staticmethod
    def _open(pattern: str | None, env: Mapping[str, str], cwd: str, append: bool) -> Any:
        if not pattern:
            return None
        path = Path(expand(pattern, env))
        if not path.is_absolute():
            path = Path(cwd) / path
        path.parent.mkdir(parents=True, exist_ok=True)
        return path.open("ab" if append else "wb")

    @property
    def active(self) -> bool:
        """True when a file was named."""
        return self.out is not None or self.err is not None

    def popen_kwargs(self) -> dict[str, Any]:
        """Pipes for the streams that go to a file."""
        kwargs: dict[str, Any] = {}
        if self.out is not None:
            kwargs["stdout"] = subprocess.PIPE
        if self.err is not None:
            kwargs["stderr"] = subprocess.PIPE
        return kwargs

    def start(self, proc: subprocess.Popen[bytes]) -> None:
        """Copy the script's pipes to the pod log and the files."""
        pairs = ((proc.stdout, sys.stdout, self.out), (proc.stderr, sys.stderr, self.err))
        for pipe, log, handle in pairs:
            if pipe is not None and handle is not None:
                thread = threading.Thread(target=self._pump, args=(pipe, log, handle), daemon=True)
                thread.start()
                self.threads.append(thread)

    def _pump(self, pipe: IO[bytes], log: Any, handle: Any) -> None:
        while True:
            chunk = os.read(pipe.fileno(), 65536)
            if not chunk:
                break
            with self.lock:
                log.buffer.write(chunk)
                log.flush()
                handle.write(chunk)
                handle.flush()

    def finish(self, timeout: float = 5.0) -> None:
        """Wait (a little) for the copies to drain, then close the files."""
        for thread in self.threads:
            thread.join(timeout)
        for handle in {id(h): h for h in (self.out, self.err) if h is not None}.values():
            handle.close()
