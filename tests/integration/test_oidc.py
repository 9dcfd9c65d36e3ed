"""`gryvia login` against the session sandbox's real Dex (`sandbox up --oidc`): the device flow
approved by driving Dex's own pages with httpx, then whoami, kubectl --user, refresh, logout."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.conftest import SandboxHandle
from tests.support.cli import run_gryvia
from tests.support.oidclogin import login as oidc_login
from tests.support.oidclogin import login_env

pytestmark = [pytest.mark.integration, pytest.mark.sandbox]

REPO = Path(__file__).resolve().parents[2]


def test_login_as_alice_whoami_kubectl_refresh_logout(
    sandbox: SandboxHandle, tmp_path: Path
) -> None:
    from gryvia_cli.sandbox import oidc

    issuer = oidc.load(sandbox.name)
    assert issuer is not None, "the session sandbox runs with --oidc"
    env, kube, keyring_file = login_env(sandbox, tmp_path)
    home = tmp_path / "home"
    ca = str(issuer.ca_file)

    said = oidc_login(env, issuer.issuer, ca, "alice@example.com", "alice-password")
    assert "logged in as alice@example.com (groups: vision)" in said

    user = f"gryvia-{sandbox.name}-oidc"  # CLUSTER-oidc
    whoami = run_gryvia("auth", "whoami", "-o", "json", env=env)
    assert whoami.returncode == 0, whoami.stderr
    seen = json.loads(whoami.stdout)
    assert seen["username"] == "oidc:alice@example.com"
    assert "oidc:vision" in seen["groups"] and "system:authenticated" in seen["groups"]
    text = run_gryvia("auth", "whoami", env=env)
    assert "Username: oidc:alice@example.com" in text.stdout, text.stderr

    # kubectl, with the admin context's cluster and the login's user, runs the exec plugin
    kubectl = subprocess.run(
        [
            str(sandbox.kubectl),
            "--context",
            f"gryvia-{sandbox.name}",
            "--user",
            user,
            "auth",
            "whoami",
            "-o",
            "json",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert kubectl.returncode == 0, kubectl.stderr
    assert json.loads(kubectl.stdout)["status"]["userInfo"]["username"] == "oidc:alice@example.com"

    # The refresh token is in the test keyring, and in no file under ~/.kube
    stored = json.loads(keyring_file.read_text())["gryvia-oidc"][f"gryvia@{issuer.issuer}"]
    login = json.loads(stored)
    assert login["refreshToken"] and login["idToken"]
    for path in (home / ".kube").rglob("*"):
        if path.is_file():
            content = path.read_text(errors="replace")
            assert login["refreshToken"] not in content and login["idToken"] not in content, path

    # An ID token about to expire is refreshed through the refresh token (Dex rotates it)
    login["expiry"] = "2000-01-01T00:00:00+00:00"
    keyring_file.write_text(
        json.dumps({"gryvia-oidc": {f"gryvia@{issuer.issuer}": json.dumps(login)}})
    )
    token = run_gryvia(
        "auth",
        "token",
        "--issuer",
        issuer.issuer,
        "--client-id",
        "gryvia",
        "--ca-file",
        ca,
        env=env,
    )
    assert token.returncode == 0, token.stderr
    cred = json.loads(token.stdout)
    assert cred["kind"] == "ExecCredential" and cred["status"]["expirationTimestamp"] > "2001"
    assert cred["status"]["token"] != login["idToken"]
    renewed = json.loads(
        json.loads(keyring_file.read_text())["gryvia-oidc"][f"gryvia@{issuer.issuer}"]
    )
    assert renewed["idToken"] == cred["status"]["token"]
    assert renewed["refreshToken"] != login["refreshToken"]

    # logout forgets the keyring entry and the kubeconfig user; the plugin then says so
    out = run_gryvia("logout", env=env)
    assert out.returncode == 0, out.stderr
    assert json.loads(keyring_file.read_text())["gryvia-oidc"] == {}
    assert f"name: {user}\n" not in kube.read_text()
    again = run_gryvia(
        "auth",
        "token",
        "--issuer",
        issuer.issuer,
        "--client-id",
        "gryvia",
        "--ca-file",
        ca,
        env=env,
    )
    assert again.returncode == 1 and "not logged in" in again.stderr


def test_pkce_login_on_a_loopback_redirect(sandbox: SandboxHandle, tmp_path: Path) -> None:
    from gryvia_cli.sandbox import oidc

    issuer = oidc.load(sandbox.name)
    assert issuer is not None
    env, kube, keyring_file = login_env(sandbox, tmp_path)
    said = oidc_login(
        env, issuer.issuer, str(issuer.ca_file), "bob@example.com", "bob-password", flow="pkce"
    )
    assert "logged in as bob@example.com (groups: nlp)" in said
    whoami = run_gryvia("auth", "whoami", "-o", "json", env=env)
    assert whoami.returncode == 0, whoami.stderr
    assert json.loads(whoami.stdout)["username"] == "oidc:bob@example.com"
    stored = json.loads(keyring_file.read_text())["gryvia-oidc"][f"gryvia@{issuer.issuer}"]
    assert json.loads(stored)["refreshToken"] not in kube.read_text()
