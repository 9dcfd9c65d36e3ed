"""Logging in to the sandbox's Dex as a test user: `gryvia login` driven through the device
or PKCE flow, Dex's own pages filled with httpx, in an environment of the user's own (HOME,
`~/.kube/config`, the test keyring backend)."""

from __future__ import annotations

import os
import re
import shutil
import ssl
import subprocess
import sys
import time
from pathlib import Path

import httpx

from tests.conftest import SandboxHandle
from tests.support.keyringbackend import BACKEND

REPO = Path(__file__).resolve().parents[2]


def password_login(http: httpx.Client, form: httpx.Response, email: str, password: str) -> str:
    """Fill Dex's local password form (the page `form`) and return the final page's text (the
    approval screen is skipped)."""
    assert form.status_code == 200, form.text
    action = re.search(r'<form method="post" action="([^"]+)"', form.text)
    assert action, f"no login form at {form.url}: {form.text[:300]}"
    post_url = form.url.join(action.group(1).replace("&amp;", "&"))
    done = http.post(post_url, data={"login": email, "password": password})
    assert done.status_code == 200, done.text
    return done.text


def login(
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
    with httpx.Client(
        verify=ssl.create_default_context(cafile=ca), follow_redirects=True, timeout=15
    ) as http:
        if flow == "device":
            form = http.post(f"{issuer}/device/auth/verify_code", data={"user_code": found[1]})
            page = password_login(http, form, email, password)
            assert "Login Successful" in page, page[:400]
        else:  # the last redirect reaches login's loopback server
            page = password_login(http, http.get(found[1]), email, password)
            assert "Logged in to Gryvia" in page, page[:400]
    _out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, "".join(seen) + err
    return "".join(seen) + err


def login_env(sandbox: SandboxHandle, tmp_path: Path) -> tuple[dict[str, str], Path, Path]:
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
