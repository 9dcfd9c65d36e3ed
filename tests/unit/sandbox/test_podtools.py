"""kwok Exec and PortForward objects of sandbox pods, and listening ports from /proc."""

from __future__ import annotations

from gryvia_cli.sandbox.podtools import (
    build_exec_object,
    build_port_forward_object,
    declared_ports,
    listening_ports,
)

PROC_TCP = """\
  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000:1F40 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1 1
   1: 0100007F:0016 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 2 1
   2: 03004A64:1F40 01004A64:C2C8 06 00000000:00000000 03:000016DC 00000000     0        0 0 3
   3: 03004A64:9C40 01004A64:C2C9 01 00000000:00000000 00:00000000 00000000     0        0 3 1
"""
PROC_TCP6 = """\
  sl  local_address                         remote_address                        st tx_queue
   0: 00000000000000000000000000000000:1F90 00000000000000000000000000000000:0000 0A 00000000
"""


def test_listening_ports_are_read_from_proc_net_tcp_and_tcp6() -> None:
    assert listening_ports(PROC_TCP) == {8000, 22}  # TIME_WAIT and ESTABLISHED rows skipped
    assert listening_ports(PROC_TCP6) == {8080}
    assert listening_ports(PROC_TCP.splitlines()[0]) == frozenset()


def test_declared_ports_are_the_tcp_container_ports() -> None:
    pod = {
        "spec": {
            "containers": [
                {
                    "name": "a",
                    "ports": [{"containerPort": 8000}, {"containerPort": 53, "protocol": "UDP"}],
                },
                {"name": "b"},
            ],
            "initContainers": [
                {"name": "i", "ports": [{"containerPort": 9000, "protocol": "TCP"}]}
            ],
        }
    }
    assert declared_ports(pod) == {8000, 9000}


def test_exec_object_runs_each_container_in_its_dir_with_its_env_owned_by_the_pod() -> None:
    body = build_exec_object(
        "uid-1", "ns", "p", {"b": ("/w/b", {"Z": "1", "A": "2"}), "a": ("/w/a", {})}
    )
    assert body["kind"] == "Exec" and body["apiVersion"] == "kwok.x-k8s.io/v1alpha1"
    assert body["metadata"]["ownerReferences"] == [
        {"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": "uid-1"}
    ]
    assert body["spec"]["execs"] == [
        {"containers": ["a"], "local": {"workDir": "/w/a", "envs": []}},
        {
            "containers": ["b"],
            "local": {
                "workDir": "/w/b",
                "envs": [{"name": "A", "value": "2"}, {"name": "Z", "value": "1"}],
            },
        },
    ]


def test_port_forward_object_reaches_the_pods_own_address_port_by_port() -> None:
    body = build_port_forward_object("uid-1", "ns", "p", "100.64.0.7", {8080, 22})
    assert body["kind"] == "PortForward" and body["metadata"]["name"] == "p"
    assert body["spec"]["forwards"] == [
        {"ports": [22], "target": {"address": "100.64.0.7", "port": 22}},
        {"ports": [8080], "target": {"address": "100.64.0.7", "port": 8080}},
    ]
    assert build_port_forward_object("u", "ns", "p", "1.2.3.4", ())["spec"]["forwards"] == []


class FakeApi:
    """Records the kwok object writes of `podforwards`."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str, list[int]]] = []

    def _record(self, how: str, body: dict) -> None:
        ports = [f["ports"][0] for f in body["spec"].get("forwards", [])]
        self.calls.append((how, body["kind"], ports))

    def put_kwok_object(self, plural: str, body: dict) -> None:
        self._record("put", body)

    def patch_kwok_spec(self, plural: str, body: dict) -> None:
        self._record("patch", body)


def test_forwards_are_created_once_then_patched_only_when_the_ports_change(tmp_path) -> None:
    from gryvia_cli.sandbox import podforwards
    from gryvia_cli.sandbox.processes import PodRun

    api = FakeApi()
    run = PodRun(
        uid="u", namespace="ns", name="p", ip="100.64.0.9", folder=tmp_path,
        declared_ports=frozenset({8000}),
    )  # fmt: skip
    podforwards.refresh_forwards(api, [run])  # type: ignore[arg-type]
    podforwards.refresh_forwards(api, [run])  # type: ignore[arg-type]
    run.declared_ports = frozenset({8000, 9000})
    podforwards.refresh_forwards(api, [run])  # type: ignore[arg-type]
    run.stopping.set()
    run.declared_ports = frozenset()
    podforwards.refresh_forwards(api, [run])  # type: ignore[arg-type]
    assert api.calls == [
        ("put", "PortForward", [8000]),
        ("patch", "PortForward", [8000, 9000]),
    ]
