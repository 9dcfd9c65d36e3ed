"""OIDC login, offline: PKCE, ID-token claims, the stored login, ExecCredential, the kubeconfig
user, the keyring store, the device-flow polling (httpx mock transport), Dex's configuration."""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import keyring
import pytest
import yaml
from keyring.backends import fail

from gryvia_cli.auth import client, store
from gryvia_cli.auth.kubeconfig import login_of, remove_login, write_login
from gryvia_cli.core.oidc import (
    OidcError,
    StoredLogin,
    exec_credential,
    jwt_claims,
    pkce_challenge,
    token_expiry,
)
from gryvia_cli.sandbox import oidc
from gryvia_cli.sandbox.kwokctl import kwokctl_config
from tests.support.keyringbackend import JsonFileKeyring

ISSUER = "https://127.0.0.1:5556/dex"


def _jwt(claims: dict[str, Any]) -> str:
    def part(obj: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(obj).encode()).rstrip(b"=").decode()

    return f"{part({'alg': 'RS256'})}.{part(claims)}.c2ln"


def test_pkce_challenge_matches_rfc7636_appendix_b() -> None:
    verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
    assert pkce_challenge(verifier) == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
    with pytest.raises(ValueError, match="43 to 128"):
        pkce_challenge("short")


def test_jwt_claims_and_expiry() -> None:
    token = _jwt({"email": "alice@example.com", "groups": ["vision"], "exp": 1_900_000_000})
    assert jwt_claims(token)["groups"] == ["vision"]
    assert token_expiry(token) == datetime.fromtimestamp(1_900_000_000, UTC)
    with pytest.raises(OidcError, match="not a JWT"):
        jwt_claims("opaque-token")
    with pytest.raises(OidcError, match="'exp'"):
        token_expiry(_jwt({"email": "a"}))


def test_stored_login_round_trip_and_refresh_margin() -> None:
    now = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)
    login = StoredLogin(ISSUER, "gryvia", "r1", "id1", now + timedelta(seconds=61))
    assert StoredLogin.from_json(login.to_json()) == login
    assert login.fresh(now)
    assert not login.fresh(now + timedelta(seconds=1))
    with pytest.raises(OidcError, match="unreadable"):
        StoredLogin.from_json("{}")


def test_exec_credential_has_rfc3339_expiry() -> None:
    cred = exec_credential("tok", datetime(2026, 12, 2, 12, 0, 5, 123, tzinfo=UTC))
    assert cred["apiVersion"] == "client.authentication.k8s.io/v1"
    assert cred["status"] == {"token": "tok", "expirationTimestamp": "2026-12-02T12:00:05Z"}


def test_write_login_adds_exec_user_and_context_and_keeps_the_rest(tmp_path: Path) -> None:
    target = tmp_path / "config"
    target.write_text(
        yaml.safe_dump(
            {
                "clusters": [{"name": "c1", "cluster": {"server": "https://x"}}],
                "users": [{"name": "admin", "user": {"token": "admin-token"}}],
                "contexts": [{"name": "c1", "context": {"cluster": "c1", "user": "admin"}}],
                "current-context": "c1",
                "preferences": {"colors": True},
            }
        )
    )
    notes = write_login(
        target,
        user="c1-oidc",
        context="c1-oidc",
        cluster="c1",
        namespace="team",
        issuer=ISSUER,
        client_id="gryvia",
        ca_file="/ca.crt",
        switch=True,
    )
    assert notes[0].startswith("added user 'c1-oidc'") and "switched" in notes[-1]
    data = yaml.safe_load(target.read_text())
    assert data["preferences"] == {"colors": True} and data["current-context"] == "c1-oidc"
    user = next(u for u in data["users"] if u["name"] == "c1-oidc")["user"]
    assert user["exec"]["args"][-8:] == [
        "auth", "token", "--issuer", ISSUER, "--client-id", "gryvia", "--ca-file", "/ca.crt",
    ]  # fmt: skip
    assert user["exec"]["interactiveMode"] == "Never" and "token" not in user
    context = {"cluster": "c1", "user": "c1-oidc", "namespace": "team"}
    assert {"name": "c1-oidc", "context": context} in data["contexts"]
    assert target.stat().st_mode & 0o777 == 0o600
    assert login_of(target, "c1-oidc") == (ISSUER, "gryvia", "/ca.crt")
    assert login_of(target, "admin") is None
    again = write_login(
        target, user="c1-oidc", context="c1-oidc", cluster="c1", namespace=None,
        issuer=ISSUER, client_id="gryvia", ca_file=None, switch=True,
    )  # fmt: skip
    assert again[0].startswith("replaced user") and len(again) == 2
    removed = remove_login(target, "c1-oidc")
    assert removed == [
        f"removed user 'c1-oidc' from {target}",
        f"removed context 'c1-oidc' from {target}",
        "switched current-context back to 'c1' (same cluster)",
    ]  # logout leaves the context the login was made from current, not none
    left = yaml.safe_load(target.read_text())
    assert [u["name"] for u in left["users"]] == ["admin"] and left["current-context"] == "c1"


