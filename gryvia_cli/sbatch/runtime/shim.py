"""Gryvia's in-pod Slurm runtime: the batch step on pod 0, task agents on the others, srun/scontrol.

Shipped inside every imported job (env GRYVIA_SLURM_RUNTIME holds this file and the other
`slurm_*.py` files; the POSIX sh entrypoint unpacks them side by side), stdlib only, Python
3.7+. Modes (argv[1]):

* `run`     - pod entry: index 0 runs the batch script once (as slurmstepd's batch step does);
              every other index runs an agent that executes srun tasks sent by pod 0.
* `srun`    - launch a job step: every task of every node (tasks per node as the job asked),
              each with its own SLURM_PROCID/SLURM_LOCALID/SLURM_NODEID; waits for all and
              returns the highest exit code (srun(1) RETURN VALUE).
* `scontrol`- `show hostnames|hostname|hostlist|job`; anything else fails with a message.
* `missing` - stand-in for Slurm commands that have no meaning in a pod (sbatch, squeue, ...).

Agents listen on TCP (GRYVIA_SLURM_PORT, default 29411) and speak JSON lines; every request
carries the job's UID (downward API) as a shared secret. Tests map pod host names to loopback
ports with GRYVIA_SLURM_HOSTS=host:port,... .
"""

from __future__ import annotations

import base64
import contextlib
import datetime
import hmac
import json
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import IO, Any

try:  # imported from the gryvia package (tests, type checking)
    from . import slurm_commands, slurm_output, slurm_step
    from . import slurm_common as common
except ImportError:  # run from the pod's run directory, where the runtime files sit side by side
    import slurm_commands  # type: ignore[no-redef]
    import slurm_common as common  # type: ignore[no-redef]
    import slurm_output  # type: ignore[no-redef]
    import slurm_step  # type: ignore[no-redef]

TIME_LIMIT_EXIT = 124  # the batch step's exit code when the time limit cancelled it

# ---------------------------------------------------------------- agent (pods 1..N-1)


def serve_agent(cfg: common.Config) -> int:
    """Run srun tasks for pod 0 until it says the batch script has ended; then exit 0."""
    stop = threading.Event()
    running: list[common.TaskSet] = []
    host, port = cfg.address(cfg.index) if cfg.overrides else ("", cfg.port)
    server = _listen(os.environ.get("GRYVIA_SLURM_BIND", host), port)
    server.settimeout(0.5)

    def on_term(number: int, frame: Any) -> None:
        for tasks in list(running):
            tasks.signal(signal.SIGTERM)
        os._exit(128 + number)

    signal.signal(signal.SIGTERM, on_term)
    while not stop.is_set():
        try:
            conn, _ = server.accept()
        except socket.timeout:  # noqa: UP041 - not TimeoutError before Python 3.10
            continue
        conn.settimeout(None)
        threading.Thread(target=_serve, args=(cfg, conn, stop, running), daemon=True).start()
    server.close()
    for tasks in list(running):  # the job ends with its batch script, as in Slurm
        tasks.signal(signal.SIGKILL)
    return 0


def _listen(host: str, port: int) -> socket.socket:
    """Listen on `host` (all interfaces when empty: dual-stack, else IPv4 only)."""
    if host:
        family, _, _, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
        candidates = [(family, address)]
    else:
        candidates = [(socket.AF_INET6, ("::", port)), (socket.AF_INET, ("0.0.0.0", port))]
    error: OSError | None = None
    for family, address in candidates:
        try:
            server = socket.socket(family, socket.SOCK_STREAM)
            server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                server.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
            server.bind(address)
            server.listen(64)
            return server
        except OSError as exc:  # e.g. IPv6 disabled in the pod
            error = exc
    assert error is not None
    raise error


