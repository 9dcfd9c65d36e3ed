"""The query of a pod log request (core/v1 `PodLogOptions`), shared by every log reader
through `KubeAccess.pod_log`."""

from __future__ import annotations

from typing import Any


def pod_log_query(
    container: str | None,
    tail: int | None,
    timestamps: bool,
    follow: bool,
    since_time: str | None,
    previous: bool,
) -> list[tuple[str, Any]]:
    """Query pairs of `GET /api/v1/namespaces/NS/pods/NAME/log`: `sinceTime` (RFC 3339) wins
    over `tailLines`; a negative or None `tail` reads the whole log; `previous` asks for the
    container's instance before its last restart."""
    query: list[tuple[str, Any]] = []
    if container:
        query.append(("container", container))
    if previous:
        query.append(("previous", "true"))
    if since_time:
        query.append(("sinceTime", since_time))
    elif tail is not None and tail >= 0:
        query.append(("tailLines", tail))
    if timestamps:
        query.append(("timestamps", "true"))
    if follow:
        query.append(("follow", "true"))
    return query
