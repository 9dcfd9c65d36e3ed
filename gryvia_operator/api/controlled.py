"""What every controller writes the same way: the owner reference that ties a child to the
Gryvia object it belongs to, and the status of an object whose spec does not validate."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import ValidationError

from gryvia_operator.api.base import GryviaResource
from gryvia_operator.api.names import ANNOTATION_CANCEL

MAX_MESSAGE = 1024
"""Longest `status.message` written (characters): a status is read in `kubectl get -o
wide` and the console; a long list of problems is cut, not the object."""


def owner_reference(owner: GryviaResource, *, block_deletion: bool = True) -> dict[str, Any]:
    """The controller owner reference to `owner` (metav1.OwnerReference): garbage collection
    deletes the child with it. `block_deletion=False` leaves out blockOwnerDeletion, which
    needs update rights on the owner's finalizers (a tenant's cluster-wide children)."""
    ref: dict[str, Any] = {
        "apiVersion": owner.api_version,
        "kind": owner.kind,
        "name": owner.name,
        "uid": str(owner.metadata.uid or ""),
        "controller": True,
    }
    if block_deletion:
        ref["blockOwnerDeletion"] = True
    return ref


def invalid_status(before: Mapping[str, Any], problems: Sequence[str]) -> dict[str, Any]:
    """The status of an object whose spec does not validate: phase Invalid and the problems
    (joined with "; ", at most MAX_MESSAGE characters); whatever the status said before
    (runs, trials, endpoints) stays, as its children are left alone."""
    message = "; ".join(problems) or "invalid spec"
    return {**before, "phase": "Invalid", "message": message[:MAX_MESSAGE]}


def spec_problems(exc: ValidationError) -> list[str]:
    """The messages of a model's validation error, one per problem, without pydantic's
    "Value error, " prefix (what `invalid_status` and events show)."""
    return [str(e["msg"]).removeprefix("Value error, ") for e in exc.errors()]


def first_problem(exc: ValidationError) -> tuple[str, str]:
    """(field path as `spec.timeSlicing.replicas`, message without pydantic's prefix) of the
    first problem of a validation error: what a CLI error names."""
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first["loc"])
    return where, str(first["msg"]).removeprefix("Value error, ")


def checked_body(model: type[GryviaResource], body: dict[str, Any]) -> dict[str, Any]:
    """`body` when `model` accepts it; else ValueError `<field>: <message>` naming the first
    problem (`first_problem`): what the CLI's object builders raise for a bad option."""
    try:
        model.model_validate(body)
    except ValidationError as exc:
        where, message = first_problem(exc)
        raise ValueError(f"{where}: {message}") from None
    return body


def cancel_patch() -> dict[str, Any]:
    """The merge patch that cancels a GryviaAIJob, as `gryvia cancel` writes it (annotation
    gryvia.io/cancel; docs/cli.md): what a controller sends a child job it stops."""
    return {"metadata": {"annotations": {ANNOTATION_CANCEL: "true"}}}