def _serve(
    cfg: common.Config, conn: socket.socket, stop: threading.Event, running: list[common.TaskSet]
) -> None:
    lock = threading.Lock()
    reader = conn.makefile("rb")
    with contextlib.suppress(OSError, ValueError), conn:
        hello = json.loads(reader.readline() or b"{}")
        if not hmac.compare_digest(str(hello.get("token", "")), cfg.token):
            return
        if hello.get("op") == "ping":
            common.send(conn, lock, {"t": "pong", "node": cfg.index})
        elif hello.get("op") == "shutdown":
            common.send(conn, lock, {"t": "bye"})
            stop.set()
        elif hello.get("op") == "run":
            _run_remote(cfg, conn, lock, reader, hello, running)


def _run_remote(
    cfg: common.Config,
    conn: socket.socket,
    lock: threading.Lock,
    reader: IO[bytes],
    hello: dict[str, Any],
    running: list[common.TaskSet],
) -> None:
    """Run one step's tasks on this pod with srun's environment, streaming output back."""
    base = {k: v for k, v in os.environ.items() if k != common.SCRIPT_ENV}
    base.update({k: v for k, v in hello["env"].items() if k not in common.NODE_LOCAL})
    mine = str(Path(cfg.rundir) / "bin")
    base["PATH"] = base.get("PATH", "").replace(hello.get("bindir") or "\0", mine)
    procids = [int(task["procid"]) for task in hello["tasks"]]
    for task in hello["tasks"]:
        task["env"] = common.task_env(base, cfg, cfg.index, task, procids)

    def on_output(procid: int, number: int, data: bytes) -> None:
        chunk = base64.b64encode(data).decode()
        common.send(conn, lock, {"t": "o", "p": procid, "s": number, "d": chunk})

    def on_exit(procid: int, code: int) -> None:
        common.send(conn, lock, {"t": "x", "p": procid, "c": code})

    tasks = common.TaskSet(hello["tasks"], on_output, on_exit)
    running.append(tasks)
    tasks.start()

    def control() -> None:
        with contextlib.suppress(OSError, ValueError):
            for line in reader:
                message = json.loads(line)
                if message.get("op") == "signal":
                    tasks.signal(int(message["sig"]))

    threading.Thread(target=control, daemon=True).start()
    tasks.wait()
    running.remove(tasks)
    common.send(conn, lock, {"t": "done"})


# ---------------------------------------------------------------- the batch step (pod 0)


def _ask(cfg: common.Config, node: int, op: str, answer: str) -> bool:
    try:
        with common.request(cfg, node, {"op": op}, timeout=3) as sock:
            sock.settimeout(3)
            reply = json.loads(sock.makefile("rb").readline() or b"{}")
            return bool(reply.get("t") == answer)
    except (OSError, ValueError):
        return False


def wait_for_agents(cfg: common.Config) -> bool:
    """Wait until every other pod's agent answers: Slurm starts the script once all nodes are
    allocated (GRYVIA_SLURM_WAIT_NODES seconds at most, default 900)."""
    pending = set(range(1, cfg.nodes))
    start = last = time.monotonic()
    limit = common.env_int("GRYVIA_SLURM_WAIT_NODES", 900)
    while True:
        pending = {node for node in pending if not _ask(cfg, node, "ping", "pong")}
        now = time.monotonic()
        if not pending:
            return True
        shown = ",".join(cfg.nodelist[node] for node in sorted(pending))
        if now - start > limit:
            common.log(f"pods not reachable after {limit}s, giving up: {shown}")
            return False
        if now - last > 30:
            common.log("waiting for pods: " + shown)
            last = now
        time.sleep(0.5)


def shutdown_agents(cfg: common.Config) -> None:
    """Tell every agent that the batch script has ended, so its pod exits 0."""
    pending = set(range(1, cfg.nodes))
    deadline = time.monotonic() + common.env_int("GRYVIA_SLURM_SHUTDOWN_TIMEOUT", 60)
    while pending and time.monotonic() < deadline:
        pending = {node for node in pending if not _ask(cfg, node, "shutdown", "bye")}
        if pending:
            time.sleep(0.5)
    if pending:
        common.log("agents not told to stop: " + ",".join(cfg.nodelist[n] for n in pending))


