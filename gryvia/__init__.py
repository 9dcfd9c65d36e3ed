"""Gryvia as a Python library: submit, explain, watch, wait for and read the logs of GPU
jobs, and read the queue, capacity and cost, with your kubeconfig and RBAC.

    import gryvia

    client = gryvia.Client(context="sandbox", namespace="team-a")
    [job] = client.submit("examples/train-ddp.yaml")
    for line in client.logs(job.name, follow=True, all_replicas=True):
        print(line)
    print(client.wait(job.name, timeout=3600).phase)

`Client` runs what the `gryvia` CLI runs (the CLI calls the same functions), and raises the
CLI's errors, re-exported here. Importing this package loads neither Typer, Rich nor
Textual (an import contract and a test keep it so). See docs/python.md.
"""

from gryvia.client import Client
from gryvia.jobs import CancelResult, InvalidManifestError, JobPlan, JobRef
from gryvia.usage import UsageResult
from gryvia_cli.errors import (
    ApiError,
    ConflictError,
    ForbiddenError,
    GryviaError,
    InvalidInputError,
    JobEndedError,
    NeverRunsError,
    NotFoundError,
    RejectedError,
    UsageError,
    WaitTimeoutError,
)

__all__ = [
    "ApiError",
    "CancelResult",
    "Client",
    "ConflictError",
    "ForbiddenError",
    "GryviaError",
    "InvalidInputError",
    "InvalidManifestError",
    "JobEndedError",
    "JobPlan",
    "JobRef",
    "NeverRunsError",
    "NotFoundError",
    "RejectedError",
    "UsageError",
    "UsageResult",
    "WaitTimeoutError",
]
