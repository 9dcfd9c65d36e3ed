"""The pod runner's PVC mounts: links from the pod's root to the claim's folder."""

from __future__ import annotations

from pathlib import Path

from gryvia_cli.sandbox.podvolumes import claim_mounts, link_claims

POD = {
    "metadata": {"namespace": "ml", "name": "dev-0"},
    "spec": {
        "volumes": [
            {"name": "home", "persistentVolumeClaim": {"claimName": "dev-home"}},
            {"name": "scratch", "emptyDir": {}},
        ]
    },
}
CTR = {
    "name": "c",
    "volumeMounts": [
        {"name": "home", "mountPath": "/home/gryvia"},
        {"name": "home", "mountPath": "/cache", "subPath": "cache"},
        {"name": "scratch", "mountPath": "/scratch"},
    ],
}


def test_only_pvc_mounts_are_mapped() -> None:
    assert claim_mounts(POD, CTR) == [("/home/gryvia", "dev-home"), ("/cache", "dev-home/cache")]


def test_links_go_to_the_pv_host_path_and_outlive_the_pod(tmp_path: Path) -> None:
    pv = tmp_path / "pv"
    root = tmp_path / "pod1" / "root"
    link_claims(POD, CTR, root, tmp_path / "state", lambda ns, claim: str(pv))
    (root / "home" / "gryvia" / "notes.txt").write_text("kept")
    assert (pv / "notes.txt").read_text() == "kept"
    assert (root / "cache").resolve() == (pv / "cache").resolve()
    assert not (root / "scratch").exists()
    again = tmp_path / "pod2" / "root"
    link_claims(POD, CTR, again, tmp_path / "state", lambda ns, claim: str(pv))
    assert (again / "home" / "gryvia" / "notes.txt").read_text() == "kept"


def test_unbound_claims_get_a_sandbox_folder(tmp_path: Path) -> None:
    root = tmp_path / "pod" / "root"
    link_claims(POD, CTR, root, tmp_path / "state", lambda ns, claim: None)
    folder = tmp_path / "state" / "volumes" / "ml" / "dev-home"
    assert (root / "home" / "gryvia").resolve() == folder.resolve()