def script_argv(path: str, text: str) -> list[str]:
    """How to start the script when its file cannot be executed (a noexec /tmp): the `#!`
    line's interpreter and its one optional argument, as the kernel would read them."""
    words = text.split("\n", 1)[0][2:].strip().split(None, 1)
    return [*words, path]


def batch_env(cfg: common.Config) -> dict[str, str]:
    """The batch step's environment (sbatch(1) OUTPUT ENVIRONMENT VARIABLES)."""
    env = {k: v for k, v in os.environ.items() if k != common.SCRIPT_ENV}
    try:
        import pwd

        user = pwd.getpwuid(os.getuid()).pw_name
    except (ImportError, KeyError):
        user = env.get("USER", str(os.getuid()))
    bindir = str(Path(cfg.rundir) / "bin")
    env.update(
        {
            "SLURM_JOB_ID": cfg.job_id,
            "SLURM_JOBID": cfg.job_id,
            "SLURM_PROCID": "0",
            "SLURM_LOCALID": "0",
            "SLURM_SUBMIT_DIR": env.get("SLURM_SUBMIT_DIR") or str(Path.cwd()),
            "SLURM_RESTART_COUNT": env.get("GRYVIA_RESTART_COUNT") or "0",
            "SLURM_JOB_UID": str(os.getuid()),
            "SLURM_JOB_USER": user,
            "SLURM_CLUSTER_NAME": env.get("SLURM_CLUSTER_NAME", "gryvia"),
            "PATH": bindir + os.pathsep + env.get("PATH", ""),
        }
    )
    env.update(cfg.node_env(0, [0]))
    return env


def batch_main(cfg: common.Config) -> int:
    """Pod 0: run the batch script once, enforce the time limit, then release the agents."""
    text = os.environ.get(common.SCRIPT_ENV)
    if text is None:
        common.log("no batch script in " + common.SCRIPT_ENV)
        return 1
    env = batch_env(cfg)
    if cfg.nodes > 1 and not wait_for_agents(cfg):
        shutdown_agents(cfg)
        return 1
    path = Path(cfg.rundir) / "slurm_script"
    path.write_text(text, encoding="utf-8")
    path.chmod(0o700)
    try:
        outputs = slurm_output.Outputs(env, str(Path.cwd()))
    except OSError as exc:
        common.log(f"error: cannot open the --output/--error file: {exc}")
        shutdown_agents(cfg)
        return 1
    pipes = outputs.popen_kwargs()
    try:
        proc = subprocess.Popen([str(path)], env=env, start_new_session=True, **pipes)
    except OSError:
        argv = script_argv(str(path), text)
        proc = subprocess.Popen(argv, env=env, start_new_session=True, **pipes)
    outputs.start(proc)
    stopping: list[float] = []

    def on_signal(number: int, frame: Any) -> None:
        stopping.append(time.monotonic())
        _killpg(proc.pid, signal.SIGTERM)

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    code = wait_script(cfg, proc, stopping)
    outputs.finish()
    shutdown_agents(cfg)
    return code


def signal_plan(limit: int) -> tuple[float | None, Any]:
    """--signal (env GRYVIA_SLURM_SIGNAL `NAME@SECONDS@batch|all`): when to send it (seconds
    after the start, None for never) and how: `batch` signals the batch script itself (`B:`),
    `all` every other process of its group on this pod (the steps, not the shell)."""
    spec = os.environ.get("GRYVIA_SLURM_SIGNAL", "")
    name, _, rest = spec.partition("@")
    seconds, _, target = rest.partition("@")
    number = int(name) if name.isdigit() else getattr(signal, "SIG" + name, None)
    if not limit or number is None or not seconds.isdigit():
        return None, None

    def send(pid: int) -> None:
        if target == "batch":
            with contextlib.suppress(OSError):
                os.kill(pid, number)
            return
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit() and int(entry.name) != pid:
                with contextlib.suppress(OSError):
                    if os.getpgid(int(entry.name)) == pid:
                        os.kill(int(entry.name), number)

    return max(limit - int(seconds), 0), send


def _killpg(pid: int, number: int) -> None:
    with contextlib.suppress(OSError):
        os.killpg(pid, number)


