"""Admission of the names of the kinds that derive named children (`api.namelimits`): a
GryviaAutoTuner, GryviaWorkflow, GryviaWorkspace or GryviaInferenceService whose name is too
long for its longest child is refused on CREATE with the limit, the child and the fix, the
same text `gryvia validate` gives, so it never reaches the operator to fail there.

Only CREATE: a name cannot change, and an UPDATE that makes the spec need a shorter name
(more trials, a longer step name) is caught by the kind's reconcile (its invalid status);
refusing updates would also block the operator's own metadata writes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gryvia_operator.api import messages as msg
from gryvia_operator.api.namelimits import NAME_LIMITED_KINDS, name_length_problem
from gryvia_operator.webhook.review import Verdict, request_of, response

NAMES_PATH = "/validate-gryvia-io-v1alpha1-names"


def admit_name(request: Mapping[str, Any]) -> Verdict:
    """Deny a CREATE of a `NAME_LIMITED_KINDS` object whose name is too long for its
    children; allow everything else."""
    obj = request.get("object")
    if request.get("operation") != "CREATE" or not isinstance(obj, Mapping):
        return Verdict(True)
    kind = obj.get("kind")
    if kind not in NAME_LIMITED_KINDS:
        return Verdict(True)
    problem = name_length_problem(str(kind), obj)
    if problem:
        return Verdict(False, msg.DENIED.format(kind=kind, reasons=problem))
    return Verdict(True)


def review_name(review: Any) -> dict[str, Any]:
    """Answer an AdmissionReview for a name-limited kind (`admit_name`). Raises ReviewError
    for a malformed body."""
    request = request_of(review)
    return response(request, admit_name(request))
