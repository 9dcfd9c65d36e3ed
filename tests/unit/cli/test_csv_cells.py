"""CSV exports guarded the OWASP way (issue 38, fault 4): text starting with = + - @ tab or CR
gets a leading apostrophe, every cell holding CR or LF is quoted (a bare CR is a row break to
a spreadsheet), and numbers, negative amounts included, stay numbers."""

from __future__ import annotations

import csv
import io
from decimal import Decimal
from typing import Any

from gryvia_cli.core.csvexport import csv_safe, to_csv
from gryvia_cli.core.invoicecsv import invoices_csv
from gryvia_cli.views.ledger import invoice_csv


def _spreadsheet_rows(text: str) -> list[str]:
    """The lines a spreadsheet sees when it splits unquoted text at CR, LF or CRLF."""
    rows, current, quoted = [], "", False
    for ch in text.replace("\r\n", "\n"):
        if ch == '"':
            quoted = not quoted
        if ch in "\r\n" and not quoted:
            rows.append(current)
            current = ""
        else:
            current += ch
    return rows + ([current] if current else [])


def test_text_starting_with_a_carriage_return_is_guarded_and_quoted() -> None:
    text = to_csv(["sku", "tenant"], [["\r=1+1", "vision"], ["a100\rb", "x\ny"]])
    assert text == 'sku,tenant\n"\'\r=1+1",vision\n"a100\rb","x\ny"\n'
    assert not any(row.startswith(("=", "+", "-", "@")) for row in _spreadsheet_rows(text))
    assert list(csv.reader(io.StringIO(text))) == [
        ["sku", "tenant"],
        ["'\r=1+1", "vision"],
        ["a100\rb", "x\ny"],
    ]
    assert csv_safe("\r=1+1") == "'\r=1+1" and csv_safe("\t=1") == "'\t=1"


def test_negative_amounts_stay_numbers_and_formulas_stay_guarded() -> None:
    assert csv_safe(Decimal("-400.00")) == "-400.00"
    assert csv_safe(Decimal("-4E+2")) == "-400"
    assert csv_safe(-400) == "-400" and csv_safe(-3.5) == "-3.5"
    assert csv_safe("-400.00") == "-400.00"  # an amount already written as text
    for hostile in ("-1+1", "-400.00+cmd|' /C calc'!A0", "-", "-1e3", "+400", "@1"):
        assert csv_safe(hostile) == "'" + hostile
    assert csv_safe(float("-inf")) == "'-inf" and csv_safe(Decimal("-Infinity")) == "'-Infinity"
    assert csv_safe(True) == "True"


def _estimate_with_credit() -> dict[str, Any]:
    line = {"sku": "a100-80g", "gpuType": "A100-80G", "jobs": 1, "gpuHours": 10.0, "rate": 4.0}
    credit = {"sku": "credit", "gpuType": "", "jobs": 0, "gpuHours": 0.0, "rate": 0.0}
    return {
        "number": "INV-vision-202611",
        "tenant": "vision",
        "period": {"from": "2026-11-01", "to": "2026-11-30"},
        "currency": "USD",
        "lines": [{**line, "amount": 40.0}, {**credit, "amount": -400.0}],
        "subtotal": -360.0,
        "jobs": 1,
    }


def test_a_credit_line_in_invoices_csv_is_a_negative_number() -> None:
    rows = list(csv.reader(io.StringIO(invoices_csv([_estimate_with_credit()]))))
    assert [(r[4], r[9]) for r in rows[1:]] == [
        ("a100-80g", "40.00"),
        ("credit", "-400.00"),
        ("TOTAL", "-360.00"),
    ]


def test_a_credit_line_in_a_finalized_invoices_csv_is_a_negative_number() -> None:
    spec = {
        "number": "INV-vision-000002",
        "tenant": "vision",
        "month": "2026-11",
        "state": "Finalized",
        "currency": "USD",
        "lines": [
            {
                "sequence": 2,
                "entry": "le-r2",
                "job": "\r=HYPERLINK(1)",
                "sku": "credit",
                "gpuHours": "0.000000",
                "rate": "0.000000",
                "amount": "-400.00",
            }
        ],
        "total": "-400.00",
    }
    text = invoice_csv([{"metadata": {"name": "inv-vision-202611-2"}, "spec": spec}])
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[1][7] == "'\r=HYPERLINK(1)" and rows[1][-2:] == ["-400.00", "USD"]
    assert rows[2][-2:] == ["-400.00", "USD"]
    assert '"\'\r=HYPERLINK(1)"' in text
