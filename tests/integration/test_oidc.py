"""`gryvia login` against the session sandbox's real Dex (`sandbox up --oidc`): the device flow
approved by driving Dex's own pages with httpx, then whoami, kubectl --user, refresh, logout."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.conftest import SandboxHandle
from tests.support.cli import run_gryvia
from tests.support.keyringbackend import BACKEND

pytestmark = [pytest.mark.integration, pytest.mark.sandbox]

REPO = Path(__file__).resolve().parents[2]


def _password_login(http: httpx.Client, form: httpx.Response, email: str, password: str) -> str:
    """Fill Dex's local password form (the page `form`) and return the final page's text (the
    approval screen is skipped)."""
    assert form.status_code == 200, form.text
    action = re.search(r'<form method="post" action="([^"]+)"', form.text)
    assert action, f"no login form at {form.url}: {form.text[:300]}"
    post_url = form.url.join(action.group(1).replace("&amp;", "&"))
    done = http.post(post_url, data={"login": email, "password": password})
    assert done.status_code == 200, done.text
    return done.text


def _login(
    env: dict[str, str], issuer: str, ca: str, email: str, password: str, flow: str = "device"
) -> str:
    """Run `gryvia login --flow FLOW` as `email`, doing in Dex's pages with httpx what the user
    does in a browser (enter the device code, or open the PKCE URL; then the password form);
    return what login printed on stderr."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "gryvia_cli", "login", "--issuer", issuer, "--ca-file", ca,
         "--no-browser", "--flow", flow],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    assert proc.stderr is not None
    seen: list[str] = []
    deadline = time.monotonic() + 60
    wanted = r"confirm the code ([A-Z0-9-]+)" if flow == "device" else r"^  (https://\S+)"
    found = None
    while found is None and time.monotonic() < deadline:
        line = proc.stderr.readline()
        if not line:
            break
        seen.append(line)
        found = re.search(wanted, line)
    assert found, "".join(seen) + proc.communicate(timeout=10)[1]
    with httpx.Client(verify=ca, follow_redirects=True, timeout=15) as http:
        if flow == "device":
            form = http.post(f"{issuer}/device/auth/verify_code", data={"user_code": found[1]})
            page = _password_login(http, form, email, password)
            assert "Login Successful" in page, page[:400]
        else:  # the last redirect reaches login's loopback server
            page = _password_login(http, http.get(found[1]), email, password)
            assert "Logged in to Gryvia" in page, page[:400]
    _out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, "".join(seen) + err
    return "".join(seen) + err


def _login_env(sandbox: SandboxHandle, tmp_path: Path) -> tuple[dict[str, str], Path, Path]:
    """Environment for a user with their own HOME, `~/.kube/config` (a copy of the sandbox's)
    and the test keyring backend; returns it with the kubeconfig and keyring file."""
    home = tmp_path / "home"
    kube = home / ".kube" / "config"
    kube.parent.mkdir(parents=True)
    shutil.copy(sandbox.kubeconfig, kube)
    keyring_file = tmp_path / "keyring.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GRYVIA_", "KUBECONFIG"))}
    env.update(
        HOME=str(home),
        KUBECONFIG=str(kube),
        GRYVIA_CONFIG_HOME=str(tmp_path / "gryvia-config"),
        PYTHON_KEYRING_BACKEND=BACKEND,
        GRYVIA_TEST_KEYRING=str(keyring_file),
        PYTHONPATH=os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")]),
        NO_COLOR="1",
        PYTHONUNBUFFERED="1",
    )
    return env, kube, keyring_file


def test_login_as_alice_whoami_kubectl_refresh_logout(
    sandbox: SandboxHandle, tmp_path: Path
) -> None:
    from gryvia_cli.sandbox import oidc

    issuer = oidc.load(sandbox.name)
    assert issuer is not None, "the session sandbox runs with --oidc"
    env, kube, keyring_file = _login_env(sandbox, tmp_path)
    home = tmp_path / "home"
    ca = str(issuer.ca_file)

    said = _login(env, issuer.issuer, ca, "alice@example.com", "alice-password")
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
    env, kube, keyring_file = _login_env(sandbox, tmp_path)
    said = _login(
        env, issuer.issuer, str(issuer.ca_file), "bob@example.com", "bob-password", flow="pkce"
    )
    assert "logged in as bob@example.com (groups: nlp)" in said
    whoami = run_gryvia("auth", "whoami", "-o", "json", env=env)
    assert whoami.returncode == 0, whoami.stderr
    assert json.loads(whoami.stdout)["username"] == "oidc:bob@example.com"
    stored = json.loads(keyring_file.read_text())["gryvia-oidc"][f"gryvia@{issuer.issuer}"]
    assert json.loads(stored)["refreshToken"] not in kube.read_text()
