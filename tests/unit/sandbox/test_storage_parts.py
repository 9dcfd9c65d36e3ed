"""The sandbox's storage parts (`gryvia_cli/sandbox/storage.py`, `s3.py`): the provisioner's
class and configuration are upstream's with the helper scripts as files, and the S3 server
stays on loopback with every port its own; clients are configured by environment alone."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from gryvia_cli.sandbox import s3, storage


def test_the_class_is_waitforfirstconsumer_and_not_the_default() -> None:
    [ns, account, klass] = storage.cluster_objects()
    assert ns["metadata"]["name"] == account["metadata"]["namespace"] == storage.NAMESPACE
    assert klass["provisioner"] == "rancher.io/local-path"
    assert klass["volumeBindingMode"] == "WaitForFirstConsumer"
    assert klass["reclaimPolicy"] == "Delete"
    assert "annotations" not in klass["metadata"]  # not storageclass.kubernetes.io/is-default-class


def test_the_helper_runs_the_setup_script_as_a_file(tmp_path: Path) -> None:
    conf = storage.provisioner_config(tmp_path / "v", tmp_path / "setup", tmp_path / "teardown")
    assert conf["sharedFileSystemPath"] == str(tmp_path / "v")
    assert "nodePathMap" not in conf  # upstream refuses both at once
    assert conf["setupCommand"] == str(tmp_path / "setup")
    assert conf["teardownCommand"] == str(tmp_path / "teardown")
    assert "priorityClassName" not in storage.helper_pod()["spec"]


@pytest.mark.parametrize(("script", "exists"), [(storage.SETUP_SCRIPT, True), ("", False)])
def test_the_scripts_create_and_remove_the_folder(
    tmp_path: Path, script: str, exists: bool
) -> None:
    folder = tmp_path / "pvc-1_ns_claim"
    for text in (storage.SETUP_SCRIPT, script or storage.TEARDOWN_SCRIPT):
        path = tmp_path / "script"
        path.write_text(text)
        path.chmod(0o755)
        args = [str(path), "-p", str(folder), "-s", "1024", "-m", "Filesystem", "-a", "create"]
        subprocess.run(args, env={"VOL_DIR": str(folder)}, check=True)
    assert folder.is_dir() is exists


def test_the_s3_server_stays_on_loopback_with_its_own_ports(tmp_path: Path) -> None:
    ports = {flag: 40000 + i for i, flag in enumerate(s3.MINI_PORTS)}
    argv = s3.mini_argv("/bin/weed", tmp_path, ports)
    assert argv[:2] == ["/bin/weed", "mini"]
    assert "-ip.bind=127.0.0.1" in argv
    assert "-master.telemetry=false" in argv
    assert {"-webdav=false", "-admin.ui=false", "-s3.port.iceberg=0", "-s3.port.lance=0"} <= set(
        argv
    )
    assert f"-s3.port={ports['s3.port']}" in argv
    assert len({a for a in argv if a.split("=")[0].lstrip("-") in s3.MINI_PORTS}) == len(ports)
    assert all(str(tmp_path) in a for a in argv if "localSocket" in a)


def test_clients_are_configured_by_environment_alone() -> None:
    creds = s3.S3Credentials("http://127.0.0.1:9", "AK", "SK")
    assert s3.client_env(creds)["AWS_ENDPOINT_URL"] == "http://127.0.0.1:9"
    env = s3.rclone_env(creds, "data-src")
    assert env["RCLONE_CONFIG_DATA_SRC_TYPE"] == "s3"
    assert env["RCLONE_CONFIG_DATA_SRC_ENDPOINT"] == "http://127.0.0.1:9"
    assert env["RCLONE_CONFIG_DATA_SRC_ACCESS_KEY_ID"] == "AK"
    assert env["RCLONE_CONFIG_DATA_SRC_SECRET_ACCESS_KEY"] == "SK"


def test_missing_binaries_name_the_make_targets(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GRYVIA_K8S_BIN_DIR", str(tmp_path))
    assert "make storage-bin" in storage.missing()
    assert "make s3-bin" in s3.missing()


def test_with_a_pod_network_it_listens_on_the_gateway_and_loopback(tmp_path: Path) -> None:
    ports = {flag: 40000 + i for i, flag in enumerate(s3.MINI_PORTS)}
    argv = s3.mini_argv("/bin/weed", tmp_path, ports, "100.64.0.1")
    # `-ip` not loopback and `-ip.bind` empty: weed mini adds its loopback listeners.
    assert "-ip=100.64.0.1" in argv
    assert "-ip.bind=" in argv
