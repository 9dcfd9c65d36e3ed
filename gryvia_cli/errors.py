"""Gryvia's expected errors and the exit codes they map to (documented in docs/cli.md).

| code | meaning |
|---|---|
| 0 | success |
| 1 | the command failed (a GryviaError, a failed job with --wait, invalid input files) |
| 2 | usage error (bad flag or argument; Typer/Click) |
| 3 | `submit`: a job would never run (fail fast; `--force` creates it anyway); `--explain` |
| 4 | `submit --explain`/`--dry-run=server`: a job would wait (the estimate is printed) |
| 5 | `maintenance start --drain`: the node is cordoned but pods could not be evicted |
| 124 | a wait (`submit --wait/--logs`) passed its `--wait-timeout` before the job ended |
| 130 | interrupted (Ctrl-C) |
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_NEVER_RUNS = 3
EXIT_WOULD_WAIT = 4
EXIT_NOT_DRAINED = 5
EXIT_TIMEOUT = 124
EXIT_INTERRUPTED = 130

EXIT_CODES: tuple[tuple[int, str], ...] = (
    (EXIT_OK, "success"),
    (
        EXIT_FAILED,
        "the command failed: an error message and a hint on stderr (cluster unreachable, "
        "forbidden, not found, invalid file, a job that ended Failed/Cancelled/Rejected "
        "with --wait, a broken required platform part in `status`)",
    ),
    (EXIT_USAGE, "usage error: unknown flag, bad argument or value"),
    (
        EXIT_NEVER_RUNS,
        "would never run: `submit` refuses a job that can never fit (a GPU type no node and "
        "no SKU has, more GPUs per pod than any node of its type, more nodes than exist, more "
        "GPUs than its quota) unless --force; `submit --explain` found such a job",
    ),
    (
        EXIT_WOULD_WAIT,
        "would wait: `submit --explain`/`--dry-run=server` found a job that cannot start now "
        "(the reason and the start estimate are printed)",
    ),
    (
        EXIT_NOT_DRAINED,
        "not drained: `maintenance start --drain` cordoned the node (it stays in maintenance) "
        "but a PodDisruptionBudget kept some pods from eviction until --timeout; the report "
        "names each pod and budget",
    ),
    (
        EXIT_TIMEOUT,
        "a wait gave up: `submit --wait/--logs` passed its --wait-timeout before the job "
        "ended (the job keeps running; the message says how to keep following it)",
    ),
    (EXIT_INTERRUPTED, "interrupted (Ctrl-C)"),
)
"""Every exit code with its meaning, in the order docs/cli.md lists them."""

HINT_KUBECONFIG = "point KUBECONFIG at your cluster, or pass --context <name>"
HINT_UNREACHABLE = "check that the cluster is reachable (kubectl get nodes)"
HINT_FORBIDDEN = "your kubeconfig user lacks permission for this resource"
HINT_INSTALL = (
    "install the chart: helm install gryvia charts/gryvia -n gryvia-system --create-namespace "
    "(a sandbox: 'gryvia sandbox up' installs it; helm is in ~/.cache/gryvia/k8s/*/bin)"
)


def job_failure_hint(names: list[str]) -> str:
    """What to run about jobs that did not succeed, with their names filled in:
    `gryvia logs train --all-replicas; gryvia status train` (one pair per job)."""
    return "; ".join(f"gryvia logs {name} --all-replicas; gryvia status {name}" for name in names)


def wrong_namespace_hint(name: str, namespaces: list[str], noun: str = "job") -> str | None:
    """The hint for a `<noun> NAME` not found in the current namespace but present in
    `namespaces`: `it exists in namespace ml: pass -n ml` (None when it exists nowhere)."""
    if not namespaces:
        return None
    if len(namespaces) == 1:
        return f'{noun} "{name}" exists in namespace {namespaces[0]}: pass -n {namespaces[0]}'
    return f'{noun} "{name}" exists in namespaces {", ".join(namespaces)}: pass -n NAMESPACE'


class GryviaError(Exception):
    """An expected failure: printed as one line plus an optional hint, never a traceback.

    `causes` are up to two short "caused by" lines shown under the message; `details` (for
    example the API server's raw Status) are shown only with `-v`.
    """

    exit_code = EXIT_FAILED

    def __init__(
        self,
        message: str,
        hint: str | None = None,
        *,
        causes: tuple[str, ...] = (),
        details: tuple[str, ...] = (),
    ) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.causes = causes
        self.details = details


class NeverRunsError(GryviaError):
    """`gryvia submit`: a job can never fit (fail fast); nothing was created."""

    exit_code = EXIT_NEVER_RUNS


class UsageError(GryviaError):
    """The command line is wrong in a way Typer cannot see (e.g. two exclusive options)."""

    exit_code = EXIT_USAGE


class KubeconfigError(GryviaError):
    """No usable kubeconfig: no file, an unknown context, or credentials that do not load."""

    def __init__(self, message: str, hint: str | None = HINT_KUBECONFIG, **kw: tuple[str, ...]):
        super().__init__(message, hint, **kw)


class ClusterUnreachableError(GryviaError):
    """The API server did not answer (refused, timed out, TLS failure)."""

    def __init__(self, message: str, hint: str | None = HINT_UNREACHABLE, **kw: tuple[str, ...]):
        super().__init__(message, hint, **kw)


class ForbiddenError(GryviaError):
    """The API server refused the request for this user (401 or 403 from RBAC)."""

    def __init__(self, message: str, hint: str | None = HINT_FORBIDDEN, **kw: tuple[str, ...]):
        super().__init__(message, hint, **kw)


class NotInstalledError(GryviaError):
    """A Gryvia kind is not served by this cluster (its CRD is not installed)."""

    def __init__(self, message: str, hint: str | None = HINT_INSTALL, **kw: tuple[str, ...]):
        super().__init__(message, hint, **kw)


class NotFoundError(GryviaError):
    """A named object (job, node, quota, ...) does not exist."""


class ConflictError(GryviaError):
    """An object with that name exists already, or changed under us."""


class RejectedError(GryviaError):
    """The API server or an admission webhook refused an object as invalid."""


class ApiError(GryviaError):
    """Any other API server failure (5xx, unexpected status)."""


class InvalidInputError(GryviaError):
    """A manifest, script or other input file is unreadable or invalid."""


class JobEndedError(GryviaError):
    """A job followed with --wait ended Failed, Cancelled, Rejected or Preempted."""


class NotDrainedError(GryviaError):
    """`maintenance start --drain`: pods a disruption budget kept on the cordoned node."""

    exit_code = EXIT_NOT_DRAINED


class WaitTimeoutError(GryviaError):
    """A wait (`submit --wait/--logs`) passed its --wait-timeout before the job ended."""

    exit_code = EXIT_TIMEOUT
