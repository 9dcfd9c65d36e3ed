"""A real single-host Slurm for tests: munged, slurmctld and optionally slurmd, all state in
one temporary folder, loopback ports only (Debian's Slurm 22.05 packages; `make slurm-bin`).

`slurm_cluster(folder)` starts munged with its own key and socket, writes a slurm.conf with
GPU nodes of every type the corpus names (`GPU_TYPES`, `Gres=gpu:<type>:8`, the type also a
node feature) that have no slurmd (sbatch --hold accepts jobs for them), plus, with
`slurmd_nodes=N`, N CPU nodes `cpu[1-N]` in partition `cpu`, each with its own slurmd
(`slurmd -N cpuI`, a port of its own) for jobs that really run. Everything is stopped on exit.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from tests.support.ports import free_port
from tests.support.wait import wait_for

GPU_TYPES = ("h100", "a100", "a100_80gb", "l40s", "v100", "nvidia_h100_80gb_hbm3_3g.40gb")
"""GPU types the nodes carry: every type a script of the corpus names (gres types match
exactly in Slurm, so `a100` and `a100_80gb` are different nodes)."""
NODES_PER_TYPE = 4
NODE_CPUS = 128
NODE_MEMORY_MB = 2_000_000
PARTITIONS = ("gpu", "a100", "h100", "a100q", "h100q")
"""Partition names the corpus uses; all hold every GPU node, `gpu` is the default."""
FIRST_JOB_ID = 4242
"""The first job id: the corpus's `--dependency=afterok:4242:4243` names two real jobs once
`placeholders` were submitted."""
PROGRAMS = ("munged", "slurmctld", "slurmd", "sbatch", "scontrol")
SBIN = ("/usr/sbin", "/usr/bin")


def program(name: str) -> str | None:
    """Where Debian's package put `name` (on PATH, else /usr/sbin or /usr/bin); None if absent."""
    found = shutil.which(name)
    if found:
        return found
    for folder in SBIN:
        candidate = Path(folder) / name
        if os.access(candidate, os.X_OK):
            return str(candidate)
    return None


def missing_programs() -> list[str]:
    """The Slurm and munge programs that are not installed (`make slurm-bin` installs them)."""
    return [name for name in PROGRAMS if program(name) is None]


@dataclass(frozen=True)
class Submission:
    """What `sbatch --hold` said: the job id, or None and sbatch's error text."""

    job_id: int | None
    error: str


