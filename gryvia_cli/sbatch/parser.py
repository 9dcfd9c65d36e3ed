"""Read a batch script the way sbatch does: file checks, the directive block, words, getopt.

Rules and their sources (Slurm `src/sbatch/sbatch.c` `_get_script_buffer`, `src/sbatch/opt.c`
`_opt_batch_script`, `_get_argument`, `_set_options`; sbatch(1) DESCRIPTION):

* the file must be non-empty, start with the two bytes `#!`, hold no NUL byte and no `\\r\\n`;
* only lines starting with `#SBATCH` in column 1 are directives (`#SLURM` is a deprecated
  synonym); the first line that is neither blank nor a comment ends the block, and later
  `#SBATCH` lines are comments;
* a directive line splits into words on blanks; quotes group, a backslash escapes the next
  character (a blank too), an unquoted `#` ends the line and an empty word (`""`) ends it too;
* the words of all directive lines form one argv parsed by glibc `getopt_long` in
  stop-at-the-first-non-option mode; a stray word is "Invalid directive found in batch script".
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final

from gryvia_cli.sbatch.model import Directive, Issue, ParsedScript, error, warning
from gryvia_cli.sbatch.options import SHORT, ArgKind, match_long

BLANKS: Final = " \t\n\v\f\r"  # C isspace() in the "C" locale
MAGIC: Final = "#SBATCH"
LEGACY_MAGIC: Final = "#SLURM"
_LOOKALIKE: Final = re.compile(
    r"^[ \t\v\f\r]*(#+)[ \t\v\f\r]*sbatch(?P<rest>[ \t\v\f\r]+-.*|-.*)?$", re.IGNORECASE
)
# A word that names a script or `$0`: the comment shows a command line (`# sbatch -N 2 x.sh`).
_SCRIPT_WORD: Final = re.compile(
    r"(\$\{?0\}?|\S+\.(sh|bash|slurm|sbatch|slrm|sub|sl|job|batch|template))$", re.IGNORECASE
)
_HET: Final = re.compile(r"hetjob|packjob", re.IGNORECASE)


@dataclass(frozen=True)
class Word:
    """One word of the directive argv and the script line it came from."""

    text: str
    line: int


def check_file(data: bytes) -> list[Issue]:
    """The checks sbatch makes before reading any directive (sbatch.c `_get_script_buffer`)."""
    if not data:
        return [error("empty-script", "Batch script is empty", 1)]
    if not data.strip(BLANKS.encode()):
        return [error("empty-script", "Batch script contains only whitespace", 1)]
    if not data.startswith(b"#!"):
        return [
            error(
                "missing-shebang",
                "This does not look like a batch script: the first line must start with #! "
                "followed by the path to an interpreter (for instance #!/bin/sh)",
                1,
            )
        ]
    if b"\0" in data:
        line = data[: data.index(b"\0")].count(b"\n") + 1
        return [error("nul-byte", "Batch script contains a NUL character", line)]
    if b"\r\n" in data:
        line = data[: data.index(b"\r\n")].count(b"\n") + 1
        return [
            error(
                "dos-line-endings",
                "Batch script contains DOS line breaks (\\r\\n) instead of expected UNIX line "
                "breaks (\\n); convert it with dos2unix",
                line,
            )
        ]
    return []


def split_words(rest: str, line: int) -> tuple[list[str], list[Issue]]:
    """Split the text after `#SBATCH` into words as sbatch's `_get_argument` does."""
    words: list[str] = []
    issues: list[Issue] = []
    pos, end = 0, len(rest)
    while True:
        while pos < end and rest[pos] in BLANKS:
            pos += 1
        if pos >= end:
            break
        if rest[pos] == ":":
            issues.append(
                error(
                    "heterogeneous-job",
                    "Unexpected `:`: heterogeneous job components are not supported; "
                    "submit each component as its own job",
                    line,
                    "hetjob",
                )
            )
            break
        chars: list[str] = []
        quote = ""
        escaped = False
        while pos < end and (quote or escaped or rest[pos] not in BLANKS):
            char = rest[pos]
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
                pos += 1
                continue
            elif quote:
                if char == quote:
                    quote = ""
                    pos += 1
                    continue
            elif char in "\"'":
                quote = char
                pos += 1
                continue
            elif char == "#":
                break
            chars.append(char)
            pos += 1
        if quote:
            issues.append(error("unmatched-quote", f"Unmatched `{quote}` in directive", line))
            break
        if not chars:
            leftover = rest[pos:].lstrip(BLANKS)
            if leftover and not leftover.startswith("#"):
                issues.append(
                    warning(
                        "empty-word",
                        "an empty word ends the directive line for Slurm; "
                        f"ignored as Slurm does: {leftover.strip()!r}",
                        line,
                    )
                )
            break
        words.append("".join(chars))
    return words, issues


