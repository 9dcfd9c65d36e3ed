"""Who submitted a GryviaAIJob: the annotations the admission webhook stamps from the
request's `userInfo`, the rule that refuses a forged or changed value, and how views read it.

Pure (no I/O). The mutating webhook (`webhook.review.mutate_aijob`) sets the annotations on
CREATE and puts them back when an UPDATE leaves them out; the validating webhook
(`webhook.review.admit_aijob`) refuses a CREATE whose values are not the requester's own and
any UPDATE that adds, changes or removes them. A job created while the webhooks were down
(failurePolicy Ignore) has no submitter: views show `-` and per-user quota limits do not
count it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from gryvia_operator.api.names import (
    ANNOTATION_SUBMITTER,
    ANNOTATION_SUBMITTER_GROUPS,
    SUBMITTER_ANNOTATIONS,
)

UNKNOWN = "-"
"""What views show for a job without a submitter."""


def _map(value: Any) -> Mapping[str, Any]:
    if type(value) is dict:  # what JSON gives (or None): skips the slower ABC check
        return value
    if value is None:
        return {}
    return value if isinstance(value, Mapping) else {}


def annotations_of(obj: Any) -> Mapping[str, Any]:
    """`metadata.annotations` of an API object ({} when absent or malformed)."""
    return _map(_map(_map(obj).get("metadata")).get("annotations"))


def submitter_of(obj: Any) -> str:
    """The submitter's username of a GryviaAIJob body, "" when it has none."""
    value = annotations_of(obj).get(ANNOTATION_SUBMITTER)
    return value if isinstance(value, str) else ""


def groups_text(groups: Sequence[str]) -> str:
    """The groups annotation's value: the groups comma-separated, in the given order."""
    return ",".join(str(g) for g in groups)


def stamp(user_info: Any) -> dict[str, str]:
    """The submitter annotations for a request's `userInfo` ({username, groups}); {} when it
    names no user."""
    info = _map(user_info)
    username = info.get("username")
    if not isinstance(username, str) or not username:
        return {}
    groups = [g for g in info.get("groups") or [] if isinstance(g, str)]
    return {ANNOTATION_SUBMITTER: username, ANNOTATION_SUBMITTER_GROUPS: groups_text(groups)}


def forged(obj: Any, user_info: Any) -> str:
    """The denial for a CREATE whose submitter annotations differ from what the requester's
    `userInfo` gives ("" when they are absent or equal): nobody may submit in another's name.
    """
    wanted, present = stamp(user_info), annotations_of(obj)
    for key in SUBMITTER_ANNOTATIONS:
        if key in present and present.get(key) != wanted.get(key):
            return (
                f"annotation {key} is set by the admission webhook from the requesting user "
                f"({wanted.get(key, 'no user')!r}) and cannot be set to {present.get(key)!r}: "
                "remove it from the manifest"
            )
    return ""


def changed(obj: Any, old: Any) -> str:
    """The denial for an UPDATE that adds, changes or removes a submitter annotation ("" when
    both stay as they were)."""
    new_a, old_a = annotations_of(obj), annotations_of(old)
    for key in SUBMITTER_ANNOTATIONS:
        if new_a.get(key) != old_a.get(key):
            return (
                f"annotation {key} records who submitted the job and cannot be changed "
                f"(it is {old_a.get(key)!r}): leave it out of the update"
            )
    return ""


def stamp_patch(obj: Any, user_info: Any) -> list[dict[str, Any]]:
    """JSONPatch operations that set the submitter annotations of `obj` from `user_info`
    ([] when `userInfo` names no user or the values are already right)."""
    return _add_patch(obj, stamp(user_info))


def restore_patch(obj: Any, old: Any) -> list[dict[str, Any]]:
    """JSONPatch operations that put back the submitter annotations an UPDATE left out of
    `obj` (a `kubectl replace` or server-side apply of a manifest without them) from the
    stored `old`; a changed value is not touched (`changed` refuses it)."""
    new_a, old_a = annotations_of(obj), annotations_of(old)
    kept = {k: old_a.get(k) for k in SUBMITTER_ANNOTATIONS}
    return _add_patch(obj, {k: v for k, v in kept.items() if k not in new_a and isinstance(v, str)})


def _add_patch(obj: Any, wanted: Mapping[str, str]) -> list[dict[str, Any]]:
    """JSONPatch `add` operations giving `obj` the annotations `wanted` ([] when it has them)."""
    present = annotations_of(obj)
    if not wanted or all(present.get(k) == v for k, v in wanted.items()):
        return []
    if not isinstance(_map(_map(obj).get("metadata")).get("annotations"), Mapping):
        return [{"op": "add", "path": "/metadata/annotations", "value": wanted}]
    return [
        {"op": "add", "path": "/metadata/annotations/" + _pointer(key), "value": value}
        for key, value in wanted.items()
        if present.get(key) != value
    ]


def _pointer(key: str) -> str:
    """`key` escaped as one JSON Pointer token (RFC 6901: ~ as ~0, / as ~1)."""
    return key.replace("~", "~0").replace("/", "~1")
