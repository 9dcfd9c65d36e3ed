"""Which directives Gryvia interprets, which it maps approximately, and what to do about the rest.

Every option in `gryvia_cli.sbatch.options` falls in exactly one class here, so no directive is
ever dropped silently: `CORE` and `MAPPED` keys are read by `resources` and `mapping`; every
other key yields an `unsupported` finding with the advice below. Some values are still checked
the way Slurm checks them (an invalid `--exclusive=foo` is refused by sbatch, so it is refused
here too).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Final

from gryvia_cli.sbatch.model import Directive, Issue, error, unsupported
from gryvia_cli.sbatch.options import SITE_PLUGINS
from gryvia_cli.sbatch.values import BadValue, parse_int, parse_memory_mb, parse_time_seconds

# Interpreted into resources (sbatch(1) -N, -n, -c, --gres, --gpus*, --mem*, -t, -a, -J,
# --exclusive).
CORE: Final = frozenset(
    {
        "job-name", "nodes", "ntasks", "ntasks-per-node", "ntasks-per-gpu", "cpus-per-task",
        "cpus-per-gpu", "mincpus", "gres", "gpus", "gpus-per-node", "gpus-per-task", "mem",
        "mem-per-cpu", "mem-per-gpu", "time", "array", "exclusive",
    }
)  # fmt: skip
# Translated into other GryviaAIJob fields; `mapping` reports how.
MAPPED: Final = frozenset(
    {"partition", "chdir", "export", "constraint", "container-image", "container-workdir",
     "comment", "no-requeue", "output", "error", "open-mode", "qos", "requeue", "signal",
     "account"}
)  # fmt: skip

_CLIENT = "an sbatch client option with no effect on the job itself"
_BINDING = (
    "CPU/GPU/memory binding and layout are left to the kubelet (CPU and topology managers); "
    "the pod gets the CPUs and GPUs requested"
)
_NODES = "Gryvia does not pick nodes by name; use spec.nodeSelector or affinity in the job"

ADVICE: Final[dict[str, str]] = {
    "acctg-freq": "accounting sampling is fixed; Gryvia meters GPU time from the pods",
    "autocomplete": _CLIENT,
    "batch": "batch-host features have no equivalent; the script runs in pod 0",
    "bb": "burst buffers have no equivalent; use a PersistentVolume (spec.storage)",
    "bbf": "burst buffers have no equivalent; use a PersistentVolume (spec.storage)",
    "begin": "deferred start is not supported; submit the job when it should start",
    "cluster-constraint": "federation constraints are not supported",
    "cluster": "the job runs on the cluster you submit to (kubectl context)",
    "clusters": "the job runs on the cluster you submit to (kubectl context)",
    "container": "OCI bundles are not supported; use --image or --container-image",
    "container-id": "OCI container ids are not supported",
    "container-mounts": "container mounts are not translated; add volumes/volumeMounts to the job",
    "container-name": "named enroot containers are not supported; each pod starts fresh",
    "container-save": "saving the container is not supported",
    "container-env": "use --export=NAME=value instead",
    "container-mount-home": "home directories are not mounted; add a volume",
    "no-container-mount-home": "home directories are not mounted (already the case)",
    "container-remap-root": "use a securityContext in the job instead",
    "no-container-remap-root": "use a securityContext in the job instead",
    "container-entrypoint": "the image entrypoint is replaced by the batch script, as pyxis does "
    "by default",
    "no-container-entrypoint": "the image entrypoint is already replaced by the batch script",
    "container-entrypoint-log": "no effect: the image entrypoint does not run",
    "container-writable": "container filesystems are writable unless the job says otherwise",
    "container-readonly": "use a securityContext (readOnlyRootFilesystem) instead",
    "context": "SELinux contexts are set with a securityContext",
    "contiguous": _NODES,
    "core-spec": _BINDING,
    "cores-per-socket": _BINDING,
    "cpu-freq": "CPU frequency control is not supported",
    "deadline": "deadlines are not supported; the time limit (spec.timeout) still applies",
    "delay-boot": "node reboots are not supported",
    "dependency": "a single script's dependency is not kept, so this job starts at once; "
    "import the scripts together (`gryvia sbatch submit a.sh b.sh`) to run them as a workflow",
    "distribution": _BINDING,
    "exclude": _NODES,
    "export-file": "the submitting environment is not available; use --export=NAME=value",
    "extra": "extra node constraints are not supported",
    "extra-node-info": _BINDING,
    "get-user-env": "there is no submitting user's login environment; use --export=NAME=value",
    "gid": "set a securityContext (runAsGroup) in the job instead",
    "gpu-bind": _BINDING,
    "gpu-freq": "GPU clock control is not supported",
    "gpus-per-socket": "GPUs per socket cannot be translated (socket counts are unknown); use "
    "--gpus-per-node",
    "gres-flags": _BINDING,
    "help": _CLIENT,
    "hint": _BINDING,
    "hold": "held jobs are not imported as such; create the job with spec.suspend: true and "
    "unsuspend it to release",
    "ignore-pbs": _CLIENT,
    "input": "the batch script reads no stdin in a pod; redirect inside the script",
    "kill-on-invalid-dep": "dependencies are not supported (see --dependency)",
    "licenses": "licenses are not tracked",
    "mail-type": "mail is not sent; a GryviaJobHook posts job events instead (docs/hooks.md)",
    "mail-user": "mail is not sent; a GryviaJobHook posts job events instead (docs/hooks.md)",
    "mcs-label": "MCS labels are not supported",
    "mem-bind": _BINDING,
    "network": "network options are not translated; see spec.network (rdma, sriov)",
    "nice": "priorities: set spec.priority (0..100) in the job",
    "no-kill": "a failed pod fails the job (retries follow spec.retryLimit)",
    "nodefile": _NODES,
    "nodelist": _NODES,
    "ntasks-per-core": _BINDING,
    "ntasks-per-socket": _BINDING,
    "ntasks-per-tres": "use --ntasks-per-gpu or --ntasks-per-node",
    "overcommit": "CPU requests are as computed; overcommit is not translated",
    "oversubscribe": "pods share nodes by default",
    "parsable": _CLIENT,
    "prefer": "soft node preferences are not translated; use preferred node affinity",
    "priority": "set spec.priority (0..100) in the job",
    "profile": "profiling is not supported",
    "propagate": "resource limits (ulimits) are the container runtime's",
    "quiet": _CLIENT,
    "reboot": "node reboots are not supported",
    "reservation": "use a GryviaReservation and the annotation gryvia.io/reservation=<name>",
    "segment": "segments are not supported",
    "sockets-per-node": _BINDING,
    "spread-job": "spreading is not translated; the scheduler places the pods",
    "stepmgr": "step management is done by the in-pod runtime",
    "switches": "switch counts are not translated",
    "test-only": _CLIENT,
    "thread-spec": _BINDING,
    "threads-per-core": _BINDING,
    "time-min": "minimum times are not supported; spec.timeout is the limit",
    "tmp": "local disk is not reserved; request ephemeral-storage or mount a volume",
    "tres-bind": _BINDING,
    "tres-per-task": "use --gpus-per-task or --cpus-per-task",
    "uid": "set a securityContext (runAsUser) in the job instead",
    "usage": _CLIENT,
    "use-min-nodes": "the minimum of a node range is already used",
    "verbose": _CLIENT,
    "version": _CLIENT,
    "wait": "use `gryvia submit --wait`",
    "wait-all-nodes": "the in-pod runtime always waits for every pod before the script starts",
    "wckey": "workload characterisation keys are not supported",
    "wrap": "--wrap only works on the sbatch command line",
}

# Options whose values sbatch validates although Gryvia does not use them.
_CHOICES: Final[dict[str, tuple[str, ...]]] = {
    "exclusive": ("exclusive", "oversubscribe", "user", "mcs", "topo"),
    "kill-on-invalid-dep": ("yes", "no"),
    "no-kill": ("set", "off", "no"),
    "wait-all-nodes": ("0", "1"),
}
_MAIL_TYPES: Final = frozenset(
    {"NONE", "BEGIN", "END", "FAIL", "REQUEUE", "ALL", "INVALID_DEPEND", "STAGE_OUT",
     "TIME_LIMIT", "TIME_LIMIT_90", "TIME_LIMIT_80", "TIME_LIMIT_50", "ARRAY_TASKS"}
)  # fmt: skip


def _check_signal(value: str) -> None:
    if not re.fullmatch(r"([RB]{1,2}:)?(SIG)?[A-Z0-9]+(@\d+)?", value, re.IGNORECASE):
        raise BadValue(f'"{value}" is not [{{R|B}}:]<sig_num>[@sig_time]')


def _check_mail(value: str) -> None:
    bad = [part for part in value.split(",") if part.upper() not in _MAIL_TYPES]
    if bad:
        raise BadValue(f'"{",".join(bad)}" is not a mail type')


def _check_priority(value: str) -> None:
    if value.upper() != "TOP":
        parse_int(value, positive=False)


def _check_switches(value: str) -> None:
    count, _, wait = value.partition("@")
    parse_int(count)
    if wait:
        parse_time_seconds(wait)


_VALIDATORS: Final[dict[str, Callable[[str], object]]] = {
    "signal": _check_signal,
    "mail-type": _check_mail,
    "priority": _check_priority,
    "nice": lambda value: parse_int(value.lstrip("-"), positive=False),
    "switches": _check_switches,
    "time-min": parse_time_seconds,
    "delay-boot": parse_time_seconds,
    "tmp": parse_memory_mb,
    "core-spec": lambda value: parse_int(value, positive=False),
    "thread-spec": parse_int,
    "cores-per-socket": parse_int,
    "sockets-per-node": parse_int,
    "threads-per-core": parse_int,
    "ntasks-per-core": parse_int,
    "ntasks-per-socket": parse_int,
    "ntasks-per-tres": parse_int,
}


def validate(directive: Directive) -> Issue | None:
    """Check a value sbatch would check; an error finding when sbatch would refuse it."""
    value = directive.value
    if value is None:
        return None
    try:
        choices = _CHOICES.get(directive.key)
        if choices is not None and value.lower() not in choices:
            raise BadValue(f'"{value}" is not one of {", ".join(choices)}')
        if directive.key == "open-mode" and value[:1].lower() not in ("a", "t"):
            raise BadValue(f'"{value}" is not append or truncate')
        validator = _VALIDATORS.get(directive.key)
        if validator is not None:
            validator(value)
    except BadValue as exc:
        return error(
            "invalid-value",
            f"{directive.show()}: {exc}",
            directive.line,
            directive.directive,
        )
    return None


def classify(directives: tuple[Directive, ...]) -> list[Issue]:
    """An `unsupported` finding for each directive Gryvia does not interpret (once per option,
    at its last occurrence), plus errors for values sbatch itself would refuse."""
    issues: list[Issue] = []
    seen: set[str] = set()
    for directive in reversed(directives):
        problem = validate(directive)
        if problem is not None:
            issues.append(problem)
        if directive.key in CORE or directive.key in MAPPED or directive.key in seen:
            continue
        seen.add(directive.key)
        site = SITE_PLUGINS.get(directive.key)
        if site is not None:
            issues.append(
                unsupported(
                    "site-plugin-option",
                    f"{directive.show()}: a {site} plugin option, reported and ignored (pass "
                    "the image with --image and install software in it)",
                    directive.line,
                    directive.directive,
                )
            )
            continue
        advice = ADVICE.get(directive.key, "no Gryvia equivalent")
        issues.append(
            unsupported(
                "unsupported-directive",
                f"{directive.show()}: not translated: {advice}",
                directive.line,
                directive.directive,
            )
        )
    issues.reverse()
    return issues
