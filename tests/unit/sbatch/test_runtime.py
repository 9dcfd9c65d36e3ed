"""The in-pod runtime, run locally: N processes with the env a pod would have, loopback only.

Each "pod" runs the job's real command (the sh entrypoint), with JOB_COMPLETION_INDEX set and
GRYVIA_SLURM_HOSTS mapping the pods' host names to distinct 127.0.0.1 ports.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from gryvia_cli.sbatch.launcher import BATCH_VARIABLES
from tests.unit.sbatch.helpers import convert, env_of

pytestmark = pytest.mark.timeout(90)


@dataclass
class Pod:
    """One finished local pod."""

    code: int
    out: str
    err: str


def free_ports(count: int) -> list[int]:
    sockets = [socket.socket() for _ in range(count)]
    for sock in sockets:
        sock.bind(("127.0.0.1", 0))
    ports = [sock.getsockname()[1] for sock in sockets]
    for sock in sockets:
        sock.close()
    return ports


def run_pods(script: str, tmp_path: Path, **extra: str) -> list[Pod]:
    """Convert `script`, then run every pod of its (first) job locally and wait for all."""
    conversion = convert(script.encode(), "job.sh")
    assert conversion.ok, conversion.report["errors"]
    spec = conversion.jobs[0]["spec"]
    nodes = spec.get("distributed", {}).get("nodes", 1)
    ports = free_ports(nodes)
    python = Path(sys.executable)
    base = env_of(conversion.jobs[0], conversion.runtime) | {
        "PATH": f"{python.parent}:/usr/bin:/bin",
        "HOME": str(tmp_path),
        "GRYVIA_SLURM_PYTHON": str(python),
        "GRYVIA_JOB_UID": "6f1c2d3e-0000-4000-8000-000000000001",
        "GRYVIA_SLURM_HOSTS": ",".join(f"127.0.0.1:{port}" for port in ports),
        "GRYVIA_SLURM_BIND": "127.0.0.1",
        "GRYVIA_SLURM_WAIT_NODES": "30",
        "GRYVIA_SLURM_SHUTDOWN_TIMEOUT": "10",
        "MASTER_ADDR": "set-by-the-operator",
        "RANK": "0",
    }
    procs = []
    for index in range(nodes):
        rundir = tmp_path / f"pod{index}"
        rundir.mkdir()
        env = base | {"JOB_COMPLETION_INDEX": str(index), "GRYVIA_SLURM_RUNDIR": str(rundir)}
        env |= extra
        procs.append(
            subprocess.Popen(
                spec["command"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
            )
        )
    pods = []
    for proc in procs:
        out, err = proc.communicate(timeout=60)
        pods.append(Pod(proc.returncode, out, err))
    return pods


FANOUT = """#!/bin/sh
#SBATCH -N 3
#SBATCH --ntasks-per-node=2
#SBATCH --export=ALL,KEEP_ME=yes
echo "setup on $SLURMD_NODENAME"
srun sh -c 'echo "task $SLURM_PROCID local $SLURM_LOCALID node $SLURM_NODEID of $SLURM_NTASKS"'
echo "first: $(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)"
echo "master=${MASTER_ADDR:-unset} rank=${RANK:-unset} keep=${KEEP_ME:-unset}"
"""


def test_the_script_runs_once_and_srun_runs_every_task(tmp_path: Path) -> None:
    pods = run_pods(FANOUT, tmp_path)
    assert [pod.code for pod in pods] == [0, 0, 0]
    first = pods[0].out
    assert first.count("setup on") == 1
    assert "setup on job-sh-0.job-sh-headless" in first
    tasks = sorted(line for line in first.splitlines() if line.startswith("task "))
    assert tasks == [f"task {p} local {p % 2} node {p // 2} of 6" for p in range(6)]
    assert "first: job-sh-0.job-sh-headless" in first
    assert "master=unset rank=unset keep=yes" in first  # operator variables scrubbed
    assert all(pod.out == "" for pod in pods[1:])  # task output comes back through srun


ENVIRONMENT = """#!/bin/sh
#SBATCH -N 2
#SBATCH -J envcheck
env | grep -E '^SLURM' | sort > "$HOME/batch.env"
srun sh -c 'env | grep -E "^SLURM" | sort > "$HOME/task-$SLURM_PROCID.env"'
"""


def _env_file(path: Path) -> dict[str, str]:
    return dict(line.split("=", 1) for line in path.read_text().splitlines())


def test_batch_and_task_environments(tmp_path: Path) -> None:
    pods = run_pods(ENVIRONMENT, tmp_path)
    assert [pod.code for pod in pods] == [0, 0], pods[0].err
    batch = _env_file(tmp_path / "batch.env")
    assert set(BATCH_VARIABLES) <= set(batch)
    assert batch["SLURM_JOB_ID"].isdigit()
    assert batch["SLURM_JOB_NAME"] == "envcheck"
    assert batch["SLURM_NODEID"] == "0" and batch["SLURM_RESTART_COUNT"] == "0"
    task = _env_file(tmp_path / "task-1.env")
    assert (task["SLURM_PROCID"], task["SLURM_NODEID"], task["SLURM_LOCALID"]) == ("1", "1", "0")
    assert task["SLURMD_NODENAME"] == "envcheck-1.envcheck-headless"
    assert task["SLURM_JOB_ID"] == batch["SLURM_JOB_ID"]
    assert task["SLURM_STEP_NUM_TASKS"] == task["SLURM_NTASKS"] == "2"


UNEVEN = """#!/bin/sh
#SBATCH -N 2
#SBATCH -n 5
srun sh -c 'echo "task $SLURM_PROCID local $SLURM_LOCALID node $SLURM_NODEID of $SLURM_NTASKS \
$SLURM_TASKS_PER_NODE gtids $SLURM_GTIDS"'
"""


def test_an_uneven_layout_starts_each_pods_own_count(tmp_path: Path) -> None:
    # issue 39, finding 4: -N 2 -n 5 runs 3 + 2 tasks, ranks contiguous per node (block)
    pods = run_pods(UNEVEN, tmp_path)
    assert [pod.code for pod in pods] == [0, 0], pods[0].err
    tasks = sorted(line for line in pods[0].out.splitlines() if line.startswith("task "))
    assert tasks == [
        "task 0 local 0 node 0 of 5 3,2 gtids 0,1,2",
        "task 1 local 1 node 0 of 5 3,2 gtids 0,1,2",
        "task 2 local 2 node 0 of 5 3,2 gtids 0,1,2",
        "task 3 local 0 node 1 of 5 3,2 gtids 3,4",
        "task 4 local 1 node 1 of 5 3,2 gtids 3,4",
    ]


EXIT_CODES = """#!/bin/sh
#SBATCH -N 2
#SBATCH --ntasks-per-node=2
srun sh -c 'exit $SLURM_PROCID'
echo "srun=$?"
srun -n 1 sh -c 'echo once'
srun does-not-exist
echo "missing=$?"
squeue
echo "squeue=$?"
exit 7
"""


def test_exit_codes_propagate(tmp_path: Path) -> None:
    pods = run_pods(EXIT_CODES, tmp_path)
    assert [pod.code for pod in pods] == [7, 0]
    out, err = pods[0].out, pods[0].err
    assert "srun=3" in out  # the highest task exit code
    assert out.count("once") == 1
    assert "missing=2" in out  # execve's ENOENT, as slurmstepd reports it
    assert "execve(): does-not-exist" in err
    assert "task 3: Exited with exit code 3" in err
    assert "squeue=1" in out and "not available inside a Gryvia job" in err


LIMIT = """#!/bin/sh
#SBATCH -N 2
#SBATCH -t 1
echo started
srun sleep 30
echo never
"""


def test_the_time_limit_cancels_the_job(tmp_path: Path) -> None:
    pods = run_pods(LIMIT, tmp_path, GRYVIA_SLURM_TIME_LIMIT="2", GRYVIA_SLURM_KILL_WAIT="2")
    assert [pod.code for pod in pods] == [124, 0]
    assert "started" in pods[0].out and "never" not in pods[0].out
    assert "DUE TO TIME LIMIT" in pods[0].err


LABELS = """#!/bin/sh
#SBATCH -N 2
srun -l --ntasks-per-node=2 printf 'a\\nb\\n'
"""


def test_labelled_output(tmp_path: Path) -> None:
    (first, _) = run_pods(LABELS, tmp_path)
    lines = sorted(first.out.splitlines())
    assert lines == [f"{p}: {x}" for p in range(4) for x in "ab"]


def test_without_python_a_job_of_several_pods_fails_at_once_with_the_reason(
    tmp_path: Path,
) -> None:
    script = '#!/bin/sh\n#SBATCH -N 2\necho "pod $SLURM_PROCID"\nsrun -n 4 --mpi=pmix echo ran\n'
    pods = run_pods(script, tmp_path, GRYVIA_SLURM_PYTHON="/nonexistent/python3")
    assert [pod.code for pod in pods] == [127, 127]
    assert [pod.out for pod in pods] == ["", ""]  # never run differently (issue 39, 3)
    assert "no python3 >= 3.7, which this job needs" in pods[0].err
    assert "1 task(s) on each of 2 pod(s)" in pods[0].err


def test_without_python_one_pod_runs_and_srun_refuses_more_tasks(tmp_path: Path) -> None:
    script = "#!/bin/sh\n#SBATCH -N 1\necho script\nsrun echo ran\nsrun -n 4 echo never\n"
    (pod,) = run_pods(script, tmp_path, GRYVIA_SLURM_PYTHON="/nonexistent/python3")
    assert pod.out == "script\nran\n"
    assert "srun: error: starting 4 tasks or nodes needs python3" in pod.err
    assert pod.code == 1


def test_an_agent_ignores_requests_without_the_job_secret(tmp_path: Path) -> None:
    script = "#!/bin/sh\n#SBATCH -N 2\nsleep 2\n"
    conversion = convert(script.encode(), "job.sh")
    env = env_of(conversion.jobs[0], conversion.runtime)
    (port,) = free_ports(1)
    agent_env = env | {
        "JOB_COMPLETION_INDEX": "1",
        "GRYVIA_SLURM_HOSTS": f"127.0.0.1:1,127.0.0.1:{port}",
        "GRYVIA_SLURM_BIND": "127.0.0.1",
        "GRYVIA_JOB_UID": "secret-uid",
        "GRYVIA_SLURM_RUNDIR": str(tmp_path),
        "PATH": "/usr/bin:/bin",
    }
    shim = Path(__file__).resolve().parents[3] / "gryvia_cli/sbatch/runtime/shim.py"
    agent = subprocess.Popen([sys.executable, str(shim), "run"], env=agent_env)
    try:
        marker = tmp_path / "pwned"
        request = {"op": "run", "token": "wrong", "env": {}, "tasks": [
            {"procid": 0, "localid": 0, "argv": ["touch", str(marker)], "cwd": str(tmp_path)}
        ]}  # fmt: skip
        for _ in range(100):
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1) as sock:
                    sock.sendall((json.dumps(request) + "\n").encode())
                    assert sock.recv(100) == b""  # closed without an answer
                break
            except ConnectionRefusedError:
                import time

                time.sleep(0.1)
        assert not marker.exists()
    finally:
        agent.kill()
        agent.wait()


def test_output_goes_to_the_named_file_and_stays_in_the_pod_log(tmp_path: Path) -> None:
    script = f"""#!/bin/sh
