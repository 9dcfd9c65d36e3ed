"""NCCL's INFO lines read back (`gryvia gpu nccl`): the transport in the three cases of the
test data (written for the project in NCCL's log format), and the socket fallback of a job
that asked for RDMA."""

from __future__ import annotations

from pathlib import Path

from gryvia_cli.core.nccl import NcclReport, nccl_lines, read_nccl, transport_of

DATA = Path(__file__).parents[2] / "data" / "nccl"


def _read(name: str) -> NcclReport:
    return read_nccl((DATA / name).read_text().splitlines())


def test_two_nodes_over_infiniband_with_gpudirect() -> None:
    report = _read("ib-two-nodes.log")
    assert report.version == "2.21.5+cuda12.4" and report.nranks == 16
    assert report.networks == {"IB"} and report.gpu_direct == 4
    assert dict(report.transports) == {"IB": 4, "P2P": 3}
    assert report.rings[0] == list(range(16)) and len(report.trees) == 1
    assert not report.socket_fallback(asked_rdma=True)
    text = "\n".join(nccl_lines(report, "ml/train", asked_rdma=True))
    assert "Network:     IB (GPUDirect RDMA on 4 connection(s))" in text
    assert "Transports:  P2P 3, IB 4 (connections)" in text and "Problem" not in text


def test_an_rdma_job_that_fell_back_to_sockets_is_flagged_with_nccls_warning() -> None:
    report = _read("socket-fallback.log")
    assert report.networks == {"Socket"} and dict(report.transports) == {"Socket": 2, "P2P": 2}
    assert report.warnings == ["NET/IB : unable to open device mlx5_0"]
    assert report.socket_fallback(asked_rdma=True) and not report.socket_fallback(False)
    text = "\n".join(nccl_lines(report, "ml/bert", asked_rdma=True))
    assert "Problem:     the job asked for network: rdma, but NCCL went over sockets" in text
    assert "Warning:     NET/IB : unable to open device mlx5_0" in text
    assert report.as_dict(True)["socketFallback"] is True


def test_one_node_goes_peer_to_peer_and_through_shared_memory() -> None:
    report = _read("p2p-single-node.log")
    assert dict(report.transports) == {"P2P": 3, "SHM": 1} and report.gpu_direct == 0
    assert report.rings == {0: [0, 1, 2, 3], 1: [0, 3, 2, 1]}
    assert "Ring 1       0 3 2 1" in nccl_lines(report, "ml/llm", asked_rdma=False)


def test_no_nccl_lines_says_how_to_get_them_and_transports_are_named_as_nccl_does() -> None:
    report = read_nccl(["step 1 loss 3.2", "[rank0]: hello"])
    assert not report.found and "NCCL_DEBUG=INFO" in nccl_lines(report, "a/b", False)[0]
    assert [
        transport_of(v)
        for v in ("NET/IB/0/GDRDMA", "NET/Socket/1", "SHM/direct", "NET/AWS Libfabric/0")
    ] == [
        "IB",
        "Socket",
        "SHM",
        "AWS Libfabric",
    ]
