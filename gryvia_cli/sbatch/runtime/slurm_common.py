"""Shared parts of Gryvia's in-pod Slurm runtime: configuration, host lists, wire, local tasks."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import socket
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

PREFIX = "gryvia-slurm"
SCRIPT_ENV = "GRYVIA_SBATCH_SCRIPT"
RUNTIME_ENV = "GRYVIA_SLURM_RUNTIME"
DEFAULT_PORT = 29411
MISSING_COMMANDS = (
    "sbatch", "squeue", "scancel", "sacct", "sinfo", "salloc", "sstat", "sattach", "sbcast",
    "sprio", "sshare", "sreport", "sacctmgr", "strigger",
)  # fmt: skip
# Variables a task keeps from its own pod rather than taking from srun's environment.
NODE_LOCAL = frozenset(
    ("HOSTNAME", "JOB_COMPLETION_INDEX", "GRYVIA_SLURM_RUNDIR", "PWD", "OLDPWD", "SHLVL", "_",
     "SLURMD_NODENAME", "SLURM_NODEID", "SLURM_TOPOLOGY_ADDR")
)  # fmt: skip


def log(message: str) -> None:
    """Write one runtime message to stderr (the pod log)."""
    sys.stderr.write(f"{PREFIX}: {message}\n")
    sys.stderr.flush()


def env_int(name: str, default: int) -> int:
    """An integer from the environment, `default` when unset or empty."""
    value = os.environ.get(name, "").strip()
    return int(value) if value else default


def expand_hostlist(text: str) -> list[str]:
    """Expand a Slurm host list (`a-[0-2].s,b`) into names, as `scontrol show hostnames` does."""
    names: list[str] = []
    depth, start = 0, 0
    for pos, char in enumerate(text + ","):
        depth += {"[": 1, "]": -1}.get(char, 0)
        if char == "," and depth == 0:
            part = text[start:pos].strip()
            start = pos + 1
            names.extend(_expand_one(part) if part else [])
    return names


def _expand_one(name: str) -> list[str]:
    match = re.search(r"\[([^\]]*)\]", name)
    if match is None:
        return [name]
    head, tail = name[: match.start()], name[match.end() :]
    out: list[str] = []
    for item in match.group(1).split(","):
        low, _, high = item.partition("-")
        for number in range(int(low), int(high or low) + 1):
            out.extend(_expand_one(head + str(number).zfill(len(low)) + tail))
    return out


def compress_hostlist(names: list[str]) -> str:
    """A compact Slurm host list (`job-[0-3].job-headless`) for `scontrol show hostlist`."""
    groups: dict[tuple[str, str, int], list[int]] = {}
    plain: list[str] = []
    for name in names:
        match = re.match(r"^(.*?[^0-9]|)([0-9]+)((?:[^0-9][^.]*)?(?:\..*)?)$", name)
        if match is None:
            plain.append(name)
            continue
        digits = match.group(2)
        width = len(digits) if digits.startswith("0") and len(digits) > 1 else 0
        groups.setdefault((match.group(1), match.group(3), width), []).append(int(digits))
    parts: list[str] = []
    for (head, tail, width), found in groups.items():
        numbers = sorted(set(found))
        ranges: list[str] = []
        first = prev = numbers[0]
        for number in [*numbers[1:], -2]:
            if number != prev + 1:
                low, high = str(first).zfill(width), str(prev).zfill(width)
                ranges.append(low if first == prev else f"{low}-{high}")
                first = number
            prev = number
        joined = ",".join(ranges)
        parts.append(head + (joined if len(numbers) == 1 else f"[{joined}]") + tail)
    return ",".join(parts + plain)


def expand_counts(text: str, nodes: int) -> list[int]:
    """Tasks per node from GRYVIA_SLURM_TASKS_PER_NODE: one number for every node (`4`), or
    Slurm's form per node (`3,2`, `2(x2),1(x2)`, as in SLURM_TASKS_PER_NODE); the last count
    repeats when the list is shorter than `nodes`."""
    counts: list[int] = []
    for part in text.split(","):
        match = re.fullmatch(r"\s*(\d+)(?:\(x(\d+)\))?\s*", part)
        if match is None:
            raise ValueError(f"bad tasks per node: {text!r}")
        counts += [int(match.group(1))] * int(match.group(2) or 1)
    return (counts + counts[-1:] * nodes)[: max(nodes, len(counts))]


class Config:
    """What a pod knows about its job, read from the environment."""

    def __init__(self, environ: dict[str, str]) -> None:
        self.index = int(environ.get("JOB_COMPLETION_INDEX") or environ.get("NODE_RANK") or 0)
        nodelist = expand_hostlist(environ.get("SLURM_JOB_NODELIST", ""))
        self.nodelist = nodelist or [socket.gethostname()]
        self.nodes = int(environ.get("SLURM_NNODES") or len(self.nodelist))
        self.task_counts = expand_counts(
            environ.get("GRYVIA_SLURM_TASKS_PER_NODE") or "1", self.nodes
        )
        self.port = int(environ.get("GRYVIA_SLURM_PORT") or DEFAULT_PORT)
        self.rundir = environ.get("GRYVIA_SLURM_RUNDIR", "")
        self.overrides = [h for h in environ.get("GRYVIA_SLURM_HOSTS", "").split(",") if h]
        uid = environ.get("GRYVIA_JOB_UID") or environ.get("GRYVIA_JOB_UID_LEGACY") or ""
        self.weak_token = not uid
        seed = uid or environ.get("SLURM_JOB_NAME", "") + environ.get("SLURM_JOB_NODELIST", "")
        self.token = hashlib.sha256(("gryvia-slurm:" + seed).encode()).hexdigest()
        digest = hashlib.sha256(seed.encode()).hexdigest()
        self.job_id = str(int(digest[:12], 16) % 67043327 + 1)  # Slurm's default MaxJobId range

    def address(self, node: int) -> tuple[str, int]:
        """Where node `node`'s agent listens."""
        if self.overrides:
            host, _, port = self.overrides[node].rpartition(":")
            return host, int(port)
        return self.nodelist[node], self.port

    def node_env(self, node: int, procids: list[int]) -> dict[str, str]:
        """Variables slurmd sets per node."""
        name = self.nodelist[node] if node < len(self.nodelist) else socket.gethostname()
        return {
            "SLURMD_NODENAME": name,
            "SLURM_NODEID": str(node),
            "SLURM_TOPOLOGY_ADDR": name,
            "SLURM_GTIDS": ",".join(str(procid) for procid in procids),
        }


