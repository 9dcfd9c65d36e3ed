"""How an imported job starts: the POSIX sh entrypoint, the shipped runtime and their env vars.

The runtime (`runtime/*.py` as one JSON object), the fallback for images without python3 and
the batch script live once per job or array in a ConfigMap `<name>-slurm-runtime` (keys
`runtime`, `fallback` and `script`), owned by the jobs
that use it (`runtime_owners`), so an array element's manifest stays a few KB. Each container
reads both keys as env vars (`valueFrom.configMapKeyRef`): env vars from a ConfigMap work in
every cluster and in the sandbox's pod runner alike, which runs no volumes.

Every pod runs `/bin/sh -c ENTRYPOINT`. It finds a scratch directory that allows executables,
then, when the image has python3 >= 3.7, unpacks the runtime (env GRYVIA_SLURM_RUNTIME) and
execs `shim.py run`: pod 0 runs the batch script once and
srun fans out to agents on the other pods. Without python3 a job of one pod and one task runs
its script with an `srun` that runs its command once (and refuses to start more tasks or
nodes) and an `scontrol` that only expands host names; any other job fails at once with the
reason (exit 127), never runs differently (issue 39, finding 3).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any, Final

from gryvia_cli.sbatch.layout import tasks_per_node_text
from gryvia_cli.sbatch.runtime.slurm_common import RUNTIME_ENV, SCRIPT_ENV
from gryvia_cli.sbatch.runtime.slurm_step import SRUN_REQUIRED, SRUN_SHORT

RUNTIME_FILES: Final = (
    "shim.py", "slurm_common.py", "slurm_step.py", "slurm_commands.py", "slurm_output.py",
)  # fmt: skip
RUNTIME_KEY: Final = "runtime"
FALLBACK_KEY: Final = "fallback"
FALLBACK_ENV: Final = "GRYVIA_SLURM_FALLBACK"
SCRIPT_KEY: Final = "script"
RUNTIME_SUFFIX: Final = "-slurm-runtime"
# One env string may hold at most 128 KiB (Linux MAX_ARG_STRLEN); keep the script well below.
MAX_SCRIPT_BYTES: Final = 120 * 1024
# Set by the operator for its own torchrun convention; a Slurm batch step has none of them.
OPERATOR_VARIABLES: Final = (
    "MASTER_ADDR", "MASTER_PORT", "WORLD_SIZE", "RANK", "NODE_RANK", "NNODES", "NPROC_PER_NODE",
    "GRYVIA_DIST_FRAMEWORK", "GRYVIA_DIST_BACKEND", "GRYVIA_ELASTIC", "GRYVIA_ELASTIC_MIN_NODES",
    "GRYVIA_ELASTIC_MAX_NODES", "NCCL_DEBUG", "NCCL_IB_DISABLE", "NCCL_NET_GDR_LEVEL",
)  # fmt: skip

# Set by the runtime in the pod (not known when converting): the batch step's, then srun's.
BATCH_VARIABLES: Final = (
    "SLURM_JOB_ID", "SLURM_JOBID", "SLURM_PROCID", "SLURM_LOCALID", "SLURM_NODEID",
    "SLURMD_NODENAME", "SLURM_TOPOLOGY_ADDR", "SLURM_GTIDS", "SLURM_SUBMIT_DIR",
    "SLURM_RESTART_COUNT", "SLURM_JOB_UID", "SLURM_JOB_USER",
)  # fmt: skip
STEP_VARIABLES: Final = (
    "SLURM_STEP_ID", "SLURM_STEPID", "SLURM_STEP_NUM_TASKS", "SLURM_STEP_NUM_NODES",
    "SLURM_STEP_NODELIST", "SLURM_STEP_TASKS_PER_NODE", "SLURM_SRUN_COMM_HOST",
    "SLURM_DISTRIBUTION",
)  # fmt: skip

_ENTRYPOINT: Final = r"""# gryvia: run an imported Slurm batch script (gryvia_cli/sbatch)
set -u
idx="${JOB_COMPLETION_INDEX:-${NODE_RANK:-0}}"
run="${GRYVIA_SLURM_RUNDIR:-}"
if [ -z "$run" ]; then
  for base in "${TMPDIR:-}" /tmp /dev/shm /var/tmp "${HOME:-}" "$PWD"; do
    [ -n "$base" ] || continue
    d="$base/gryvia-slurm-$idx"
    mkdir -p "$d/bin" 2>/dev/null || continue
    printf '#!/bin/sh\nexit 0\n' > "$d/bin/.probe" 2>/dev/null || continue
    chmod 700 "$d/bin/.probe" 2>/dev/null && "$d/bin/.probe" 2>/dev/null || continue
    run="$d"
    break
  done