#SBATCH -N 2
#SBATCH -J tee
#SBATCH --output={tmp_path}/logs/%x_%j.out
echo "jobid $SLURM_JOB_ID"
echo "batch on $SLURMD_NODENAME"
srun sh -c 'echo "task $SLURM_PROCID"'
echo "to stderr" >&2
"""
    pods = run_pods(script, tmp_path)
    assert [pod.code for pod in pods] == [0, 0]
    (written,) = (tmp_path / "logs").glob("tee_*.out")
    assert written.name == f"tee_{_job_id(pods[0].out)}.out"
    text = written.read_text()
    for line in ("batch on tee-0.tee-headless", "task 0", "task 1", "to stderr"):
        assert line in text
    assert "task 1" in pods[0].out and "batch on" in pods[0].out  # still in the pod log
    assert "to stderr" in pods[0].err and "to stderr" not in pods[0].out


def _job_id(out: str) -> str:
    return next(line.split()[-1] for line in out.splitlines() if line.startswith("jobid "))


def test_error_file_and_append_mode(tmp_path: Path) -> None:
    (tmp_path / "out.log").write_text("earlier\n")
    script = f"""#!/bin/sh
#SBATCH --output={tmp_path}/out.log
#SBATCH --error={tmp_path}/err-%a-%u.log
#SBATCH --open-mode=append
echo "jobid $SLURM_JOB_ID"
echo oops >&2
"""
    pods = run_pods(script, tmp_path, USER="alice")
    assert pods[0].code == 0
    assert (tmp_path / "out.log").read_text().startswith("earlier\njobid ")
    errors = list(tmp_path.glob("err-*.log"))
    assert [p.name for p in errors] == [f"err-4294967294-{errors[0].name.split('-')[2]}"]
    assert errors[0].read_text() == "oops\n"


def test_signal_reaches_the_batch_script_before_the_time_limit(tmp_path: Path) -> None:
    script = """#!/bin/bash
#SBATCH --time=1
#SBATCH --signal=B:USR1@58
trap 'echo "got USR1"; exit 0' USR1
for i in $(seq 100); do sleep 0.1; done
echo "no signal"
"""
    # a 3 s limit with the signal 2 s before it: sent after about 1 s
    pods = run_pods(
        script, tmp_path, GRYVIA_SLURM_TIME_LIMIT="3", GRYVIA_SLURM_SIGNAL="USR1@2@batch"
    )
    assert pods[0].code == 0
    assert "got USR1" in pods[0].out and "no signal" not in pods[0].out