def wait_script(cfg: common.Config, proc: subprocess.Popen[bytes], stopping: list[float]) -> int:
    """Wait for the script. At the time limit (GRYVIA_SLURM_TIME_LIMIT seconds) say so as
    slurmstepd does, SIGTERM its process group, SIGKILL it GRYVIA_SLURM_KILL_WAIT seconds later
    (Slurm's KillWait, default 30) and exit with TIME_LIMIT_EXIT."""
    start = time.monotonic()
    limit = common.env_int("GRYVIA_SLURM_TIME_LIMIT", 0)
    kill_wait = common.env_int("GRYVIA_SLURM_KILL_WAIT", 30)
    timed_out = False
    warn_at, send_warning = signal_plan(limit)
    while True:
        try:
            code = proc.wait(timeout=0.2)
            break
        except subprocess.TimeoutExpired:
            pass
        now = time.monotonic()
        if warn_at is not None and now - start >= warn_at:
            warn_at = None
            send_warning(proc.pid)
        if limit and not timed_out and now - start >= limit:
            timed_out = True
            stamp = datetime.datetime.now().strftime("%Y-%m-%dT%H:%M:%S")
            where = f"JOB {cfg.job_id} ON {cfg.nodelist[0]}"
            sys.stderr.write(
                f"slurmstepd: error: *** {where} CANCELLED AT {stamp} DUE TO TIME LIMIT ***\n"
            )
            sys.stderr.flush()
            stopping.append(now)
            _killpg(proc.pid, signal.SIGTERM)
        if stopping and now - stopping[0] >= kill_wait:
            _killpg(proc.pid, signal.SIGKILL)
    _killpg(proc.pid, signal.SIGKILL)  # what is left of the script's process group
    if timed_out:
        return TIME_LIMIT_EXIT
    return code if code >= 0 else 128 - code


# ---------------------------------------------------------------- entry


def install_wrappers(rundir: str) -> None:
    """Put `srun`, `scontrol` and stand-ins for other Slurm commands on a PATH directory."""
    bindir = Path(rundir) / "bin"
    bindir.mkdir(parents=True, exist_ok=True)
    python, shim = shlex.quote(sys.executable), shlex.quote(str(Path(__file__).resolve()))
    modes = [("srun", "srun"), ("scontrol", "scontrol")]
    modes += [(name, "missing " + name) for name in common.MISSING_COMMANDS]
    for name, mode in modes:
        path = bindir / name
        path.write_text(f'#!/bin/sh\nexec {python} {shim} {mode} "$@"\n')
        path.chmod(0o755)


def run_main() -> int:
    """Pod entry: drop the operator's torch variables, then batch step (pod 0) or agent."""
    for name in re.split(r"[,\s]+", os.environ.get("GRYVIA_SLURM_SCRUB", "")):
        os.environ.pop(name, None)
    os.environ.pop(common.RUNTIME_ENV, None)
    if not os.environ.get("GRYVIA_SLURM_RUNDIR"):
        os.environ["GRYVIA_SLURM_RUNDIR"] = tempfile.mkdtemp(prefix="gryvia-slurm-")
    cfg = common.Config(dict(os.environ))
    install_wrappers(cfg.rundir)
    if cfg.weak_token and cfg.nodes > 1:
        common.log("warning: no job UID in the environment; agents use a weak shared secret")
    if cfg.index == 0:
        return batch_main(cfg)
    os.environ.pop(common.SCRIPT_ENV, None)
    return serve_agent(cfg)


def main(argv: list[str]) -> int:
    """Dispatch on the mode word (see the module docstring)."""
    mode = argv[1] if len(argv) > 1 else ""
    if mode == "run":
        return run_main()
    if mode == "srun":
        return slurm_step.srun_main(argv[2:])
    if mode == "scontrol":
        return slurm_commands.scontrol_main(argv[2:])
    if mode == "missing" and len(argv) > 2:
        return slurm_commands.missing_main(argv[2])
    common.log("usage: shim.py run|srun|scontrol|missing NAME [args...]")
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
