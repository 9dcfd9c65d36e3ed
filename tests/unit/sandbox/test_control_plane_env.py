"""The environment kwokctl (and so kwok-controller, whose `exec` adds the container's values to
its own) runs with: the user's shell stays out of every pod."""

from __future__ import annotations

import os

import pytest

from gryvia_cli.sandbox.kwokctl import control_plane_env


def test_only_path_home_locale_and_kwok_settings_are_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        monkeypatch.delenv(name)
    shell = {
        "PATH": "/usr/bin",
        "HOME": "/root",
        "LANG": "C.UTF-8",
        "TZ": "UTC",
        "KWOK_LOGS_DIR": "/tmp/x",
        "PS1": "(.venv) $ ",
        "KUBECONFIG": "/root/.kube/config",
        "AWS_SECRET_ACCESS_KEY": "s3cr3t",
        "HTTPS_PROXY": "http://proxy:3128",
        "VIRTUAL_ENV": "/work/.venv",
    }
    for name, value in shell.items():
        monkeypatch.setenv(name, value)
    assert control_plane_env() == {
        "PATH": "/usr/bin",
        "HOME": "/root",
        "LANG": "C.UTF-8",
        "TZ": "UTC",
        "KWOK_LOGS_DIR": "/tmp/x",
    }
