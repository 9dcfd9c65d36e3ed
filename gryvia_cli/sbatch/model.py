"""Value types shared by the sbatch importer: findings, parsed directives, parsed scripts."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum

from gryvia_cli.sbatch.values import MAX_ARRAY_SIZE as DEFAULT_MAX_ARRAY_SIZE


class Severity(Enum):
    """Where a finding goes in the migration report."""

    ERROR = "errors"
    WARNING = "warnings"
    UNSUPPORTED = "unsupported"


@dataclass(frozen=True)
class Issue:
    """One finding: a stable `code`, the 1-based script `line`, the `directive` and a message."""

    severity: Severity
    code: str
    message: str
    line: int | None = None
    directive: str | None = None

    def to_dict(self) -> dict[str, object]:
        """The report's JSON shape: `{code, line, directive, message}`."""
        return {
            "code": self.code,
            "line": self.line,
            "directive": self.directive,
            "message": self.message,
        }

    def render(self) -> str:
        """A one-line human form: `line 5: --nodes=two: message`."""
        where = f"line {self.line}: " if self.line is not None else ""
        return f"{where}{self.message}"


def error(code: str, message: str, line: int | None = None, directive: str | None = None) -> Issue:
    """Build an error finding (the import produces no job)."""
    return Issue(Severity.ERROR, code, message, line, directive)


def warning(
    code: str, message: str, line: int | None = None, directive: str | None = None
) -> Issue:
    """Build a warning finding (the job is produced; something differs from Slurm)."""
    return Issue(Severity.WARNING, code, message, line, directive)


def unsupported(
    code: str, message: str, line: int | None = None, directive: str | None = None
) -> Issue:
    """Build an unsupported-directive finding (no Gryvia equivalent; what to do instead)."""
    return Issue(Severity.UNSUPPORTED, code, message, line, directive)


@dataclass(frozen=True)
class Directive:
    """One option parsed from the `#SBATCH` lines.

    `key` is the option's identity (aliases resolved), `directive` its canonical long spelling,
    `value` its argument (`None` for a flag or an absent optional argument), `line` the script
    line the option word sits on and `written` the word as the script spells it.
    """

    key: str
    directive: str
    value: str | None
    line: int
    written: str

    def show(self) -> str:
        """The directive as a human reads it: `--nodes=2` or `--exclusive`."""
        return self.directive if self.value is None else f"{self.directive}={self.value}"


@dataclass(frozen=True)
class ParsedScript:
    """What the parser found in a batch script; `issues` holds parse errors and warnings."""

    filename: str
    text: str
    shebang: str
    directives: tuple[Directive, ...] = ()
    first_command_line: int | None = None
    issues: tuple[Issue, ...] = field(default_factory=tuple)

    @property
    def ok(self) -> bool:
        """True when no finding is an error."""
        return not any(issue.severity is Severity.ERROR for issue in self.issues)

    def last(self, key: str) -> Directive | None:
        """The directive that counts for `key`: the later of repeated options wins."""
        for directive in reversed(self.directives):
            if directive.key == key:
                return directive
        return None

    def given(self, key: str) -> bool:
        """True when the script sets option `key` at least once."""
        return any(directive.key == key for directive in self.directives)


@dataclass(frozen=True)
class ImportSettings:
    """What the site decides, as slurm.conf does for Slurm.

    `max_array_size` plays MaxArraySize (array indices run 0..max_array_size-1; the CLI's
    setting `sbatch_max_array_size`, env GRYVIA_SBATCH_MAX_ARRAY_SIZE). `node_gpus` maps a
    canonical GPU type (`H100`) to the GPUs one node of that type has; `--exclusive` needs it
    to take whole nodes (read from the cluster by `submit`, `--node-gpus TYPE=N` offline).
    """

    max_array_size: int = DEFAULT_MAX_ARRAY_SIZE
    node_gpus: Mapping[str, int] = field(default_factory=dict)
    tenants: frozenset[str] | None = None
    """Names of the cluster's GryviaTenants (None: not read), for `--account`."""
    local_queues: frozenset[str] | None = None
    """Names of the Kueue LocalQueues in the jobs' namespace, for `--partition` (None: not
    read, or Kueue is not installed; then the partition is kept as spec.queueName)."""
    queue_namespace: str = ""
    """The namespace `local_queues` were read in (for the message)."""
    submit_env: Mapping[str, str] | None = None
    """The submitting shell's environment, for `--export` (`sbatch/export.py`); None: not
    known (`gryvia sbatch convert`), nothing is passed."""
