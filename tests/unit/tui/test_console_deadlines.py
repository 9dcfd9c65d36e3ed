"""Slow is not dead (issue 38, failure 12): the console waits `DEAD_SECONDS` for an answer
(its connection and TLS handshake included) before it calls the API server gone; an answer
later than `SLOW_SECONDS` is `slow N s`, and a request whose own timeout ends its wait sooner
is `slow >N s` until no answer has come for `DEAD_SECONDS`."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from urllib3.exceptions import ConnectionError as Urllib3ConnectionError
from urllib3.exceptions import NewConnectionError, ReadTimeoutError

from gryvia_cli.core.health import DEAD_SECONDS, SLOW_SECONDS, Health, after_probe
from gryvia_cli.kube.access import CONNECT_TIMEOUT
from gryvia_cli.kube.errors import TimedOutError, translate_transport_error
from gryvia_cli.kube.health import HealthProbe
from gryvia_cli.tui.kubesource import KubeSource
from tests.unit.cli.test_kube_watch import RestResponse, access_with

READ_TIMEOUT = "Read timed out. (read timeout=5.0)"


def test_an_answer_after_the_slow_threshold_within_the_deadline_is_slow() -> None:
    assert SLOW_SECONDS < 10.4 < DEAD_SECONDS
    h = after_probe(Health(), answered=True, seconds=10.4, error="", now=11)
    assert (h.state, h.label(), h.failing) == ("slow", "slow 10.4s", False)


def test_a_timeout_before_the_deadline_is_slow_until_no_answer_came_for_the_deadline() -> None:
    h = after_probe(
        Health(), answered=False, seconds=5.0, error=READ_TIMEOUT, now=5, timed_out=True
    )
    assert (h.state, h.label(), h.failing) == ("slow", "slow >5.0s", False)
    h = after_probe(h, answered=False, seconds=5.0, error=READ_TIMEOUT, now=12, timed_out=True)
    assert (h.state, h.label()) == ("slow", "slow >5.0s")  # no answer for 12 s
    h = after_probe(h, answered=False, seconds=5.0, error=READ_TIMEOUT, now=19, timed_out=True)
    assert h.label() == f"reconnecting (attempt 1, {READ_TIMEOUT})" and h.failing
    assert h.failing_since == 0  # the stall began with the first probe that got no answer
    h = after_probe(h, answered=True, seconds=9.0, error="", now=30)
    assert (h.state, h.label(), h.failing_since) == ("slow", "slow 9.0s", None)


def test_a_failure_that_is_no_timeout_or_comes_past_the_deadline_reconnects_at_once() -> None:
    refused = after_probe(Health(), answered=False, seconds=0.01, error="refused", now=1)
    assert (refused.state, refused.attempt) == ("reconnecting", 1)
    late = after_probe(
        Health(), answered=False, seconds=DEAD_SECONDS, error="stalled", now=20, timed_out=True
    )
    assert (late.state, late.attempt) == ("reconnecting", 1)


def test_transport_timeouts_are_told_apart_from_other_lost_connections() -> None:
    timeout = translate_transport_error(ReadTimeoutError(None, "/version", READ_TIMEOUT), "s")
    refused = translate_transport_error(NewConnectionError(None, "Connection refused"), "s")
    assert isinstance(timeout, TimedOutError) and timeout.causes == (READ_TIMEOUT,)
    assert not isinstance(refused, TimedOutError)
    assert not isinstance(
        translate_transport_error(Urllib3ConnectionError("reset"), "s"), TimedOutError
    )


def test_the_consoles_requests_wait_the_deadline_for_a_connection_the_clis_do_not() -> None:
    version = RestResponse(200, b'{"gitVersion": "v1.31.0"}')
    cli, cli_client = access_with(version)
    cli.server_version()
    assert cli_client.sent[-1]["timeout"] == (CONNECT_TIMEOUT, 30)
    console, client = access_with(version)
    console.context = SimpleNamespace(name="ctx")  # type: ignore[assignment]
    source = KubeSource(console, None, "ml")
    console.server_version()
    connect, read = client.sent[-1]["timeout"]
    assert connect == DEAD_SECONDS and read == 30  # a TLS handshake is timed as a connection
    prober = source.prober(lambda health: None)
    assert isinstance(prober, HealthProbe) and prober.deadline == DEAD_SECONDS


class TimingOut:
    """A `/version` whose transport gives up after `seconds` of a fake clock."""

    def __init__(self, clock: list[float], seconds: float) -> None:
        self.clock, self.seconds = clock, seconds

    def server_version(self) -> dict[str, Any]:
        self.clock[0] += self.seconds
        raise translate_transport_error(ReadTimeoutError(None, "/version", READ_TIMEOUT), "s")


def test_the_prober_shows_a_transport_timeout_before_its_deadline_as_slow() -> None:
    clock = [100.0]
    seen: list[Health] = []
    probe = HealthProbe(TimingOut(clock, 5.0), seen.append, clock=lambda: clock[0])
    assert probe.deadline == DEAD_SECONDS
    assert probe.probe().label() == "slow >5.0s"
    assert probe.probe().label() == "slow >5.0s"  # no answer for 10 s
    assert probe.probe().state == "reconnecting"  # for 15 s
