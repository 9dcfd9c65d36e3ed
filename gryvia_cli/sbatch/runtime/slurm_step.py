"""`srun` inside an imported job: option parsing, task layout, output and remote steps."""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
import signal
import socket
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

try:  # imported from the gryvia package (tests, type checking)
    from . import slurm_common as common
except ImportError:  # run from the pod's run directory, where the runtime files sit side by side
    import slurm_common as common  # type: ignore[no-redef]


def _words(text: str) -> list[str]:
    return text.split()


# srun's option table (Slurm src/common/slurm_opt.c entries usable by srun, plus pyxis).
SRUN_REQUIRED = frozenset(
    _words("""account acctg-freq accel-bind bb bbf bcast-exclude begin chdir cluster
    cluster-constraint clusters comment constraint container container-id context core-spec
    cores-per-socket cpu-bind cpu_bind cpu-freq cpus-per-gpu cpus-per-task deadline delay-boot
    dependency distribution epilog error exclude export extra extra-node-info gpu-bind gpu-freq
    gpus gpus-per-node gpus-per-socket gpus-per-task gres gres-flags het-group hint input job-name
    jobid licenses mail-type mail-user mcs-label mem mem-bind mem-per-cpu mem-per-gpu mincpus mpi
    msg-timeout network nodefile nodelist nodes ntasks ntasks-per-core ntasks-per-gpu
    ntasks-per-node ntasks-per-socket ntasks-per-tres open-mode output pack-group partition prefer
    priority profile prolog qos relative reservation segment signal slurmd-debug sockets-per-node
    switches task-epilog task-prolog tasks-per-node thread-spec threads threads-per-core time
    time-min tmp treewidth tres-bind tres-per-task wait wckey container-image container-mounts
    container-workdir container-name container-save container-env""")
)
SRUN_OPTIONAL = frozenset(
    _words("""bcast compress exclusive external-launcher immediate kill-on-bad-exit nice no-kill
    overlap propagate pty resv-ports send-libs x11""")
)
SRUN_FLAGS = frozenset(
    _words("""contiguous debugger-test disable-status exact help hold interactive label
    multi-prog no-allocate overcommit oversubscribe preserve-env quiet quit-on-interrupt reboot
    spread-job stepmgr test-only unbuffered usage use-min-nodes verbose version whole
    container-mount-home no-container-mount-home container-remap-root no-container-remap-root
    container-entrypoint no-container-entrypoint container-entrypoint-log container-writable
    container-readonly""")
)
_SHORT_NAMES = _words("""account extra-node-info constraint chdir preserve-env nodefile gpus
    hold immediate job-name kill-on-bad-exit licenses clusters nodes overcommit quiet core-spec
    threads version wait disable-status no-allocate begin cpus-per-task dependency error help
    input no-kill label distribution ntasks output partition qos relative oversubscribe time
    unbuffered verbose nodelist exclude""")
SRUN_SHORT = {
    letter: _SHORT_NAMES[at]
    for at, letter in enumerate("ABCDEFGHIJKLMNOQSTVWXZbcdehiklmnopqrstuvwx")
}
_ALL_LONG = sorted(SRUN_REQUIRED | SRUN_OPTIONAL | SRUN_FLAGS)


class SrunError(Exception):
    """An srun command line srun itself would refuse."""


def _long(word: str, args: list[str], pos: int, opts: dict[str, str]) -> int:
    name, has_value, value = word[2:].partition("=")
    found = [n for n in _ALL_LONG if n == name] or [n for n in _ALL_LONG if n.startswith(name)]
    if len(found) != 1:
        raise SrunError(f"unrecognized option '{word}'")
    name = "ntasks-per-node" if found[0] == "tasks-per-node" else found[0]
    if name in SRUN_FLAGS and has_value:
        raise SrunError(f"option '--{name}' doesn't allow an argument")
    if name in SRUN_REQUIRED and not has_value:
        if pos >= len(args):
            raise SrunError(f"option '--{name}' requires an argument")
        value, pos = args[pos], pos + 1
    opts[name] = value
    return pos