fi
if [ -z "$run" ]; then
  echo "gryvia-slurm: no writable directory that allows executables" >&2
  exit 1
fi
mkdir -p "$run/bin" || exit 1
export GRYVIA_SLURM_RUNDIR="$run"
py="${GRYVIA_SLURM_PYTHON:-python3}"
if command -v "$py" >/dev/null 2>&1 &&
   "$py" -c 'import sys; sys.exit(sys.version_info < (3, 7))' >/dev/null 2>&1; then
  exec "$py" -c '
import json, os, sys
run = os.environ["GRYVIA_SLURM_RUNDIR"]
os.environ.pop("@FALLBACK@", None)
for name, text in json.loads(os.environ.pop("@RUNTIME@")).items():
    with open(os.path.join(run, name), "w") as handle:
        handle.write(text)
shim = os.path.join(run, "shim.py")
os.execve(sys.executable, [sys.executable, shim, "run"], dict(os.environ))
'
fi
printf '%s' "${@FALLBACK@:-}" > "$run/fallback.sh" && [ -s "$run/fallback.sh" ] || {
  echo "gryvia-slurm: no python3 >= 3.7 in the image and no fallback in the job's runtime" >&2
  exit 127
}
unset @FALLBACK@
exec /bin/sh "$run/fallback.sh"
"""


_FALLBACK: Final = r"""# gryvia: an imported Slurm batch script in an image without python3 >= 3.7
set -u
idx="${JOB_COMPLETION_INDEX:-${NODE_RANK:-0}}"
run="$GRYVIA_SLURM_RUNDIR"
if [ "${SLURM_NNODES:-1}" != 1 ] || [ "${GRYVIA_SLURM_TASKS_PER_NODE:-1}" != 1 ]; then
  echo "gryvia-slurm: error: the image has no python3 >= 3.7, which this job needs to run its" \
    "batch script once and start ${GRYVIA_SLURM_TASKS_PER_NODE:-1} task(s) on each of" \
    "${SLURM_NNODES:-1} pod(s) as Slurm does; use an image with python3 (the job fails" \
    "rather than run differently)" >&2
  exit 127
fi
echo "gryvia-slurm: warning: no python3 >= 3.7 in the image: srun runs its command once" >&2
cat > "$run/bin/srun" <<'GRYVIA_EOF'
#!/bin/sh
want=
while [ $# -gt 0 ]; do
  case "$1" in
    --) shift; break ;;
    -n|-N|--ntasks|--nodes|--ntasks-per-node) want="${2:-}"; shift; [ $# -gt 0 ] && shift ;;
    --ntasks=*|--nodes=*|--ntasks-per-node=*) want="${1#*=}"; shift ;;
    -n?*|-N?*) want="${1#-?}"; shift ;;
    --*=*) shift ;;
    @LONG@) shift; [ $# -gt 0 ] && shift ;;
    --*) shift ;;
    -[@SHORT@]) shift; [ $# -gt 0 ] && shift ;;
    -?*) shift ;;
    *) break ;;
  esac