def getopt(words: Sequence[Word]) -> tuple[list[Directive], list[Issue]]:
    """Parse directive words like glibc `getopt_long` with optstring "+..." (sbatch's table)."""
    directives: list[Directive] = []
    issues: list[Issue] = []
    index = 0
    while index < len(words):
        word = words[index]
        text = word.text
        if text == "--":
            if index + 1 < len(words):
                stray = words[index + 1]
                issues.append(_stray(stray))
            break
        if text.startswith("--"):
            index = _long_option(words, index, directives, issues)
        elif text.startswith("-") and len(text) > 1:
            index = _short_options(words, index, directives, issues)
        else:
            issues.append(_stray(word))
            break
    return directives, issues


def _stray(word: Word) -> Issue:
    return _invalid(
        f"Invalid directive found in batch script: {word.text} "
        "(a value with spaces needs quotes; directives are --option=value words)",
        word,
        word.text,
    )


def _invalid(message: str, word: Word, directive: str) -> Issue:
    """An `invalid-directive` error about `directive` in `word`, as sbatch words it."""
    return error("invalid-directive", message, word.line, directive)


def _long_option(
    words: Sequence[Word], index: int, out: list[Directive], issues: list[Issue]
) -> int:
    word = words[index]
    name, has_value, value = word.text[2:].partition("=")
    spec, candidates = match_long(name)
    if spec is None:
        if candidates:
            listed = " ".join(f"'--{candidate}'" for candidate in candidates)
            message = f"option '--{name}' is ambiguous; possibilities: {listed}"
        else:
            message = f"unrecognized option '--{name}'"
        issues.append(_invalid(message, word, f"--{name}"))
        return index + 1
    arg: str | None = None
    if spec.arg is ArgKind.NONE:
        if has_value:
            issues.append(
                _invalid(f"option '--{spec.name}' doesn't allow an argument", word, spec.directive)
            )
            return index + 1
    elif spec.arg is ArgKind.OPTIONAL:
        arg = value if has_value else None
    elif has_value:
        arg = value
    elif index + 1 < len(words):
        index += 1
        arg = words[index].text
    else:
        issues.append(
            _invalid(f"option '--{spec.name}' requires an argument", word, spec.directive)
        )
        return index + 1
    out.append(Directive(spec.key, spec.directive, arg, word.line, word.text))
    return index + 1


def _short_options(
    words: Sequence[Word], index: int, out: list[Directive], issues: list[Issue]
) -> int:
    word = words[index]
    text = word.text
    pos = 1
    while pos < len(text):
        letter = text[pos]
        spec = SHORT.get(letter)
        if spec is None:
            issues.append(_invalid(f"invalid option -- '{letter}'", word, f"-{letter}"))
            pos += 1
            continue
        if spec.arg is ArgKind.NONE:
            out.append(Directive(spec.key, spec.directive, None, word.line, f"-{letter}"))
            pos += 1
            continue
        attached = text[pos + 1 :]
        if attached or spec.arg is ArgKind.OPTIONAL:
            arg: str | None = attached or None
        elif index + 1 < len(words):
            index += 1
            arg = words[index].text
        else:
            issues.append(
                _invalid(f"option requires an argument -- '{letter}'", word, spec.directive)
            )
            return index + 1
        out.append(Directive(spec.key, spec.directive, arg, word.line, f"-{letter}"))
        return index + 1
    return index + 1


def _is_blank(line: str) -> bool:
    return not line.strip(BLANKS)


def _is_comment(line: str) -> bool:
    return line.lstrip(BLANKS).startswith("#")


def _lookalike(line: str, number: int) -> Issue | None:
    """A warning for `# SBATCH --opt` or `#sbatch -N 2` (options after a near-magic word), but
    not for usage comments that show a command line (`#   sbatch -N 2 run.sh`) or prose."""
    match = _LOOKALIKE.match(line.rstrip(BLANKS))
    if match is None or match.group("rest") is None or line.startswith((MAGIC, LEGACY_MAGIC)):
        return None  # `# sbatch pipeline.sbatch`, `# SBATCH file can't...`: prose, not options
    words = match.group("rest").split("#")[0].split()
    if any(_SCRIPT_WORD.fullmatch(word) for word in words):
        return None
    deliberate = line.startswith("##")  # `##SBATCH` is the usual way to switch one off
    if deliberate:
        return None
    return warning(
        "look-alike-directive",
        f"{line.strip()!r} looks like a directive but Slurm ignores it: "
        "a directive starts with #SBATCH in column 1",
        number,
    )


