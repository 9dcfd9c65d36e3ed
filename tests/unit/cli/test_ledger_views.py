"""The CSV of a finalized invoice (`gryvia invoice show|finalize -o csv`)."""

from __future__ import annotations

from gryvia_cli.views.ledger import INVOICE_CSV_HEADER, invoice_csv
from tests.unit.api.test_invoice import _final


def test_one_row_per_line_then_the_total() -> None:
    spec = _final()
    spec["lines"][0]["job"] = "=cmd()"  # formula-like text is defused
    inv = {"metadata": {"name": "inv-vision-202611-1"}, "spec": spec}
    rows = invoice_csv([inv]).splitlines()
    assert rows[0] == ",".join(INVOICE_CSV_HEADER)
    assert rows[1] == (
        "inv-vision-202611-1,INV-vision-000001,vision,2026-11,Finalized,1,le-r1,'=cmd(),"
        "a100-80g,0.123400,4.000000,0.49,USD"
    )
    assert (
        rows[2]
        == "inv-vision-202611-1,INV-vision-000001,vision,2026-11,Finalized,,TOTAL,,,,,0.49,USD"
    )
    assert len(rows) == 3