done
[ $# -gt 0 ] || { echo "srun: error: no command given to execute" >&2; exit 1; }
case "$want" in ""|1) ;; *)
  echo "srun: error: starting $want tasks or nodes needs python3 >= 3.7 in the image" >&2
  exit 1 ;;
esac
exec "$@"
GRYVIA_EOF
cat > "$run/bin/scontrol" <<'GRYVIA_EOF'
#!/bin/sh
if [ "${1:-}" = show ] && { [ "${2:-}" = hostnames ] || [ "${2:-}" = hostname ]; }; then
  printf '%s\n' "${3:-${SLURM_JOB_NODELIST:-}}" | tr ',' '\n'
  exit 0
fi
echo "scontrol: error: 'scontrol $*' is not available inside a Gryvia job" >&2
exit 1
GRYVIA_EOF
chmod 755 "$run/bin/srun" "$run/bin/scontrol"
for v in $(printf '%s' "${GRYVIA_SLURM_SCRUB:-}" | tr ',' ' '); do unset "$v"; done
seed="${GRYVIA_JOB_UID:-${GRYVIA_JOB_UID_LEGACY:-${SLURM_JOB_NAME:-}}}"
SLURM_JOB_ID=$(printf '%s' "$seed" | cksum | cut -d ' ' -f 1)
SLURMD_NODENAME=$(printf '%s\n' "${SLURM_JOB_NODELIST:-}" | tr ',' '\n' | sed -n "$((idx + 1))p")
export SLURM_JOB_ID SLURMD_NODENAME SLURM_JOBID="$SLURM_JOB_ID" SLURM_NODEID="$idx"
export SLURM_PROCID="$idx" SLURM_LOCALID=0 SLURM_SUBMIT_DIR="${SLURM_SUBMIT_DIR:-$PWD}"
export SLURM_RESTART_COUNT="${GRYVIA_RESTART_COUNT:-0}" PATH="$run/bin:$PATH"
unset @RUNTIME@
printf '%s' "$@SCRIPT@" > "$run/slurm_script" && chmod 700 "$run/slurm_script" || exit 1
unset @SCRIPT@
exec "$run/slurm_script"
"""


def _fill(template: str) -> str:
    long_options = "|".join(f"--{name}" for name in sorted(SRUN_REQUIRED))
    short = "".join(sorted(k for k, v in SRUN_SHORT.items() if v in SRUN_REQUIRED))
    return (
        template.replace("@LONG@", long_options)
        .replace("@SHORT@", short)
        .replace("@RUNTIME@", RUNTIME_ENV)
        .replace("@SCRIPT@", SCRIPT_ENV)
        .replace("@FALLBACK@", FALLBACK_ENV)
    )


@cache
def entrypoint() -> str:
    """The POSIX sh program every pod of an imported job runs (in the job's manifest: it
    stays small, as every array element carries it)."""
    return _fill(_ENTRYPOINT)


@cache
def fallback() -> str:
    """The POSIX sh program a pod runs when its image has no python3 >= 3.7 (in the runtime
    ConfigMap, key `fallback`, env GRYVIA_SLURM_FALLBACK)."""
    return _fill(_FALLBACK)


@cache
def runtime_bundle() -> str:
    """The runtime's source files as one JSON object (name -> text)."""
    package = resources.files("gryvia_cli.sbatch.runtime")
    files = {name: package.joinpath(name).read_text(encoding="utf-8") for name in RUNTIME_FILES}
    return json.dumps(files, separators=(",", ":"))


@dataclass(frozen=True)
class Launch:
    """The container command and the runtime's env entries (Kubernetes EnvVar dicts)."""

    command: list[str]
    env: list[dict[str, Any]]


def _field(name: str, path: str) -> dict[str, Any]:
    return {"name": name, "valueFrom": {"fieldRef": {"fieldPath": path}}}