def test_store_round_trip_and_refusal_without_backend(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    previous = keyring.get_keyring()
    monkeypatch.setenv("GRYVIA_TEST_KEYRING", str(tmp_path / "k.json"))
    login = StoredLogin(ISSUER, "gryvia", "r1", "id1", datetime(2030, 1, 1, tzinfo=UTC))
    try:
        keyring.set_keyring(JsonFileKeyring())
        store.save(login)
        assert store.load(ISSUER, "gryvia") == login
        assert store.delete(ISSUER, "gryvia") and not store.delete(ISSUER, "gryvia")
        with pytest.raises(OidcError, match="not logged in") as raised:
            store.load(ISSUER, "gryvia")
        assert raised.value.hint and "gryvia login" in raised.value.hint
        keyring.set_keyring(fail.Keyring())
        with pytest.raises(OidcError, match="no keyring backend") as refused:
            store.save(login)
        assert refused.value.hint and "PYTHON_KEYRING_BACKEND" in refused.value.hint
    finally:
        keyring.set_keyring(previous)


def _mock_issuer(monkeypatch: pytest.MonkeyPatch, replies: list[dict[str, Any]]) -> list[str]:
    """Make `Issuer.http` answer each POST with the next of `replies`; return the grant types
    it was sent."""
    sent: list[str] = []

    def handle(request: httpx.Request) -> httpx.Response:
        form = dict(httpx.QueryParams(request.content.decode()))
        sent.append(form.get("grant_type", form.get("scope", "")))
        reply = replies.pop(0)
        return httpx.Response(reply.pop("_status", 200), json=reply)

    monkeypatch.setattr(
        client.Issuer, "http", lambda self: httpx.Client(transport=httpx.MockTransport(handle))
    )
    return sent


def test_device_flow_polls_until_approved_and_slows_down(monkeypatch: pytest.MonkeyPatch) -> None:
    token = _jwt({"email": "alice@example.com", "exp": 1_900_000_000})
    sent = _mock_issuer(
        monkeypatch,
        [
            {"device_code": "d", "user_code": "ABCD-EFGH", "verification_uri": "https://v",
             "interval": 1, "expires_in": 60},
            {"_status": 400, "error": "authorization_pending"},
            {"_status": 400, "error": "slow_down"},
            {"id_token": token, "refresh_token": "r1"},
        ],
    )  # fmt: skip
    idp = client.Issuer(ISSUER, "gryvia")
    discovery = {"device_authorization_endpoint": "https://d", "token_endpoint": "https://t"}
    prompt = client.start_device(idp, discovery)
    assert prompt.user_code == "ABCD-EFGH" and prompt.verification_uri_complete == "https://v"
    waits: list[float] = []
    reply = client.poll_device(idp, discovery, prompt, sleep=waits.append, clock=lambda: 0.0)
    assert waits == [1.0, 1.0, 6.0]
    assert sent[1:] == [client.DEVICE_GRANT] * 3
    login = client.stored_login(idp, reply)
    assert login.refresh_token == "r1" and login.expiry.year == 2030


def test_device_flow_denied_and_refresh_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    _mock_issuer(
        monkeypatch,
        [
            {"_status": 400, "error": "access_denied", "error_description": "user said no"},
            {"_status": 400, "error": "invalid_grant", "error_description": "revoked"},
        ],
    )
    idp = client.Issuer(ISSUER, "gryvia")
    prompt = client.DevicePrompt("d", "C", "https://v", "https://v", 60, 1)
    with pytest.raises(OidcError, match="user said no"):
        client.poll_device(idp, {"token_endpoint": "https://t"}, prompt, sleep=lambda _: None)
    with pytest.raises(OidcError, match="revoked") as refused:
        client.refresh(idp, {"token_endpoint": "https://t"}, "r1")
    assert refused.value.hint and "gryvia login" in refused.value.hint
    with pytest.raises(OidcError, match="no refresh token"):
        client.stored_login(idp, {"id_token": _jwt({"exp": 1})})


def test_dex_config_binds_loopback_only_and_knows_the_demo_users(tmp_path: Path) -> None:
    config = oidc.dex_config(ISSUER, 5556, tmp_path / "c", tmp_path / "k")
    assert config["listen"] == "127.0.0.1:5556"
    (gryvia,) = config["clients"]
    assert gryvia["id"] == "gryvia" and gryvia["public"] is True
    assert gryvia["redirectURIs"] == [
        "/dex/device/callback",
        "http://127.0.0.1:8000/callback",
        "http://127.0.0.1:18000/callback",
    ]
    users = {u["email"]: u for u in config["passwords"]}
    assert users["alice@example.com"]["groups"] == ["vision"]
    assert users["bob@example.com"]["groups"] == ["nlp"]
    assert users["admin@example.com"]["groups"] == ["gryvia-admins"]
    for user in oidc.USERS:
        assert user.bcrypt_hash.startswith("$2a$10$") and len(user.bcrypt_hash) == 60


def test_apiserver_trusts_the_issuer_through_kwokctl(tmp_path: Path) -> None:
    auth = oidc.authentication_config(ISSUER, "PEM")
    jwt = auth["jwt"][0]
    assert jwt["issuer"] == {"url": ISSUER, "audiences": ["gryvia"], "certificateAuthority": "PEM"}
    assert jwt["claimMappings"]["username"] == {"claim": "email", "prefix": "oidc:"}
    assert jwt["claimMappings"]["groups"] == {"claim": "groups", "prefix": "oidc:"}
    text = kwokctl_config(tmp_path, {}, [oidc.apiserver_patch(tmp_path / "auth.yaml")])
    head = next(yaml.safe_load_all(text))
    routing = {"key": "enable-aggregator-routing", "value": "true"}
    assert head["componentsPatches"] == [
        {
            "name": "kube-apiserver",
            "extraArgs": [
                routing,
                {"key": "authentication-config", "value": str(tmp_path / "auth.yaml")},
            ],
        }
    ]
    plain = next(yaml.safe_load_all(kwokctl_config(tmp_path, {})))
    assert plain["componentsPatches"] == [{"name": "kube-apiserver", "extraArgs": [routing]}]


def test_auth_token_prints_the_stored_token_until_it_needs_refreshing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.unit.cli.helpers import run

    previous = keyring.get_keyring()
    monkeypatch.setenv("GRYVIA_TEST_KEYRING", str(tmp_path / "k.json"))
    args = ["auth", "token", "--issuer", ISSUER, "--client-id", "gryvia"]
    try:
        keyring.set_keyring(JsonFileKeyring())
        missing = run(args)
        assert missing.exit_code == 1 and "not logged in to" in missing.output
        expiry = datetime.now(UTC).replace(microsecond=0) + timedelta(minutes=30)
        store.save(StoredLogin(ISSUER, "gryvia", "r1", "id-token-1", expiry))
        printed = run(args)
        assert printed.exit_code == 0, printed.output
        cred = json.loads(printed.stdout)
        assert cred["status"]["token"] == "id-token-1"
        assert cred["status"]["expirationTimestamp"] == expiry.strftime("%Y-%m-%dT%H:%M:%SZ")
    finally:
        keyring.set_keyring(previous)
