"""The documents about the platform and the local sandboxes: `gryvia status` without a job
(PlatformStatus), `gryvia sandbox list` (SandboxList) and `gryvia sandbox status`
(SandboxStatus)."""

from __future__ import annotations

from typing import Literal

from gryvia_cli.schemas.base import CliModel, Document


class PlatformComponent(CliModel):
    """One line of the platform report."""

    name: str
    """Operator, Webhook, CRDs, GPU nodes, Jobs, or the line about pods held by the save-log
    finalizer."""
    state: str
    """`OK`, `Warning`, `Error` or `disabled`."""
    message: str
    required: bool
    """A required part in Error makes `gryvia status` exit 1."""


class PlatformStatus(Document):
    """`gryvia status -o json` (without a job): the platform's parts and the jobs by phase
    (exit 1 when a required part is in Error)."""

    kind: Literal["PlatformStatus"]
    overall: Literal["ok", "warn", "error"]
    """`error` (a required part broken), `warn` (anything else not OK) or `ok`."""
    components: list[PlatformComponent]
    warnings: list[str]
    """What could not be read (read failures are warnings)."""
    errors: list[str]
    """`pod X: Reason` for platform pods that are not Running and Ready."""
    jobs: dict[str, int]
    """Phase -> number of GryviaAIJobs, every known phase listed (0 included); empty when the
    jobs could not be read."""


class Sandbox(CliModel):
    """One sandbox on this machine."""

    name: str
    context: str
    """Its kubeconfig context, `gryvia-NAME`."""
    state: Literal["Running", "Degraded", "Stopped"]
    """`Running` (every component running), `Degraded` (some) or `Stopped` (none)."""
    server: str
    """The API server's URL; "" when the sandbox has no kubeconfig."""
    components: dict[str, bool]
    """Component (etcd, kube-apiserver, gryvia-operator, ...) -> whether its process runs."""
    kubeconfig: str
    """The path of its kubeconfig (the single context `gryvia-NAME`)."""


class SandboxList(Document):
    """`gryvia sandbox list -o json`: every sandbox with a folder on this machine, running or
    not."""

    kind: Literal["SandboxList"]
    items: list[Sandbox]


class SandboxStatus(Sandbox, Document):
    """`gryvia sandbox status -o json`: one sandbox's components (exit 1 unless every one
    runs)."""

    kind: Literal["SandboxStatus"]
