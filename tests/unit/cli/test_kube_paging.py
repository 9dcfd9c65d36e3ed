"""Reading a collection in pages: every object once, in order, restarts after an expired token."""

from __future__ import annotations

from typing import Any

import pytest

from gryvia_cli.kube import resources as r
from gryvia_cli.kube.errors import ExpiredError
from gryvia_cli.kube.paging import list_all


class Pages:
    """A collection of `n` events served `limit` at a time; `expire` tokens fail once each."""

    def __init__(self, n: int, expire: frozenset[str] = frozenset()) -> None:
        self.objects = [{"metadata": {"name": f"e{i}"}} for i in range(n)]
        self.expire = set(expire)
        self.calls: list[tuple[int | None, str | None]] = []

    def list_objects(
        self, res: r.Resource, namespace: str | None = None, **kw: Any
    ) -> dict[str, Any]:
        limit, token = kw.get("limit"), kw.get("continue_token")
        self.calls.append((limit, token))
        if token in self.expire:
            self.expire.discard(token)
            raise ExpiredError("the API server failed to list Event: continue token expired")
        start = int(token or 0)
        end = start + (limit or len(self.objects))
        more = str(end) if end < len(self.objects) else ""
        return {"items": [dict(o) for o in self.objects[start:end]], "metadata": {"continue": more}}


def test_pages_of_500_and_kind_filled_in() -> None:
    api = Pages(1234)
    items = list_all(api, r.EVENT, None)
    assert [i["metadata"]["name"] for i in items] == [f"e{i}" for i in range(1234)]
    assert api.calls == [(500, None), (500, "500"), (500, "1000")]
    assert items[0]["kind"] == "Event" and items[0]["apiVersion"] == "v1"


def test_an_expired_token_restarts_from_the_first_page_without_duplicates() -> None:
    api = Pages(1200, expire=frozenset({"1000"}))
    items = list_all(api, r.EVENT, "ml", page_size=500)
    assert len(items) == 1200 and len({i["metadata"]["name"] for i in items}) == 1200
    assert api.calls[3] == (500, None)  # the restart


def test_gives_up_after_the_restarts() -> None:
    class Always(Pages):
        def list_objects(
            self, res: r.Resource, namespace: str | None = None, **kw: Any
        ) -> dict[str, Any]:
            if kw.get("continue_token"):
                raise ExpiredError("expired")
            return super().list_objects(res, namespace, **kw)

    with pytest.raises(ExpiredError):
        list_all(Always(900), r.EVENT, None, restarts=2)