def scan_lines(lines: Iterable[str]) -> tuple[list[list[Word]], int | None, list[Issue]]:
    """Collect the directive words per heterogeneous component, the first command line, issues."""
    components: list[list[Word]] = [[]]
    issues: list[Issue] = []
    first_command: int | None = None
    legacy_warned = False
    late: list[tuple[int, str]] = []  # directive lines after the first command
    for number, line in enumerate(lines, start=1):
        is_magic = line.startswith(MAGIC)
        is_legacy = not is_magic and line.startswith(LEGACY_MAGIC)
        if first_command is not None:
            if is_magic or is_legacy:
                late.append((number, line.strip()))
            continue
        if is_magic or is_legacy:
            rest = line[len(MAGIC) if is_magic else len(LEGACY_MAGIC) :]
            if is_legacy and not legacy_warned:
                legacy_warned = True
                issues.append(
                    warning(
                        "deprecated-slurm-prefix",
                        "#SLURM is a deprecated synonym of #SBATCH; change it to #SBATCH",
                        number,
                    )
                )
            if _HET.search(rest):
                issues.append(_het_issue(rest, number))
                components.append([])
                rest = _HET.sub(lambda match: " " * len(match.group(0)), rest)
            words, found = split_words(rest, number)
            issues.extend(found)
            components[-1].extend(Word(text, number) for text in words)
        elif _is_blank(line):
            continue
        elif _is_comment(line):
            lookalike = _lookalike(line, number)
            if lookalike is not None:
                issues.append(lookalike)
        else:
            first_command = number
    if late:
        issues.append(_late_directives(late, first_command or 0))
    return components, first_command, issues


def _late_directives(late: list[tuple[int, str]], first_command: int) -> Issue:
    """One warning for all directive lines after the first command (a heredoc has many)."""
    (number, text), more = late[0], len(late) - 1
    others = f" and {more} more #SBATCH line(s) after it" if more else ""
    why = f"{text!r}{others} come after the first command (line {first_command})"
    why += "; Slurm ignores them and so does this import"
    return warning("directives-after-first-command", why, number)


def _het_issue(rest: str, number: int) -> Issue:
    note = ""
    if rest.strip(BLANKS).lower() not in ("hetjob", "packjob"):
        note = " (Slurm treats any directive line containing 'hetjob' or 'packjob' as one)"
    return error(
        "heterogeneous-job",
        "heterogeneous job separator"
        f"{note}: a job has one pod shape; a CPU launcher plus GPU workers imports as a "
        "workflow whose two steps start together: `gryvia sbatch convert SCRIPT` or "
        "`gryvia sbatch submit SCRIPT` (sbatch(1) HETEROGENEOUS JOB SUPPORT)",
        number,
        "hetjob",
    )


def decode(data: bytes) -> tuple[str | None, list[Issue]]:
    """Decode script bytes as UTF-8 (Kubernetes objects carry only UTF-8 text)."""
    try:
        return data.decode("utf-8"), []
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        return None, [error("not-utf8", "the script is not UTF-8 text", line)]


def parse_script(data: bytes | str, filename: str) -> ParsedScript:
    """Parse a batch script's bytes (or text) named `filename` into directives and findings.

    Nothing is interpreted here beyond Slurm's lexical rules; values are checked in
    `gryvia_cli.sbatch.mapping`. Every error names its line.
    """
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    issues = check_file(raw)
    if issues:
        return ParsedScript(filename=filename, text="", shebang="", issues=tuple(issues))
    text, issues = decode(raw)
    if text is None:
        return ParsedScript(filename=filename, text="", shebang="", issues=tuple(issues))
    lines = text.split("\n")
    shebang = lines[0]
    if not shebang[2:].strip(BLANKS):
        issues.append(error("missing-interpreter", "the #! line names no interpreter", 1, None))
    components, first_command, found = scan_lines(lines)
    issues.extend(found)
    directives: list[Directive] = []
    for position, words in enumerate(components):
        parsed, problems = getopt(words)
        issues.extend(problems)
        if position == 0:
            directives = parsed
    return ParsedScript(
        filename=filename,
        text=text,
        shebang=shebang,
        directives=tuple(directives),
        first_command_line=first_command,
        issues=tuple(issues),
    )