def send(sock: socket.socket, lock: threading.Lock, message: dict[str, Any]) -> None:
    """Send one JSON line (thread safe per socket)."""
    data = (json.dumps(message, separators=(",", ":")) + "\n").encode()
    with lock:
        sock.sendall(data)


def request(
    cfg: Config, node: int, message: dict[str, Any], timeout: float = 10.0
) -> socket.socket:
    """Connect to node `node`'s agent and send the first (authenticated) message."""
    sock = socket.create_connection(cfg.address(node), timeout=timeout)
    sock.settimeout(None)
    send(sock, threading.Lock(), dict(message, token=cfg.token))
    return sock


class TaskSet:
    """Local processes of one step on one node; reports output chunks and exit codes."""

    def __init__(
        self,
        tasks: list[dict[str, Any]],
        on_output: Callable[[int, int, bytes], None],
        on_exit: Callable[[int, int], None],
        own_session: bool = True,
    ) -> None:
        self.tasks = tasks
        self.on_output = on_output
        self.on_exit = on_exit
        self.own_session = own_session
        self.procs: list[subprocess.Popen[bytes]] = []
        self.threads: list[threading.Thread] = []

    def start(self) -> None:
        """Start every task; a task that cannot start exits with its errno, like slurmstepd."""
        for task in self.tasks:
            procid = int(task["procid"])
            cwd = task.get("cwd") or None
            if cwd and not Path(cwd).is_dir():
                note = f"slurmstepd: error: couldn't chdir to `{cwd}': No such file or directory"
                self.on_output(procid, 2, f"{note}: going to /tmp instead\n".encode())
                cwd = "/tmp"
            # srun --output/--error files: handed to the child, closed right after Popen
            streams = [
                Path(task[key]).open("ab") if task.get(key) else subprocess.PIPE  # noqa: SIM115
                for key in ("stdout", "stderr")
            ]
            try:
                proc = subprocess.Popen(
                    task["argv"],
                    env=task["env"],
                    cwd=cwd,
                    stdin=subprocess.DEVNULL,
                    stdout=streams[0],
                    stderr=streams[1],
                    start_new_session=self.own_session,
                )
            except OSError as exc:
                message = f"slurmstepd: error: execve(): {task['argv'][0]}: {exc.strerror}\n"
                self.on_output(procid, 2, message.encode())
                self.on_exit(procid, exc.errno or 1)
                continue
            finally:
                for stream in streams:
                    if not isinstance(stream, int):
                        stream.close()
            self.procs.append(proc)
            pipes = ((1, proc.stdout), (2, proc.stderr))
            readers = [self._reader(procid, number, pipe) for number, pipe in pipes if pipe]
            waiter = threading.Thread(target=self._wait, args=(procid, proc, readers), daemon=True)
            waiter.start()
            self.threads.append(waiter)

    def _reader(self, procid: int, number: int, pipe: IO[bytes]) -> threading.Thread:
        def pump() -> None:
            while True:
                chunk = os.read(pipe.fileno(), 65536)
                if not chunk:
                    return
                self.on_output(procid, number, chunk)

        thread = threading.Thread(target=pump, daemon=True)
        thread.start()
        return thread

    def _wait(
        self, procid: int, proc: subprocess.Popen[bytes], readers: list[threading.Thread]
    ) -> None:
        code = proc.wait()
        for reader in readers:
            reader.join()
        self.on_exit(procid, code if code >= 0 else 128 - code)

    def signal(self, number: int) -> None:
        """Signal every running task (its process group when it has its own session)."""
        kill = os.killpg if self.own_session else os.kill
        for proc in self.procs:
            if proc.poll() is None:
                with contextlib.suppress(OSError):
                    kill(proc.pid, number)

    def wait(self) -> None:
        """Block until every task has exited and its output is delivered."""
        for thread in self.threads:
            while thread.is_alive():
                thread.join(0.2)


def task_env(
    base: dict[str, str], cfg: Config, node: int, task: dict[str, Any], procids: list[int]
) -> dict[str, str]:
    """One task's environment: the step's, this node's slurmd variables, the task's ranks."""
    env = dict(base)
    env.update(cfg.node_env(node, procids))
    env["SLURM_PROCID"] = str(task["procid"])
    env["SLURM_LOCALID"] = str(task["localid"])
    return env


def output_path(pattern: str | None, cfg: Config, node: int, procid: int, step: str) -> str | None:
    """Expand srun's output file pattern (%t task, %n node, %N host, %j job, %s step)."""
    if not pattern:
        return None
    values = {
        "t": str(procid),
        "n": str(node),
        "N": cfg.nodelist[node],
        "j": cfg.job_id,
        "J": f"{cfg.job_id}.{step}",
        "s": step,
        "%": "%",
    }

    def expand(match: re.Match[str]) -> str:
        return values[match.group(2)].zfill(int(match.group(1) or 0))

    return re.sub(r"%(\d*)([tnNjJs%])", expand, pattern)
