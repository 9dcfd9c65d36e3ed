"""A list-then-watch that hands over each page of its list as it arrives, so a console can
show the first rows of a large collection before the last ones are read.

`PagedListWatcher` is `watch.ListWatcher` with one difference in how it lists: pages of
`PAGE_SIZE` (kubectl's chunk size) asked at the latest resourceVersion (no `resourceVersion`
parameter, as kubectl lists), because the API server answers `resourceVersion=0` from its
watch cache in one reply whatever the `limit` (measured on kube-apiserver v1.36.3: 2,000 jobs
with limit 500 came back in one reply), and a page reported to `on_page` as soon as it is
read. A continue token that expires between pages (410 Gone) raises ExpiredError from
`list_once`, and `run()` lists again from the first page, as kubectl falls back to a full
list; reconnects, kicks and stops are `ListWatcher`'s. `start_pages` reads the pages on a
daemon thread into a `core.paging.PageBuffer` before a watcher exists (the console: while
Textual loads); a watcher given it as `prepaged` takes its first list from there.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from gryvia_cli.core.paging import PAGE_SIZE, PageBuffer
from gryvia_cli.kube.deadline import Abandoned
from gryvia_cli.kube.errors import ExpiredError
from gryvia_cli.kube.paging import PageAPI
from gryvia_cli.kube.resources import Resource
from gryvia_cli.kube.watch import ListWatcher

log = logging.getLogger("gryvia.kube.pagedwatch")

PageCallback = Callable[[list[dict[str, Any]], bool, bool], None]
"""`on_page(items, first, last)`: one page's objects; `first` starts a list (forget the pages
of an earlier try), `last` ends it (`on_listed` follows with the whole list)."""


def _page(
    access: PageAPI,
    res: Resource,
    namespace: str | None,
    token: str,
    selectors: dict[str, str | None],
    page_size: int,
) -> dict[str, Any]:
    return access.list_objects(
        res, namespace, limit=page_size, continue_token=token or None, **selectors
    )


def start_pages(
    access: PageAPI,
    res: Resource,
    namespace: str | None = None,
    *,
    page_size: int = PAGE_SIZE,
    label_selector: str | None = None,
    field_selector: str | None = None,
) -> PageBuffer:
    """Start reading `res` in `namespace` (None: all) page by page on a daemon thread now;
    each LIST reply goes into the returned buffer as it arrives, a failure ends it."""
    buffer = PageBuffer()
    selectors = {"label_selector": label_selector, "field_selector": field_selector}

    def run() -> None:
        token = ""
        try:
            while True:
                body = _page(access, res, namespace, token, selectors, page_size)
                buffer.put(body)
                token = (body.get("metadata") or {}).get("continue") or ""
                if not token:
                    return
        except BaseException as exc:
            buffer.fail(exc)

    threading.Thread(target=run, name="gryvia-pages", daemon=True).start()
    return buffer


class PagedListWatcher(ListWatcher):
    """`ListWatcher` whose lists arrive page by page at `on_page` (see the module docstring);
    `on_listed` still gets each whole list, then the watch starts from its resourceVersion.
    Other arguments as `ListWatcher`'s."""

    def __init__(
        self,
        *args: Any,
        on_page: PageCallback,
        prepaged: PageBuffer | None = None,
        **kwargs: Any,
    ) -> None:
        kwargs.setdefault("page_size", PAGE_SIZE)
        super().__init__(*args, **kwargs)
        self.on_page = on_page
        self._prepaged = prepaged

    def _next_page(self, buffer: PageBuffer | None, index: int, token: str) -> dict[str, Any]:
        if buffer is not None:
            return self._request(lambda: buffer.take(index, self.request_seconds))
        return self._request(
            lambda: _page(
                self.access, self.res, self.namespace, token, self.selectors, self.page_size
            )
        )

    def list_once(self) -> tuple[list[dict[str, Any]], str]:
        """List the collection in pages at the latest version, each page to `on_page` as it
        comes; return (items, resourceVersion). The first list takes its pages from
        `prepaged` when given (a failure there lists again here, an expired token excepted).
        Raises ExpiredError when a continue token expired, DeadlineExceeded for a page slower
        than `request_seconds`, Abandoned on stop/kick."""
        buffer, self._prepaged = self._prepaged, None
        while True:
            try:
                return self._pages(buffer)
            except (Abandoned, ExpiredError):
                raise
            except Exception as exc:
                if buffer is None:
                    raise
                log.debug("the early list failed, listing again: %s", exc)
                buffer = None

    def _pages(self, buffer: PageBuffer | None) -> tuple[list[dict[str, Any]], str]:
        items: list[dict[str, Any]] = []
        token = ""
        index = 0
        while True:
            body = self._next_page(buffer, index, token)
            page = body.get("items") or []
            items.extend(page)
            meta = body.get("metadata") or {}
            token = meta.get("continue") or ""
            if self.stopped:
                raise Abandoned()
            self.on_page(page, index == 0, not token)
            index += 1
            if not token:
                return items, str(meta.get("resourceVersion") or "")
