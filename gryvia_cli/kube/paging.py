"""Reading a whole collection in pages (`limit`/`continue`), as kubectl does with
`--chunk-size` (default 500): the API server never builds one response of every object, and
the client decodes one page at a time."""

from __future__ import annotations

from typing import Any, Protocol

from gryvia_cli.kube import resources as r
from gryvia_cli.kube.errors import ExpiredError

PAGE_SIZE = 500
"""Objects per page: kubectl's default chunk size."""


class PageAPI(Protocol):
    """The call of `KubeAccess` paging needs (tests pass a fake)."""

    def list_objects(
        self,
        res: r.Resource,
        namespace: str | None = None,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        limit: int | None = None,
        continue_token: str | None = None,
        resource_version: str | None = None,
    ) -> dict[str, Any]:
        """One page of the collection (see `KubeAccess.list_objects`)."""
        ...


def list_all(
    access: PageAPI,
    res: r.Resource,
    namespace: str | None = None,
    *,
    page_size: int = PAGE_SIZE,
    restarts: int = 2,
    **selectors: Any,
) -> list[dict[str, Any]]:
    """Every object of `res` in `namespace` (None: all), read `page_size` at a time, with the
    kind and apiVersion filled in on each.

    A continue token that expires between pages (410 Gone: the list took longer than etcd's
    compaction window) restarts the read from the first page, at most `restarts` times, so no
    object is lost or counted twice; after that the ExpiredError is raised.
    """
    for attempt in range(restarts + 1):
        items: list[dict[str, Any]] = []
        token: str | None = None
        try:
            while True:
                body = access.list_objects(
                    res, namespace, limit=page_size, continue_token=token, **selectors
                )
                items.extend(body.get("items") or [])
                token = (body.get("metadata") or {}).get("continue") or None
                if not token:
                    break
        except ExpiredError:
            if attempt == restarts or token is None:  # no token: not a page token that expired
                raise
            continue
        for item in items:
            item.setdefault("kind", res.kind)
            item.setdefault("apiVersion", res.api_version)
        return items
    raise AssertionError("unreachable")  # pragma: no cover