def _from_config(name: str, config: str, key: str, optional: bool = False) -> dict[str, Any]:
    ref: dict[str, Any] = {"name": config, "key": key}
    if optional:
        ref["optional"] = True
    return {"name": name, "valueFrom": {"configMapKeyRef": ref}}


def runtime_config_name(base: str) -> str:
    """The runtime ConfigMap of the job or array whose Kubernetes base name is `base`."""
    return base + RUNTIME_SUFFIX


def build_runtime_config(
    name: str, script: str, labels: dict[str, str], namespace: str | None = None
) -> dict[str, Any]:
    """The ConfigMap holding the runtime bundle, the fallback and the batch script (keys
    `runtime`, `fallback`, `script`); its owners are set once the jobs exist (`runtime_owners`)."""
    metadata: dict[str, Any] = {"name": name, "labels": dict(labels)}
    if namespace:
        metadata["namespace"] = namespace
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": metadata,
        "data": {RUNTIME_KEY: runtime_bundle(), FALLBACK_KEY: fallback(), SCRIPT_KEY: script},
    }


def runtime_owners(jobs: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """A merge patch making the created `jobs` (with their uids) the ConfigMap's owners: it is
    garbage-collected when the last of them is deleted."""
    owners = [
        {
            "apiVersion": job["apiVersion"],
            "kind": job["kind"],
            "name": job["metadata"]["name"],
            "uid": job["metadata"]["uid"],
        }
        for job in jobs
        if (job.get("metadata") or {}).get("uid")
    ]
    return {"metadata": {"ownerReferences": owners}}


def build_launch(
    script: str,
    *,
    task_counts: tuple[int, ...],
    time_limit_seconds: int | None,
    user_env: Iterable[str] = (),
    config: str,
    outputs: dict[str, str] | None = None,
) -> Launch:
    """Command and env that run `script` faithfully in every pod of the job.

    `task_counts` are srun's default task counts per pod, pod 0 first (GRYVIA_SLURM_TASKS_PER_NODE:
    one number when every pod starts as many, else Slurm's form `3,2`, `2(x2),1(x2)`, which
    `runtime/slurm_common.expand_counts` reads); `time_limit_seconds` is enforced by
    the runtime too (Slurm's message, SIGTERM, KillWait, SIGKILL); `user_env` names variables
    the script's `--export` sets, which the runtime must not drop; `config` names the
    runtime ConfigMap the script and runtime are read from; `outputs` the --output/--error
    patterns and --open-mode as env (`runtime/slurm_output.py` reads them).
    """
    keep = set(user_env)
    even = len(set(task_counts)) == 1
    per_node = str(task_counts[0]) if even else tasks_per_node_text(task_counts)
    scrub = ",".join(name for name in OPERATOR_VARIABLES if name not in keep)
    env: list[dict[str, Any]] = [
        {"name": "GRYVIA_SLURM_TASKS_PER_NODE", "value": per_node},
        {"name": "GRYVIA_SLURM_SCRUB", "value": scrub},
        _field("GRYVIA_JOB_UID", "metadata.labels['batch.kubernetes.io/controller-uid']"),
        _field("GRYVIA_JOB_UID_LEGACY", "metadata.labels['controller-uid']"),
        _field(
            "GRYVIA_RESTART_COUNT",
            "metadata.annotations['batch.kubernetes.io/job-index-failure-count']",
        ),
    ]
    if time_limit_seconds:
        env.append({"name": "GRYVIA_SLURM_TIME_LIMIT", "value": str(time_limit_seconds)})
    env += [{"name": name, "value": value} for name, value in (outputs or {}).items()]
    env.append(_from_config(SCRIPT_ENV, config, SCRIPT_KEY))
    env.append(_from_config(RUNTIME_ENV, config, RUNTIME_KEY))
    env.append(_from_config(FALLBACK_ENV, config, FALLBACK_KEY, optional=True))
    return Launch(command=["/bin/sh", "-c", entrypoint(), "gryvia-sbatch"], env=env)
