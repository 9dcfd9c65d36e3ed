"""TUI test fixtures: snapshots stored under `snapshots/` at the repo root, the fake cluster,
and the sandbox with Gryvia's CRDs (and the operator, when it exists) for pilot tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pytest_textual_snapshot import SVGImageExtension
from syrupy.assertion import SnapshotAssertion

from tests.conftest import SandboxHandle
from tests.support.operator import OperatorProcess
from tests.tui.fake import FakeSource
from tests.tui.fixed import LOG_LINES, PREVIOUS_LOG_LINES, fixed_cluster
from tests.tui.fixed_policies import policy_cluster

REPO = Path(__file__).resolve().parents[2]
SNAPSHOT_DIR = REPO / "snapshots"


class RootSnapshots(SVGImageExtension):
    """SVG snapshots in `snapshots/<test module>/` at the repository root."""

    @classmethod
    def dirname(cls, *, test_location: Any) -> str:
        return str(SNAPSHOT_DIR / test_location.basename)


class _RootAssertion(SnapshotAssertion):
    def use_extension(self, extension_class: Any = None) -> SnapshotAssertion:
        return self.with_defaults(extension_class=RootSnapshots)


@pytest.fixture
def snapshot(snapshot: SnapshotAssertion) -> SnapshotAssertion:
    """syrupy's snapshot, storing pytest-textual-snapshot's SVGs under `snapshots/`."""
    return _RootAssertion(
        update_snapshots=snapshot.update_snapshots,
        test_location=snapshot.test_location,
        extension_class=RootSnapshots,
        session=snapshot.session,
    )


@pytest.fixture
def fake_source() -> FakeSource:
    """The fixed cluster of builders.fixed_cluster, all namespaces."""
    return FakeSource(
        fixed_cluster(),
        logs={"llama-pretrain-0": LOG_LINES},
        previous_logs={"llama-pretrain-1": PREVIOUS_LOG_LINES},
    )


@pytest.fixture
def policy_source() -> FakeSource:
    """The fixed cluster plus hooks, priorities, checkpoint guards, GPU sharing policies and
    more budgets (tests/tui/fixed_policies.py), all namespaces."""
    return FakeSource(policy_cluster())


# -- sandbox with CRDs and (maybe) the operator ----------------------------------------------


@pytest.fixture(scope="session")
def gryvia_sandbox(sandbox: SandboxHandle, operator: OperatorProcess) -> Iterator[dict[str, Any]]:
    """The sandbox with Gryvia's CRDs and the session's operator running (tests/conftest.py:
    one operator for every test package). Yields {"sandbox", "operator": True}."""
    operator.ensure_running()
    yield {"sandbox": sandbox, "operator": True}
