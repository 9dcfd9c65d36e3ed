"""Waiting out a lost API connection: which errors retry, back-off, messages, the deadline."""

from __future__ import annotations

import pytest
from urllib3.exceptions import MaxRetryError, NewConnectionError, ProtocolError, ReadTimeoutError

from gryvia_cli.errors import (
    EXIT_TIMEOUT,
    ClusterUnreachableError,
    ForbiddenError,
    WaitTimeoutError,
)
from gryvia_cli.kube import resources as r
from gryvia_cli.kube.errors import (
    ConnectionLostError,
    ServerBusyError,
    is_transient,
    translate_api_exception,
    translate_transport_error,
)
from gryvia_cli.kube.retry import MAX_DELAY, RETRY_BACKOFF, Link

SERVER = "https://127.0.0.1:6443"


def lost(text: str = "Read timed out. (read timeout=10.0)") -> ConnectionLostError:
    return ConnectionLostError("cannot reach the API server", causes=(text,))


class Clock:
    """A fake monotonic clock that sleeping advances."""

    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


def test_no_answer_and_busy_answers_retry_refusals_do_not() -> None:
    timeout = ReadTimeoutError(None, "/", "Read timed out. (read timeout=10.0)")  # type: ignore[arg-type]
    refused = MaxRetryError(None, "/", NewConnectionError(None, "[Errno 111] Connection refused"))  # type: ignore[arg-type]
    cut = ProtocolError("Connection broken: IncompleteRead(0 bytes read)")
    for exc in (timeout, refused, cut):
        err = translate_transport_error(exc, SERVER)
        assert isinstance(err, ClusterUnreachableError) and is_transient(err), exc
    assert is_transient(translate_transport_error(Exception("EOF occurred in violation"), SERVER))
    tls = translate_transport_error(Exception("[SSL: CERTIFICATE_VERIFY_FAILED] bad"), SERVER)
    assert "TLS verification" in tls.message and not is_transient(tls)
    for code in (429, 500, 502, 503, 504):
        busy = translate_api_exception(code, b"", resource=r.AIJOB, name="a", namespace="ml")
        assert isinstance(busy, ServerBusyError) and is_transient(busy), code
    for code in (400, 401, 403, 404, 409, 410, 422):
        answer = translate_api_exception(code, b"", resource=r.AIJOB, name="a", namespace="ml")
        assert not is_transient(answer), code
    assert not is_transient(ValueError("x")) and not is_transient(ProtocolError("raw"))


def test_back_off_doubles_to_a_cap_of_a_few_seconds_with_jitter() -> None:
    delays = [RETRY_BACKOFF.delay(n, rand=lambda: 0.5) for n in range(8)]
    assert delays == [0.5, 1.0, 2.0, 4.0, 4.0, 4.0, 4.0, 4.0] and MAX_DELAY == 4.0
    low, high = RETRY_BACKOFF.delay(9, rand=lambda: 0.0), RETRY_BACKOFF.delay(9, rand=lambda: 1.0)
    assert 2.5 <= low < high <= 5.0


def test_call_retries_until_it_works_saying_each_attempt_once() -> None:
    clock, said = Clock(), []
    link = Link(said.append, clock=clock, sleep=clock.sleep)
    outcomes: list[Exception | str] = [lost(), lost("Connection refused"), "ok"]

    def request() -> str:
        outcome = outcomes.pop(0)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    assert link.call(request, deadline=100) == "ok"
    assert said == [
        "reconnecting to the API server (attempt 1, last error: Read timed out. "
        "(read timeout=10.0))",
        "reconnecting to the API server (attempt 2, last error: Connection refused)",
        "reconnected to the API server after 2 failed attempt(s)",
    ]
    assert len(clock.sleeps) == 2 and all(0 < s <= 5 for s in clock.sleeps)
    assert not link.lost
    link.call(lambda: "again")
    assert len(said) == 3, "a success without an outage says nothing"


def test_answers_are_raised_at_once() -> None:
    link = Link(lambda _: None, sleep=lambda _: pytest.fail("must not sleep"))
    calls = []

    def forbidden() -> None:
        calls.append(1)
        raise ForbiddenError("forbidden: cannot get pods")

    with pytest.raises(ForbiddenError):
        link.call(forbidden, deadline=None)
    assert calls == [1]


def test_only_the_deadline_ends_an_outage_with_exit_124() -> None:
    clock, said = Clock(), []
    link = Link(said.append, clock=clock, sleep=clock.sleep)

    def never() -> None:
        raise lost()

    with pytest.raises(WaitTimeoutError) as caught:
        link.call(never, deadline=30.0, what="job a", hint="gryvia status a --watch")
    assert caught.value.exit_code == EXIT_TIMEOUT == 124
    assert caught.value.message.startswith(
        "job a did not end before the wait timeout: the API server has not answered for "
    )
    assert "(last error: Read timed out. (read timeout=10.0))" in caught.value.message
    assert caught.value.hint == "gryvia status a --watch"
    assert clock.now == pytest.approx(30.0), "it waits exactly until the deadline"
    assert len(said) >= 8, "it kept trying (every few seconds) until then"


def test_no_deadline_retries_for_as_long_as_it_takes() -> None:
    clock = Clock()
    link = Link(lambda _: None, clock=clock, sleep=clock.sleep)
    failures = [lost()] * 200

    def request() -> str:
        if failures:
            raise failures.pop()
        return "back"

    assert link.call(request) == "back"
    assert clock.now > 600 and max(clock.sleeps) <= 5.0
