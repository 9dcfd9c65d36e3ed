"""Ages by the server's clock (issue 38): with the local clock 3 minutes behind the API
server, the console's AGE of an object the server made a minute ago reads `60s`, as kubectl
shows it, not `clock skew`. The offset comes from the `Date` header of replies the console
already gets; offsets within a couple of seconds are ignored (no jitter)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from types import SimpleNamespace

from urllib3 import HTTPHeaderDict

from gryvia_cli.core.serverclock import ServerClock, header_time
from gryvia_cli.core.timefmt import CLOCK_SKEW, age
from gryvia_cli.tui.kubesource import KubeSource
from tests.unit.cli.test_kube_watch import RestResponse, access_with

LOCAL = datetime(2026, 12, 5, 8, 0, tzinfo=UTC)
SERVER = LOCAL + timedelta(minutes=3)  # the local clock is 3 minutes behind


def _stamp(when: datetime) -> str:
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


def test_ages_follow_the_servers_clock_when_the_local_one_is_behind() -> None:
    created = _stamp(SERVER - timedelta(minutes=1))  # stamped by the server a minute ago
    assert age(created, LOCAL) == CLOCK_SKEW  # by the local clock alone
    clock = ServerClock(lambda: LOCAL)
    clock.note(format_datetime(SERVER, usegmt=True))  # "Sat, 05 Dec 2026 08:03:00 GMT"
    assert clock.now() == SERVER
    assert age(created, clock.now()) == "60s"


def test_small_offsets_and_bad_headers_change_nothing() -> None:
    clock = ServerClock(lambda: LOCAL)
    clock.note(format_datetime(LOCAL + timedelta(seconds=2), usegmt=True))
    assert clock.now() == LOCAL  # within the tolerance: the header has whole seconds
    clock.note(format_datetime(LOCAL - timedelta(minutes=3), usegmt=True))
    assert clock.now() == LOCAL - timedelta(minutes=3)  # a local clock ahead is corrected too
    for bad in (None, "", "yesterday"):
        clock.note(bad)
        assert clock.now() == LOCAL - timedelta(minutes=3)
    assert header_time("Sat, 05 Dec 2026 08:03:00 GMT") == SERVER


def _reply(date: datetime) -> RestResponse:
    headers = HTTPHeaderDict({"Date": format_datetime(date, usegmt=True)})
    reply = RestResponse(200, b'{"items": [{"metadata": {"name": "ml"}}]}')
    reply.response = SimpleNamespace(headers=headers)
    return reply


def test_the_kube_source_takes_the_offset_from_the_replies_it_already_gets() -> None:
    server = datetime.now(UTC).replace(microsecond=0) + timedelta(minutes=3)
    access, client = access_with(_reply(server))
    source = KubeSource(access, None, None)
    assert abs(source.now() - datetime.now(UTC)) < timedelta(seconds=1)  # nothing noted yet
    assert source.namespaces() == ["ml"]
    assert len(client.sent) == 1  # no request of its own
    created = _stamp(server - timedelta(minutes=1))
    assert age(created, source.now()) == "60s"


def test_the_console_without_a_frozen_clock_uses_its_sources() -> None:
    from gryvia_cli.tui import make_app
    from tests.tui.fake import FakeSource

    class Ahead(FakeSource):
        def now(self) -> datetime:
            return SERVER

    assert make_app(Ahead({})).now() == SERVER
    assert make_app(Ahead({}), clock=lambda: LOCAL).now() == LOCAL