@dataclass
class SlurmCluster:
    """A running Slurm: its folder, slurm.conf and the processes to stop."""

    root: Path
    conf: Path
    cpu_nodes: int
    processes: list[subprocess.Popen[bytes]] = field(default_factory=list)

    @property
    def env(self) -> dict[str, str]:
        """The environment for Slurm's client commands (SLURM_CONF, no inherited SLURM_*)."""
        base = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}
        return base | {"SLURM_CONF": str(self.conf)}

    def command(self, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        """Run a Slurm client command (`scontrol`, `sbatch`, ...) against this cluster."""
        argv = [program(args[0]) or args[0], *args[1:]]
        return subprocess.run(
            argv, env=self.env, cwd=cwd or self.root, capture_output=True, text=True, timeout=60
        )

    def submit(self, script: Path, *options: str, hold: bool = True) -> Submission:
        """`sbatch [--hold] options script`; the id from `--parsable`, or sbatch's error."""
        args = ["sbatch", "--parsable", *(["--hold"] if hold else []), *options, str(script)]
        done = self.command(*args)
        if done.returncode != 0:
            return Submission(None, done.stderr.strip())
        return Submission(int(done.stdout.strip().split(";")[0]), "")

    def show_job(self, job_id: int) -> list[dict[str, str]]:
        """`scontrol show job -o ID` as one dict per record (an array may have several)."""
        done = self.command("scontrol", "show", "job", "-o", str(job_id))
        if done.returncode != 0:
            raise RuntimeError(f"scontrol show job {job_id}: {done.stderr.strip()}")
        return [parse_record(line) for line in done.stdout.splitlines() if line.strip()]

    def placeholders(self, folder: Path) -> list[int]:
        """Submit held jobs until job FIRST_JOB_ID+1 exists, so that dependencies on 4242 and
        4243 name real jobs (sbatch refuses a dependency on an unknown job)."""
        script = folder / "placeholder.sh"
        script.write_text("#!/bin/sh\ntrue\n")
        ids = []
        for _ in range(2):
            sub = self.submit(script, "--job-name=placeholder")
            assert sub.job_id is not None, sub.error
            ids.append(sub.job_id)
        return ids

    def wait_finished(self, job_id: int, timeout: float = 60) -> dict[str, str]:
        """Wait until the job left PENDING/RUNNING/COMPLETING; its record then."""

        def ended() -> dict[str, str] | None:
            record = self.show_job(job_id)[0]
            state = record.get("JobState", "")
            return None if state in ("PENDING", "RUNNING", "COMPLETING", "CONFIGURING") else record

        return wait_for(ended, timeout=timeout, interval=0.2, what=f"Slurm job {job_id} to end")


def parse_record(line: str) -> dict[str, str]:
    """One `scontrol show -o` line as `{Key: value}` (values may hold blanks, e.g. Command)."""
    key = r"[A-Za-z][A-Za-z0-9_/:]*"
    pairs = re.findall(rf"(?:^|\s)({key})=(.*?)(?=\s+{key}=|\s*$)", line)
    return dict(pairs)


def write_config(root: Path, spool: Path, cpu_nodes: int, cpu_node_cpus: int = 8) -> Path:
    """slurm.conf for this cluster in `root`; returns its path. `spool` is a short folder for
    slurmd's spool and munged's socket (a Unix socket path has at most 108 bytes)."""
    host = subprocess.run(["hostname", "-s"], capture_output=True, text=True).stdout.strip()
    gpu_lines, names = [], []
    for gpu_type in GPU_TYPES:
        group = f"{re.sub(r'[^a-z0-9]', '', gpu_type)[:12]}-[1-{NODES_PER_TYPE}]"
        names.append(group)
        gpu_lines.append(
            f"NodeName={group} NodeAddr=127.0.0.1 CPUs={NODE_CPUS} RealMemory={NODE_MEMORY_MB} "
            f"Gres=gpu:{gpu_type}:8 Features={gpu_type}"
        )
    cpu_lines = [
        f"NodeName=cpu{i} NodeAddr=127.0.0.1 Port={free_port()} CPUs={cpu_node_cpus} "
        "RealMemory=1000"
        for i in range(1, cpu_nodes + 1)
    ]
    gpu_nodes = ",".join(names)
    partitions = [
        f"PartitionName={name} Nodes={gpu_nodes} MaxTime=UNLIMITED State=UP"
        + (" Default=YES" if name == "gpu" else "")
        for name in PARTITIONS
    ]
    if cpu_nodes:
        partitions.append(f"PartitionName=cpu Nodes=cpu[1-{cpu_nodes}] MaxTime=UNLIMITED State=UP")
    conf = f"""# generated by tests/support/slurm.py
ClusterName=oracle
SlurmctldHost={host}(127.0.0.1)
SlurmctldPort={free_port()}
SlurmdPort={free_port()}
AuthType=auth/munge
AuthInfo=socket={spool}/munge.sock
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation={root}/state
SlurmdSpoolDir={spool}/%n
SlurmctldPidFile={root}/slurmctld.pid
SlurmdPidFile={root}/slurmd-%n.pid
SlurmctldLogFile={root}/log/slurmctld.log
SlurmdLogFile={root}/log/slurmd-%n.log
MailProg=/bin/true
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
GresTypes=gpu
ReturnToService=2
SlurmdParameters=config_overrides
FirstJobId={FIRST_JOB_ID}
SchedulerParameters=sched_interval=1
{chr(10).join(gpu_lines + cpu_lines + partitions)}
"""
    path = root / "slurm.conf"
    path.write_text(conf)
    return path


@contextlib.contextmanager
def slurm_cluster(
    root: Path, *, slurmd_nodes: int = 0, cpus_per_node: int = 8
) -> Iterator[SlurmCluster]:
    """Start munged, slurmctld and `slurmd_nodes` slurmds under `root`; stop them on exit.

    Raises RuntimeError with the log's tail when a daemon does not come up."""
    missing = missing_programs()
    if missing:
        raise RuntimeError(f"missing {', '.join(missing)}: run `make slurm-bin` (as root)")
    for sub in ("state", "log"):
        (root / sub).mkdir(parents=True, exist_ok=True)
    spool = Path(tempfile.mkdtemp(prefix="slurm-", dir="/tmp"))
    spool.chmod(0o755)
    root.chmod(0o755)  # munged wants its socket's folder reachable by all
    key = root / "munge.key"
    key.write_bytes(os.urandom(1024))
    key.chmod(0o400)
    conf = write_config(root, spool, slurmd_nodes, cpus_per_node)
    cluster = SlurmCluster(root, conf, slurmd_nodes)
    try:
        munged = [
            program("munged") or "munged", "-F", "-f", f"--key-file={key}",
            f"--socket={spool}/munge.sock", f"--pid-file={root}/munged.pid",
            f"--log-file={root}/log/munged.log", f"--seed-file={root}/munged.seed",
        ]  # fmt: skip
        _start(cluster, munged, "munged")
        wait_for(lambda: (spool / "munge.sock").exists(), timeout=20, interval=0.1,
                 what="munged's socket")  # fmt: skip
        _start(cluster, [program("slurmctld") or "slurmctld", "-D", "-i"], "slurmctld")
        wait_for(lambda: _answers(cluster), timeout=30, interval=0.2, what="slurmctld to answer")
        for i in range(1, slurmd_nodes + 1):
            _start(cluster, [program("slurmd") or "slurmd", "-D", "-N", f"cpu{i}"], f"slurmd-{i}")
        if slurmd_nodes:
            wait_for(lambda: _cpu_nodes_idle(cluster), timeout=30, interval=0.2,
                     what="the slurmd nodes to be idle")  # fmt: skip
    except AssertionError as exc:
        _stop(cluster)
        shutil.rmtree(spool, ignore_errors=True)
        raise RuntimeError(f"Slurm did not start: {exc}\n{_logs(root)}") from exc
    try:
        yield cluster
    finally:
        _stop(cluster)
        shutil.rmtree(spool, ignore_errors=True)


def _start(cluster: SlurmCluster, argv: list[str], name: str) -> None:
    log = (cluster.root / "log" / f"{name}.out").open("wb")
    cluster.processes.append(
        subprocess.Popen(
            argv, env=cluster.env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
    )


def _answers(cluster: SlurmCluster) -> bool:
    for proc in cluster.processes:
        if proc.poll() is not None:
            raise AssertionError(f"{proc.args[0]} exited with {proc.returncode}")
    return cluster.command("scontrol", "ping").returncode == 0


def _cpu_nodes_idle(cluster: SlurmCluster) -> bool:
    done = cluster.command("sinfo", "-h", "-p", "cpu", "-o", "%t %D")
    states = done.stdout.split()
    return (
        done.returncode == 0 and states[:1] == ["idle"] and states[1:] == [str(cluster.cpu_nodes)]
    )


def _stop(cluster: SlurmCluster) -> None:
    """SIGTERM in reverse start order, then SIGKILL what is left after 10 s each."""
    for proc in reversed(cluster.processes):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)


def _logs(root: Path) -> str:
    tails = []
    for path in sorted((root / "log").glob("*")):
        lines = path.read_text(errors="replace").splitlines()[-15:]
        tails.append(f"--- {path.name}\n" + "\n".join(lines))
    return "\n".join(tails)
