"""Reading a whole collection in pages (`limit`/`continue`), as kubectl does with
`--chunk-size` (default 500): the API server never builds one response of every object, and
the client decodes one page at a time."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from gryvia_cli.kube import resources as r
from gryvia_cli.kube.errors import ExpiredError

if TYPE_CHECKING:  # concurrent.futures (and logging with it) only for a prefetch: ~6 ms
    from concurrent.futures import Future

    from gryvia_cli.kube.watch import WatchAPI

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


def prefetch_list(
    access: WatchAPI,
    res: r.Resource,
    namespace: str | None = None,
    *,
    label_selector: str | None = None,
    field_selector: str | None = None,
) -> Future[tuple[list[dict[str, Any]], str]]:
    """Start listing `res` (in pages, as `ListWatcher.list_once`) on a daemon thread now; the
    Future's result is (items, resourceVersion), or the list's exception. A ListWatcher given
    it as `prelisted` watches from that list instead of listing again, so the network round
    trips overlap whatever the caller does meanwhile (the console: loading its UI)."""
    import threading
    from concurrent.futures import Future

    from gryvia_cli.kube.watch import ListWatcher

    future: Future[tuple[list[dict[str, Any]], str]] = Future()
    lister = ListWatcher(
        access,
        res,
        namespace,
        on_listed=lambda items, version: None,
        on_event=lambda event: None,
        label_selector=label_selector,
        field_selector=field_selector,
    )

    def run() -> None:
        try:
            future.set_result(lister.list_once())
        except BaseException as exc:
            future.set_exception(exc)

    threading.Thread(target=run, name="gryvia-prefetch", daemon=True).start()
    return future