def _short(word: str, args: list[str], pos: int, opts: dict[str, str]) -> int:
    for offset, letter in enumerate(word[1:], start=1):
        name = SRUN_SHORT.get(letter, "")
        if not name:
            raise SrunError(f"invalid option -- '{letter}'")
        if name in SRUN_FLAGS:
            opts[name] = ""
            continue
        value = word[offset + 1 :]
        if not value and name in SRUN_REQUIRED:
            if pos >= len(args):
                raise SrunError(f"option requires an argument -- '{letter}'")
            value, pos = args[pos], pos + 1
        opts[name] = value
        break
    return pos


def parse_srun(args: list[str]) -> tuple[dict[str, str], list[str]]:
    """srun's options (getopt_long, stopping at the first non-option) and the command."""
    opts: dict[str, str] = {}
    pos = 0
    while pos < len(args) and args[pos].startswith("-") and args[pos] != "-":
        word = args[pos]
        pos += 1
        if word == "--":
            break
        pos = (_long if word.startswith("--") else _short)(word, args, pos, opts)
    return opts, args[pos:]


def plan_step(cfg: common.Config, opts: dict[str, str]) -> list[tuple[int, list[int]]]:
    """The step's layout, (node, task ids) per node: by default every task of every node,
    `-n`/`-N`/`--ntasks-per-node`/`-w`/`-r` narrow it; tasks are placed in blocks."""
    nodes = list(range(cfg.nodes))
    if "nodelist" in opts:
        short = [name.split(".")[0] for name in cfg.nodelist]
        wanted = [name.split(".")[0] for name in common.expand_hostlist(opts["nodelist"])]
        missing = [name for name in wanted if name not in short]
        if missing:
            raise SrunError("nodes not in this job: " + ",".join(missing))
        nodes = sorted({short.index(name) for name in wanted})
    nodes = nodes[_count(opts, "relative") :]
    want_nodes, ntasks = _count(opts, "nodes"), _count(opts, "ntasks")
    per_node = _count(opts, "ntasks-per-node")
    sizes: list[int] = []
    if ntasks:
        width = want_nodes or (-(-ntasks // per_node) if per_node else min(ntasks, len(nodes)))
    else:  # the job's own tasks on each node (its layout may be uneven: 3,2)
        width = want_nodes or len(nodes)
        if width > len(nodes):
            raise SrunError(f"Only allocated {len(nodes)} nodes asked for {width}")
        sizes = [per_node or cfg.task_counts[node] for node in nodes[:width]]
        ntasks = sum(sizes)
    width = min(width, ntasks)
    if width > len(nodes) or width < 1:
        raise SrunError(f"Only allocated {len(nodes)} nodes asked for {width}")
    layout: list[tuple[int, list[int]]] = []
    first = 0
    for slot in range(width):
        even = ntasks // width + (slot < ntasks % width)
        size = sizes[slot] if sizes else min(per_node, ntasks - first) if per_node else even
        layout.append((nodes[slot], list(range(first, first + size))))
        first += size
    return [(node, ids) for node, ids in layout if ids]


def _count(opts: dict[str, str], name: str) -> int:
    try:
        return int(opts[name].split("-")[0]) if opts.get(name) else 0
    except ValueError:
        raise SrunError(f"invalid --{name} value: {opts[name]}") from None


def tasks_per_node_text(counts: Sequence[int]) -> str:
    """Slurm's compressed form of tasks per node (SLURM_TASKS_PER_NODE): [4, 4, 3] ->
    `4(x2),3`; the importer (`sbatch.layout`) writes the same form."""
    groups: list[list[int]] = []
    for value in counts:
        if groups and groups[-1][0] == value:
            groups[-1][1] += 1
        else:
            groups.append([value, 1])
    return ",".join(f"{value}(x{times})" if times > 1 else str(value) for value, times in groups)


class Output:
    """Interleaves task output onto srun's stdout/stderr, optionally labelled `N: `."""

    def __init__(self, label: bool) -> None:
        self.label = label
        self.lock = threading.Lock()
        self.partial: dict[tuple[int, int], bytes] = {}

    def write(self, procid: int, number: int, data: bytes) -> None:
        """Write a chunk from task `procid` to stream 1 (stdout) or 2 (stderr)."""
        with self.lock:
            if self.label:
                lines = (self.partial.pop((procid, number), b"") + data).split(b"\n")
                self.partial[(procid, number)] = lines.pop()
                data = b"".join(b"%d: %s\n" % (procid, line) for line in lines)
            stream = sys.stdout.buffer if number == 1 else sys.stderr.buffer
            with contextlib.suppress(BrokenPipeError, ValueError):
                stream.write(data)
                stream.flush()

    def close(self) -> None:
        """Flush unterminated labelled lines."""
        for (procid, number), rest in list(self.partial.items()):
            self.partial.pop((procid, number))
            if rest:
                self.write(procid, number, rest + b"\n")


def next_step(cfg: common.Config) -> str:
    """The next step id of this job (a counter file in the run directory)."""
    with (Path(cfg.rundir or "/tmp") / "steps").open("a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        handle.seek(0)
        step = int(handle.read().strip() or 0)
        handle.seek(0)
        handle.truncate()
        handle.write(str(step + 1))
    return str(step)


def step_env(
    cfg: common.Config, opts: dict[str, str], layout: list[tuple[int, list[int]]], step: str
) -> dict[str, str]:
    """The environment every task of the step shares (srun(1) OUTPUT ENVIRONMENT VARIABLES)."""
    env = dict(os.environ)
    tokens = [token for token in opts.get("export", "").split(",") if token]
    if any(token.upper() == "NONE" for token in tokens):
        keep = ("PATH", "HOME", "GRYVIA_SLURM_RUNDIR", "GRYVIA_JOB_UID")
        env = {k: v for k, v in env.items() if k.startswith("SLURM_") or k in keep}
    for token in tokens:
        name, has_value, value = token.partition("=")
        if has_value:
            env[name] = value
    names = ",".join(cfg.nodelist[node] for node, _ in layout)
    counts = tasks_per_node_text([len(ids) for _, ids in layout])
    total = str(sum(len(ids) for _, ids in layout))
    for key in ("SLURM_STEP_ID", "SLURM_STEPID"):
        env[key] = step
    for key in ("SLURM_STEP_NUM_TASKS", "SLURM_NTASKS", "SLURM_NPROCS"):
        env[key] = total
    for key in ("SLURM_STEP_NUM_NODES", "SLURM_NNODES"):
        env[key] = str(len(layout))
    for key in ("SLURM_STEP_NODELIST", "SLURM_NODELIST"):
        env[key] = names
    for key in ("SLURM_STEP_TASKS_PER_NODE", "SLURM_TASKS_PER_NODE"):
        env[key] = counts
    env["SLURM_SRUN_COMM_HOST"] = cfg.nodelist[0]
    env["SLURM_DISTRIBUTION"] = "block"
    if opts.get("cpus-per-task"):
        env["SLURM_CPUS_PER_TASK"] = opts["cpus-per-task"]
    return env


class Remote:
    """The tasks of one step on another pod, driven through that pod's agent."""

    def __init__(
        self,
        cfg: common.Config,
        node: int,
        message: dict[str, Any],
        out: Output,
        record: Callable[[int, int, int], None],
    ) -> None:
        self.cfg, self.node, self.message, self.out, self.record = cfg, node, message, out, record
        self.procids = [int(task["procid"]) for task in message["tasks"]]
        self.sock: socket.socket | None = None
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self._read, daemon=True)

    def start(self) -> bool:
        """Send the tasks; False when the agent cannot be reached."""
        host = self.cfg.nodelist[self.node]
        try:
            self.sock = common.request(self.cfg, self.node, self.message, timeout=30)
        except OSError as exc:
            common.log(f"srun: error: {host}: cannot reach the agent: {exc}")
            for procid in self.procids:
                self.record(self.node, procid, 1)
            return False
        self.thread.start()
        return True

    def _read(self) -> None:
        seen: set[int] = set()
        assert self.sock is not None
        with contextlib.suppress(OSError, ValueError):
            for line in self.sock.makefile("rb"):
                message = json.loads(line)
                if message["t"] == "o":
                    self.out.write(message["p"], message["s"], base64.b64decode(message["d"]))
                elif message["t"] == "x":
                    seen.add(message["p"])
                    self.record(self.node, message["p"], message["c"])
                elif message["t"] == "done":
                    break
        lost = [procid for procid in self.procids if procid not in seen]
        if lost:
            common.log(f"srun: error: {self.cfg.nodelist[self.node]}: lost contact with the agent")
        for procid in lost:
            self.record(self.node, procid, 255)

    def signal(self, number: int) -> None:
        """Forward a signal to this node's tasks."""
        if self.sock is not None:
            with contextlib.suppress(OSError):
                common.send(self.sock, self.lock, {"op": "signal", "sig": number})

    def wait(self) -> None:
        """Block until this node reported every task."""
        while self.thread.is_alive():
            self.thread.join(0.2)


def srun_main(args: list[str]) -> int:
    """`srun [options] command ...` inside the batch script: run a step on the job's pods."""
    cfg = common.Config(dict(os.environ))
    try:
        opts, command = parse_srun(args)
        if "multi-prog" in opts:
            raise SrunError("--multi-prog is not supported in Gryvia jobs")
        if not command:
            raise SrunError("no command given to execute")
        if cfg.index == 0:
            layout = plan_step(cfg, opts)
        else:  # a nested srun inside a task on another pod runs on that pod only
            layout = [(cfg.index, list(range(_count(opts, "ntasks") or 1)))]
    except SrunError as exc:
        sys.stderr.write(f"srun: error: {exc}\n")
        return 1
    step = next_step(cfg)
    base = step_env(cfg, opts, layout, step)
    out = Output("label" in opts)
    codes: dict[int, int] = {}
    kill_on_bad = "kill-on-bad-exit" in opts and opts["kill-on-bad-exit"] != "0"
    runners: list[Any] = []
    guard = threading.Lock()

    def record(node: int, procid: int, code: int) -> None:
        with guard:
            codes[procid] = code
        if code:
            host = cfg.nodelist[node]
            sys.stderr.write(f"srun: error: {host}: task {procid}: Exited with exit code {code}\n")
            if kill_on_bad:
                for runner in runners:
                    runner.signal(signal.SIGKILL)

    cwd = opts.get("chdir") or str(Path.cwd())
    bindir = str(Path(cfg.rundir) / "bin")
    for node, ids in layout:
        tasks: list[dict[str, Any]] = [
            {
                "procid": procid,
                "localid": local,
                "cwd": cwd,
                "argv": command,
                "stdout": common.output_path(opts.get("output"), cfg, node, procid, step),
                "stderr": common.output_path(opts.get("error"), cfg, node, procid, step),
            }
            for local, procid in enumerate(ids)
        ]
        if node == cfg.index:
            for task in tasks:
                task["env"] = common.task_env(base, cfg, node, task, ids)
            # srun's own tasks stay in the batch script's process group, so the time limit's
            # group kill reaches them as well.
            local_set = common.TaskSet(tasks, out.write, _recorder(record, node), own_session=False)
            runners.append(local_set)
            local_set.start()
        else:
            message = {"op": "run", "env": base, "tasks": tasks, "bindir": bindir}
            remote = Remote(cfg, node, message, out, record)
            runners.append(remote)
            if not remote.start():
                for runner in runners:
                    runner.signal(signal.SIGKILL)

    def forward(number: int, frame: Any) -> None:
        for runner in runners:
            runner.signal(number)

    for number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(number, forward)
    for runner in runners:
        runner.wait()
    out.close()
    return max(codes.values(), default=0)


def _recorder(record: Callable[[int, int, int], None], node: int) -> Callable[[int, int], None]:
    return lambda procid, code: record(node, procid, code)
