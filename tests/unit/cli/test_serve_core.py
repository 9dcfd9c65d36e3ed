"""`gryvia serve create`'s body from flags, and its refusals naming the flag."""

from __future__ import annotations

import pytest

from gryvia_cli.core.inference import build_service


def test_body_from_flags() -> None:
    body = build_service(
        "web", "ns", image="none", port=8080, health_path="/", command=["python3", "-m", "x"]
    )
    spec = body["spec"]
    assert spec["replicas"] == 1 and spec["healthCheck"] == {"path": "/"}
    assert spec["command"] == ["python3", "-m", "x"]


def test_autoscaling_flags() -> None:
    body = build_service("w", "ns", image="i", port=80, min_replicas=1, max_replicas=3)
    assert body["spec"]["autoscaling"] == {"minReplicas": 1, "maxReplicas": 3}
    assert "replicas" not in body["spec"]


@pytest.mark.parametrize(
    ("kw", "words"),
    [
        ({"health_path": "/", "health_command": ["true"]}, "not both"),
        ({"min_replicas": 1}, "go together"),
        ({"min_replicas": 1, "max_replicas": 2, "replicas": 2}, "not both"),
        ({"health_path": "x"}, "start with /"),
        ({"min_replicas": 3, "max_replicas": 2}, "maxReplicas"),
    ],
)
def test_refusals(kw: dict[str, object], words: str) -> None:
    with pytest.raises(ValueError, match=words):
        build_service("w", "ns", image="i", port=80, **kw)  # type: ignore[arg-type]


def test_serve_create_refuses_a_name_the_api_server_would_before_sending_anything() -> None:
    from typer.testing import CliRunner

    from gryvia_cli.cli.session import Session
    from gryvia_cli.main import app
    from tests.unit.cli.fakes import FakeAccess

    fake = FakeAccess()
    state = Session(access_factory=lambda _s: fake)
    args = ["serve", "create", "Web_X", "--image", "python:3.12", "--port", "8080"]
    result = CliRunner().invoke(app, args, obj=state)
    assert result.exit_code == 2 and "NAME 'Web_X' is not a valid inference service name" in (
        result.output
    )
    assert not fake.objects
