"""Commands that change things, and validate/config, through CliRunner with a fake access."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.builders import job_yaml
from tests.unit.cli.fakes import FakeAccess
from tests.unit.cli.helpers import h100, make_job, make_pod, run


def write(
    tmp_path: Path, name: str = "a", gpus: int = 4, gpu_type: str = "H100", extra: str = ""
) -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(job_yaml(name, gpus=gpus, gpu_type=gpu_type) + extra)
    return path


def test_validate_reports_file_document_and_field(tmp_path: Path) -> None:
    good = write(tmp_path, "good")
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        job_yaml("ok", gpus=1, gpu_type="H100")
        + "---\n"
        + job_yaml("Bad", gpus=-2, gpu_type="h100")
    )
    ok = run(["validate", str(good)])
    assert ok.exit_code == 0 and "1 object(s) valid" in ok.output
    result = run(["validate", str(good), str(bad)])
    assert result.exit_code == 1
    assert (
        f"{bad} (document 2, GryviaAIJob/Bad, line 18): spec.gpus must not be negative, got -2"
        in result.output
    )  # the field's own line (the document starts on line 12)
    assert f"{bad} (document 2, GryviaAIJob/Bad, line 15): metadata.name" in result.output
    data = json.loads(run(["validate", str(bad), "-o", "json"]).output)
    assert (data["apiVersion"], data["kind"]) == ("cli.gryvia.io/v1", "ValidationReport")
    assert [d["valid"] for d in data["items"]] == [True, False]


def test_validate_warnings_strict_stdin_and_unreadable(tmp_path: Path) -> None:
    lower = write(tmp_path, "lower", gpu_type="h100")
    assert run(["validate", str(lower)]).exit_code == 0
    assert run(["validate", str(lower), "--strict"]).exit_code == 1
    from typer.testing import CliRunner

    from gryvia_cli.main import app

    piped = CliRunner().invoke(app, ["validate", "-"], input=job_yaml("p", gpus=1, gpu_type="L40"))
    assert piped.exit_code == 0
    missing = run(["validate", str(tmp_path / "nope.yaml")])
    assert missing.exit_code == 1 and "cannot read" in missing.output
    broken = tmp_path / "broken.yaml"
    broken.write_text("spec: [1,\n")
    assert "is not valid YAML" in run(["validate", str(broken)]).output


def test_examples_validate() -> None:
    root = Path(__file__).resolve().parents[3] / "examples"
    result = run(["validate", *map(str, sorted(root.glob("*.yaml")))])
    assert result.exit_code == 0, result.output


def test_submit_dry_run_needs_no_cluster(tmp_path: Path) -> None:
    path = write(tmp_path, "a")
    result = run(["submit", "-f", str(path), "--dry-run"])
    assert result.exit_code == 0
    docs = [d for d in yaml.safe_load_all(result.stdout) if d]
    assert docs[0]["metadata"]["name"] == "a"
    assert result.stdout.startswith("---\n")


def test_submit_refuses_invalid_input_and_creates_nothing(tmp_path: Path) -> None:
    fake = FakeAccess(h100("h0"))
    bad = write(tmp_path, "bad", gpus=-1)
    result = run(["submit", "-f", str(bad)], fake)
    assert result.exit_code == 1 and "nothing was submitted" in result.output
    other = tmp_path / "cm.yaml"
    other.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
    assert "submit creates GryviaAIJobs" in run(["submit", "-f", str(other)], fake).output
    assert not [o for o in fake.objects if o["kind"] == "GryviaAIJob"]
    assert run(["submit"], fake).exit_code == 2
    assert run(["submit", "-f", str(bad), "--image", "x"], fake).exit_code == 2


def test_submit_prints_a_plan_and_creates(tmp_path: Path) -> None:
    fake = FakeAccess(h100("h0"), h100("h1"), make_pod("hog").gpus(6).on("h0").obj())
    path = write(tmp_path, "a", extra="---\n" + job_yaml("b", gpus=8, gpu_type="B200"))
    result = run(["submit", "-f", str(path), "--force"], fake)  # b never fits: fail fast
    assert result.exit_code == 0
    assert result.stdout.splitlines() == ["gryviaaijob.gryvia.io/a", "gryviaaijob.gryvia.io/b"]
    assert "plan for a: 4 x H100" in result.output
    assert "nodes that could take a pod now: h1 (8 free)" in result.output
    assert 'no node has GPU type "B200"' in result.output
    created = [o for o in fake.objects if o["kind"] == "GryviaAIJob"]
    assert [(o["metadata"]["name"], o["metadata"]["namespace"]) for o in created] == [
        ("a", "ml"),
        ("b", "ml"),
    ]
    again = run(["submit", "-f", str(write(tmp_path, "c")), "-n", "team", "-o", "json"], fake)
    assert json.loads(again.stdout)["metadata"]["namespace"] == "team"


def test_submit_namespace_conflict(tmp_path: Path) -> None:
    path = write(tmp_path, "a")
    text = path.read_text().replace("  name: a\n", "  name: a\n  namespace: prod\n")
    path.write_text(text)
    result = run(["submit", "-f", str(path), "-n", "dev"], FakeAccess())
    assert result.exit_code == 2 and "is for namespace prod" in result.output


def test_submit_wait_exit_codes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from gryvia_cli.views import streams

    monkeypatch.setattr(streams, "POLL_SECONDS", 0.01)
    fake = FakeAccess(h100("h0"))
    original = fake.create

    def create_done(res, body, namespace, **kw):  # type: ignore[no-untyped-def]
        obj = original(res, body, namespace, **kw)
        stored = fake.objects[-1]
        stored["status"] = {
            "phase": "Failed" if "fail" in stored["metadata"]["name"] else "Succeeded",
            "message": "boom",
        }
        return obj

    monkeypatch.setattr(fake, "create", create_done)
    ok = run(["submit", "-f", str(write(tmp_path, "good")), "--wait"], fake)
    assert ok.exit_code == 0 and "job good Succeeded" in ok.output
    bad = run(["submit", "-f", str(write(tmp_path, "fail")), "--wait"], fake)
    assert bad.exit_code == 1 and "job fail Failed: boom" in bad.output


def test_submit_logs_streams_the_first_pod(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from gryvia_cli.views import streams

    monkeypatch.setattr(streams, "POLL_SECONDS", 0.01)
    monkeypatch.setattr(streams, "DRAIN_SECONDS", 0.01)
    fake = FakeAccess(h100("h0"))
    done = {
        "phase": "Succeeded",
        "containerStatuses": [{"name": "c", "state": {"terminated": {"reason": "Completed"}}}],
    }
    for index in (1, 0):
        pod = make_pod(f"a-{index}-x").job("a").on("h0").obj()
        pod["metadata"]["annotations"] = {"batch.kubernetes.io/job-completion-index": str(index)}
        pod["spec"]["restartPolicy"] = "Never"
        pod["status"] = done
        fake.add(pod)
        fake.logs[f"a-{index}-x"] = [f"rank {index} of 2"]
    result = run(["submit", "-f", str(write(tmp_path, "a")), "--logs"], fake)
    assert result.exit_code == 0
    assert "rank 0 of 2" in result.stdout and "rank 1 of 2" not in result.stdout
    assert "Streaming logs from pod: a-0-x" in result.output


def test_sbatch_submission_uses_the_converter(tmp_path: Path) -> None:
    script = tmp_path / "train.sh"
    script.write_text("#!/bin/bash\n#SBATCH --job-name=train\n#SBATCH --gres=gpu:2\necho hi\n")
    result = run(["submit", "--sbatch", str(script), "--image", "busybox", "--dry-run"])
    assert result.exit_code == 0, result.output
    job = next(d for d in yaml.safe_load_all(result.stdout) if d)
    assert job["kind"] == "GryviaAIJob" and job["spec"]["gpus"] == 2


def test_cancel_and_delete(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeAccess(
        make_job("a").phase("Running").obj(), make_job("done").phase("Succeeded").obj()
    )
    result = run(["cancel", "a", "done", "nope", "--yes"], fake)
    assert result.exit_code == 1
    a = next(o for o in fake.objects if o["metadata"]["name"] == "a")
    assert a["metadata"]["annotations"]["gryvia.io/cancel"] == "true"
    assert "job done is already Succeeded" in result.output
    assert (
        'job "nope" not found' in result.output
        and "1 of 3 job(s) could not be cancelled" in result.output
    )
    assert run(["cancel", "bad=name", "-y"], fake).exit_code == 2
    deleted = run(["delete", "job", "a", "--yes"], fake)
    assert deleted.exit_code == 0 and deleted.stdout == "gryviaaijob.gryvia.io/a\n"
    assert run(["rm", "job", "a", "-y"], fake).exit_code == 1
    assert run(["rm", "job", "a", "-y", "--ignore-not-found"], fake).exit_code == 0


def test_logs_replica_tail_and_missing_pods(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeAccess(make_job("j").phase("Running").obj(), make_job("empty").obj())
    for index in (0, 1):
        pod = make_pod(f"j-{index}-x").job("j").obj()
        pod["metadata"]["annotations"] = {"batch.kubernetes.io/job-completion-index": str(index)}
        pod["status"]["containerStatuses"] = [{"name": "c", "state": {"running": {}}}]
        fake.add(pod)
        fake.logs[f"j-{index}-x"] = [f"line {n} of rank {index}" for n in range(5)]
    assert run(["logs", "j"], fake).stdout.splitlines()[0] == "line 0 of rank 0"
    assert run(["logs", "j", "--replica", "1", "--tail", "2"], fake).stdout.splitlines() == [
        "line 3 of rank 1",
        "line 4 of rank 1",
    ]
    missing = run(["logs", "j", "--replica", "7"], fake)
    assert missing.exit_code == 1 and "replicas with pods: 0, 1" in missing.output
    assert "No pods found for job empty" in run(["logs", "empty"], fake).output
    assert run(["logs", "ghost"], fake).exit_code == 1


def test_config_show_and_set_namespace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    kube = tmp_path / "kubeconfig"
    kube.write_text(
        yaml.safe_dump(
            {
                "clusters": [{"name": "c", "cluster": {"server": "https://c:6443"}}],
                "users": [{"name": "u", "user": {"token": "t"}}],
                "contexts": [
                    {"name": "ctx", "context": {"cluster": "c", "user": "u", "namespace": "kns"}}
                ],
                "current-context": "ctx",
            }
        )
    )
    monkeypatch.setenv("KUBECONFIG", str(kube))
    shown = json.loads(run(["config", "-o", "json"]).output)
    assert (shown["context"], shown["server"], shown["user"], shown["namespace"]) == (
        "ctx",
        "https://c:6443",
        "u",
        "kns",
    )
    assert shown["namespaceSource"] == "kubeconfig"
    saved = run(["config", "set-namespace", "team-a"])
    assert saved.exit_code == 0 and "team-a" in saved.output
    config_file = Path(shown["configFile"])
    assert yaml.safe_load(config_file.read_text()) == {"namespaces": {"ctx": "team-a"}}
    after = json.loads(run(["config", "-o", "json"]).output)
    assert (after["namespace"], after["namespaceSource"]) == ("team-a", "gryvia config")
    assert json.loads(run(["-n", "x", "config", "-o", "json"]).output)["namespace"] == "x"
    human = run(["config"]).output
    assert "Namespace:  team-a (from gryvia config)" in human
    assert run(["config", "unset-namespace"]).exit_code == 0
    assert yaml.safe_load(config_file.read_text()) == {"namespaces": {}}
    assert shown["prometheusUrl"] == ""
    bad = run(["config", "set-prometheus", "prometheus:9090"])
    assert bad.exit_code != 0 and "http://" in bad.output
    assert run(["config", "set-prometheus", "http://prom:9090/"]).exit_code == 0
    assert json.loads(run(["config", "-o", "json"]).output)["prometheusUrl"] == "http://prom:9090"
    assert run(["config", "unset-prometheus"]).exit_code == 0
    assert yaml.safe_load(config_file.read_text())["prometheus_urls"] == {}


def test_saved_namespace_is_used_by_commands(monkeypatch: pytest.MonkeyPatch) -> None:
    from gryvia_cli.settings import save_namespace

    save_namespace("test", "team")
    fake = FakeAccess(make_job("a", "team").obj(), make_job("b", "ml").obj())
    assert run(["list", "jobs", "-o", "name"], fake).output == "gryviaaijob.gryvia.io/a\n"
    monkeypatch.setenv("GRYVIA_PLATFORM_NAMESPACE", "ops")
    from gryvia_cli.settings import load_settings

    assert load_settings().platform_namespace == "ops" and load_settings().namespaces == {
        "test": "team"
    }


def test_bad_config_file_is_an_error(
    isolated_env: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    config = tmp_path / "config" / "config.yaml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("namespaces: [1, 2]\n")
    result = run(["list", "jobs"], FakeAccess())
    assert result.exit_code == 1 and "cannot read the gryvia config file" in result.output
