"""The one CSV writer of Gryvia's exports (`gryvia usage`, `gryvia invoice`, `invoice
show|finalize`, `ledger verify`), guarded against formula injection (pure).

The rule (docs/billing.md, "CSV exports", after OWASP "CSV Injection"): text starting with
`=`, `+`, `-`, `@`, tab or CR gets a leading `'`, every cell holding CR or LF is quoted, and
numbers (negative Decimals included) stay numbers. Records end in LF.
"""

from __future__ import annotations

import csv
import io
import math
import re
from collections.abc import Iterable, Sequence
from decimal import Decimal

_FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")
_PLAIN_NUMBER = re.compile(r"-?[0-9]+(?:\.[0-9]+)?")
"""Text a spreadsheet reads as a number, never a formula: `-400.00`, `12`, `0.355`."""


def csv_safe(value: object) -> str:
    """One CSV cell that a spreadsheet will not run as a formula (OWASP "CSV Injection").

    Numbers stay numbers: a finite int, float or Decimal (not a bool) is written as it is,
    a Decimal in plain notation (`Decimal("-400.00")` -> `-400.00`), and so is text that is
    exactly a plain decimal number (`-400.00`, as amounts are already written). Any other text
    starting with `=`, `+`, `-`, `@`, tab or CR gets a leading apostrophe (`-1+1` -> `'-1+1`,
    `-inf` too). Quoting cells that hold CR or LF is `to_csv`'s part."""
    if isinstance(value, Decimal) and value.is_finite():
        return format(value, "f")
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, float) and math.isfinite(value):
        return str(value)
    text = str(value)
    if _PLAIN_NUMBER.fullmatch(text):
        return text
    return "'" + text if text.startswith(_FORMULA_PREFIXES) else text


def _csv_record(cells: Sequence[object]) -> str:
    """One CSV record ending in LF, by the stdlib writer's own quoting (QUOTE_MINIMAL).

    The writer quotes a cell when it holds a character of its line terminator, so the record
    is written with CRLF (every cell holding CR or LF is quoted) and its terminator, always
    the last two characters, is replaced by LF."""
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\r\n", quoting=csv.QUOTE_MINIMAL).writerow(cells)
    return buf.getvalue()[:-2] + "\n"


def to_csv(header: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    """CSV text: the header, then one record per row, each cell passed through `csv_safe`;
    records end in LF and a cell holding CR or LF is quoted (a bare CR would start a new row
    in a spreadsheet). The one writer of Gryvia's CSV exports."""
    return "".join([_csv_record(header), *(_csv_record([csv_safe(v) for v in r]) for r in rows)])
