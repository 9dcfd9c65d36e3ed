"""The real node's configuration (`nodeconf`) and its client certificate (`certs`)."""

from __future__ import annotations

import datetime as dt
import hashlib
import io
import json
import tarfile
import tomllib
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from gryvia_cli.sandbox import certs, kwokctl, nodeconf
from gryvia_cli.sandbox.nodeconf import NodePaths

NODE = NodePaths(Path("/var/lib/gryvia/real-node/abc123"))


def _read(archive: tarfile.TarFile, member: tarfile.TarInfo) -> bytes:
    handle = archive.extractfile(member)
    assert handle is not None
    return handle.read()


def test_the_pause_image_archive_is_a_consistent_oci_layout() -> None:
    binary = b"\x7fELF-pretend-static-pause"
    with tarfile.open(fileobj=io.BytesIO(nodeconf.pause_image_archive(binary))) as archive:
        files = {m.name: _read(archive, m) for m in archive.getmembers()}
    for path, data in files.items():  # every blob is stored under its own digest
        if path.startswith("blobs/sha256/"):
            assert hashlib.sha256(data).hexdigest() == path.rsplit("/", 1)[1]
    [entry] = json.loads(files["index.json"])["manifests"]
    assert entry["annotations"]["io.containerd.image.name"] == nodeconf.PAUSE_IMAGE
    manifest = json.loads(files[f"blobs/sha256/{entry['digest'][7:]}"])
    config = json.loads(files[f"blobs/sha256/{manifest['config']['digest'][7:]}"])
    assert config["config"]["Entrypoint"] == ["/pause"]
    [layer_ref] = manifest["layers"]
    assert config["rootfs"]["diff_ids"] == [layer_ref["digest"]]
    with tarfile.open(
        fileobj=io.BytesIO(files[f"blobs/sha256/{layer_ref['digest'][7:]}"])
    ) as layer:
        [pause] = layer.getmembers()
        assert (pause.name, pause.mode) == ("pause", 0o755)
        assert _read(layer, pause) == binary


def test_containerd_config_is_toml_with_what_this_machine_needs() -> None:
    config = tomllib.loads(
        nodeconf.containerd_config(NODE, Path("/usr/sbin/runc"), Path("/usr/lib/cni"))
    )
    assert config["version"] == 3
    assert config["grpc"]["address"] == str(NODE.socket)
    runtime = config["plugins"]["io.containerd.cri.v1.runtime"]
    assert runtime["restrict_oom_score_adj"] is True  # no CAP_SYS_RESOURCE here
    runc = runtime["containerd"]["runtimes"]["runc"]["options"]
    assert runc["BinaryName"] == "/usr/sbin/runc" and runc["SystemdCgroup"] is False
    images = config["plugins"]["io.containerd.cri.v1.images"]
    assert images["pinned_images"]["sandbox"] == nodeconf.PAUSE_IMAGE
    assert images["registry"]["config_path"] == str(NODE.etc / "certs.d")


def test_registry_mirror_and_cni_network() -> None:
    hosts = tomllib.loads(nodeconf.hosts_toml("ghcr.io", "127.0.0.1:5000"))
    assert hosts == {
        "server": "https://ghcr.io",
        "host": {"http://127.0.0.1:5000": {"capabilities": ["pull", "resolve"]}},
    }
    cni = nodeconf.cni_config("gkabc123", "100.90.0.0/16", "100.90.0.1", NODE.var / "ipam")
    bridge, loopback = cni["plugins"]
    assert (bridge["type"], bridge["bridge"], bridge["ipMasq"]) == ("bridge", "gkabc123", False)
    assert bridge["ipam"]["ranges"] == [[{"subnet": "100.90.0.0/16", "gateway": "100.90.0.1"}]]
    assert loopback == {"type": "loopback"}


def test_kubelet_config_runs_on_cgroup_v1_and_keeps_other_pods_off() -> None:
    config = nodeconf.kubelet_config(NODE, Path("/pki/ca.crt"), 41000, 41001)
    assert config["failCgroupV1"] is False and config["cgroupDriver"] == "cgroupfs"
    assert config["registerWithTaints"] == [
        {"key": nodeconf.SYSTEM_LABEL, "value": "true", "effect": "NoSchedule"}
    ]
    assert (config["port"], config["healthzPort"], config["readOnlyPort"]) == (41000, 41001, 0)
    assert config["authentication"]["anonymous"] == {"enabled": False}


def test_the_scheduler_weighs_node_affinity_more_and_kwokctl_passes_it() -> None:
    profile = nodeconf.scheduler_config()["profiles"][0]
    assert profile["plugins"]["score"]["enabled"] == [{"name": "NodeAffinity", "weight": 10}]
    extra = {"kubeSchedulerConfig": "/tmp/s.yaml", "kubeApiserverCertSANs": ["10.0.0.1"]}
    text = kwokctl.kwokctl_config(Path("/bin"), {}, extra=extra)
    assert "kubeSchedulerConfig: /tmp/s.yaml" in text
    assert "- 10.0.0.1" in text


def test_the_node_client_certificate_names_the_node_and_is_signed_by_the_ca() -> None:
    now = dt.datetime(2026, 12, 6, tzinfo=dt.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "sandbox-ca")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(ca_key.public_key())
        .serial_number(1)
        .not_valid_before(now - dt.timedelta(days=1))
        .not_valid_after(now + dt.timedelta(days=30))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    ca_pem = ca.public_bytes(serialization.Encoding.PEM)
    key_pem = ca_key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    cert_pem, _ = certs.client_certificate(
        ca_pem, key_pem, "system:node:system-0", "system:nodes", now, 30
    )
    cert = x509.load_pem_x509_certificate(cert_pem)
    assert cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value == (
        "system:node:system-0"
    )
    assert cert.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)[0].value == (
        "system:nodes"
    )
    usage = cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert list(usage) == [ExtendedKeyUsageOID.CLIENT_AUTH]
    cert.verify_directly_issued_by(ca)
