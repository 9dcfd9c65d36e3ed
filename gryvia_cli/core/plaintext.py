"""Cluster and user text made safe to print: no terminal escapes, no control characters.

Pure. Job names, commands, labels, annotations, events, messages, node and tenant names and
log lines are user data: they must reach a terminal as the characters they are, never as
commands to it. Markup is the renderer's business (`gryvia_cli.usertext` wraps these
strings in Rich `Text`, which is never parsed as markup); this module only deals with the
bytes a terminal would act on.

- `visible(text)`: for names, commands, messages. Every control character is replaced by
  its visible picture (ESC becomes `␛`, BEL `␇`, ...), so `\\x1b[31mred` shows as
  `␛[31mred`; C1 controls and bidirectional overrides become `�`. Tabs become a space and
  line breaks `↵` unless `multiline` keeps them.
- `log_text(line)`: for container logs, which often carry colours: escape sequences (CSI such
  as colours, OSC such as window titles, DCS/APC/PM/SOS strings, two-byte escapes) are
  removed, a carriage return keeps what a terminal would show (the text after the last one),
  and what is left goes through `visible`.
"""

from __future__ import annotations

import re

NEWLINE_MARK = "↵"
REPLACEMENT = "\ufffd"

_BIDI = (*range(0x202A, 0x202F), *range(0x2066, 0x206A))
"""Embedding, override and isolate controls: they reorder the text around them."""


def _table(multiline: bool) -> dict[int, str]:
    table: dict[int, str] = {c: chr(0x2400 + c) for c in range(0x20)}
    table[0x7F] = "\u2421"  # ␡
    table.update({c: REPLACEMENT for c in range(0x80, 0xA0)})
    table.update({c: REPLACEMENT for c in _BIDI})
    table.update({0x2028: NEWLINE_MARK, 0x2029: NEWLINE_MARK})
    if multiline:
        del table[ord("\n")], table[ord("\t")]
    else:
        table[ord("\t")] = " "
        table[ord("\n")] = NEWLINE_MARK
    return table


_SINGLE = _table(multiline=False)
_MULTI = _table(multiline=True)

_ESCAPES = re.compile(
    r"""
      \x1b\[[0-?]*[ -/]*[@-~]?              # CSI: colours, cursor moves, erase
    | \x9b[0-?]*[ -/]*[@-~]?                # 8-bit CSI
    | \x1b\][^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?   # OSC: title, hyperlink, clipboard
    | \x9d[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?
    | \x1b[P^_X][^\x1b\x9c]*(?:\x1b\\|\x9c)?  # DCS, PM, APC, SOS strings
    | [\x90\x98\x9e\x9f][^\x1b\x9c]*(?:\x1b\\|\x9c)?
    | \x1b[ -/]*[0-~]?                      # two-byte escapes (ESC c, ESC ( B, ESC 7)
    """,
    re.VERBOSE,
)


def visible(text: str, *, multiline: bool = False) -> str:
    """`text` with every control character shown as a visible glyph (see the module
    docstring); printable text comes back unchanged (the same object)."""
    if text.isprintable():
        return text
    return text.translate(_MULTI if multiline else _SINGLE)


def strip_escapes(text: str) -> str:
    """`text` without terminal escape sequences (an unterminated OSC or DCS string runs to
    the end of `text`, as a terminal would swallow it)."""
    if "\x1b" not in text and not any("\x90" <= ch <= "\x9f" for ch in text):
        return text
    return _ESCAPES.sub("", text)


def log_text(line: str) -> str:
    """One log line as a terminal would leave it: escapes removed, the text after the last
    carriage return (a progress bar's last state), tabs expanded to 4 columns, other
    controls visible; no line breaks."""
    if line.isprintable():
        return line
    text = strip_escapes(line)
    if "\r" in text:
        parts = [p for p in text.split("\r") if p]
        text = parts[-1] if parts else ""
    return visible(text.expandtabs(4))
