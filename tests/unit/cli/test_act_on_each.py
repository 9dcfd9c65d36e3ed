"""`act_on_each` (gryvia_cli/cli/each.py): several names acted on at once, outcomes printed in
the order given, failures counted."""

from __future__ import annotations

import threading

import pytest

from gryvia_cli.cli.each import PARALLEL, Outcome, act_on_each
from gryvia_cli.errors import GryviaError


def test_names_are_acted_on_at_once_and_printed_in_order(
    capsys: pytest.CaptureFixture[str],
) -> None:
    names = [f"j{i:02}" for i in range(3 * PARALLEL)]
    together = threading.Barrier(PARALLEL, timeout=10)

    def act(name: str) -> Outcome:
        if int(name[1:]) < PARALLEL:
            together.wait()  # breaks (BrokenBarrierError) unless PARALLEL calls overlap
        if name == "j05":
            raise GryviaError("refused")
        return f"job {name} cancel requested", f"gryviaaijob.gryvia.io/{name}"

    with pytest.raises(GryviaError, match=f"1 of {len(names)} job\\(s\\) could not be"):
        act_on_each(names, act, label=lambda n: f"job {n}", what="job(s) could not be cancelled")
    out, err = capsys.readouterr()
    assert out.splitlines() == [f"gryviaaijob.gryvia.io/{n}" for n in names if n != "j05"]
    assert "job j05: refused" in err
    assert err.index("job j04 cancel requested") < err.index("job j05: refused")
    assert err.index("job j05: refused") < err.index("job j06 cancel requested")
