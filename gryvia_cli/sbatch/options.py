"""sbatch's option table: every long and short option a batch script may use, and its argument kind.

Source: Slurm `src/common/slurm_opt.c` (`common_options[]`, entries with a `set_func` or a
`set_func_sbatch`; `slurm_option_table_create` builds getopt's table from them) plus the
options of the pyxis SPANK plugin (`--container-*`), which sites running containers install,
and of other sites' plugins (`SITE_PLUGINS`: NERSC Shifter, CSCS).
The man page is sbatch(1), section OPTIONS.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Final


class ArgKind(Enum):
    """How getopt treats an option's argument (`no_argument`, `required_argument`, ...)."""

    NONE = "none"
    REQUIRED = "required"
    OPTIONAL = "optional"


@dataclass(frozen=True)
class OptionSpec:
    """One entry of the option table.

    `key` identifies the option for getopt's ambiguity rule and for the importer: aliases share
    it (`--tasks-per-node` is `ntasks-per-node`). `canonical` is the name reports use.
    """

    name: str
    arg: ArgKind
    short: str | None = None
    key: str = ""
    canonical: str = ""
    plugin: bool = False

    @property
    def directive(self) -> str:
        """The canonical spelling for reports, e.g. `--ntasks-per-node`."""
        return f"--{self.canonical or self.key or self.name}"


_R = ArgKind.REQUIRED
_N = ArgKind.NONE
_O = ArgKind.OPTIONAL

# (name, argument, short letter). Order follows slurm_opt.c; aliases are patched below.
_CORE: Final[tuple[tuple[str, ArgKind, str | None], ...]] = (
    ("account", _R, "A"),
    ("acctg-freq", _R, None),
    ("array", _R, "a"),
    ("autocomplete", _R, None),
    ("batch", _R, None),
    ("begin", _R, "b"),
    ("bb", _R, None),
    ("bbf", _R, None),
    ("cluster-constraint", _R, None),
    ("chdir", _R, "D"),
    ("cluster", _R, None),
    ("clusters", _R, "M"),
    ("comment", _R, None),
    ("container", _R, None),
    ("container-id", _R, None),
    ("context", _R, None),
    ("contiguous", _N, None),
    ("constraint", _R, "C"),
    ("core-spec", _R, "S"),
    ("cores-per-socket", _R, None),
    ("cpu-freq", _R, None),
    ("cpus-per-gpu", _R, None),
    ("cpus-per-task", _R, "c"),
    ("deadline", _R, None),
    ("delay-boot", _R, None),
    ("dependency", _R, "d"),
    ("distribution", _R, "m"),
    ("error", _R, "e"),
    ("exclude", _R, "x"),
    ("exclusive", _O, None),
    ("export", _R, None),
    ("export-file", _R, None),
    ("extra", _R, None),
    ("extra-node-info", _R, "B"),
    ("get-user-env", _O, None),
    ("gid", _R, None),
    ("gpu-bind", _R, None),
    ("gpu-freq", _R, None),
    ("gpus", _R, "G"),
    ("gpus-per-node", _R, None),
    ("gpus-per-socket", _R, None),
    ("gpus-per-task", _R, None),
    ("gres", _R, None),
    ("gres-flags", _R, None),
    ("help", _N, "h"),
    ("hint", _R, None),
    ("hold", _N, "H"),
    ("ignore-pbs", _N, None),
    ("input", _R, "i"),
    ("job-name", _R, "J"),
    ("kill-on-invalid-dep", _R, None),
    ("licenses", _R, "L"),
    ("mail-type", _R, None),
    ("mail-user", _R, None),
    ("mcs-label", _R, None),
    ("mem", _R, None),
    ("mem-bind", _R, None),
    ("mem-per-cpu", _R, None),
    ("mem-per-gpu", _R, None),
    ("mincpus", _R, None),
    ("network", _R, None),
    ("nice", _O, None),
    ("no-kill", _O, "k"),
    ("no-requeue", _N, None),
    ("nodefile", _R, "F"),
    ("nodelist", _R, "w"),
    ("nodes", _R, "N"),
    ("ntasks", _R, "n"),
    ("ntasks-per-core", _R, None),
    ("ntasks-per-gpu", _R, None),
    ("ntasks-per-node", _R, None),
    ("ntasks-per-socket", _R, None),
    ("ntasks-per-tres", _R, None),
    ("open-mode", _R, None),
    ("output", _R, "o"),
    ("overcommit", _N, "O"),
    ("oversubscribe", _N, "s"),
    ("parsable", _N, None),
    ("partition", _R, "p"),
    ("prefer", _R, None),
    ("priority", _R, None),
    ("profile", _R, None),
    ("propagate", _O, None),
    ("qos", _R, "q"),
    ("quiet", _N, "Q"),
    ("reboot", _N, None),
    ("requeue", _N, None),
    ("reservation", _R, None),
    ("segment", _R, None),
    ("signal", _R, None),
    ("sockets-per-node", _R, None),
    ("spread-job", _N, None),
    ("stepmgr", _N, None),
    ("switches", _R, None),
    ("tasks-per-node", _R, None),
    ("test-only", _N, None),
    ("thread-spec", _R, None),
    ("threads-per-core", _R, None),
    ("time", _R, "t"),
    ("time-min", _R, None),
    ("tmp", _R, None),
    ("tres-bind", _R, None),
    ("tres-per-task", _R, None),
    ("uid", _R, None),
    ("use-min-nodes", _N, None),
    ("usage", _N, None),
    ("verbose", _N, "v"),
    ("version", _N, "V"),
    ("wait", _N, "W"),
    ("wait-all-nodes", _R, None),
    ("wckey", _R, None),
    ("wrap", _R, None),
)

# The pyxis plugin's options (github.com/NVIDIA/pyxis, `spank_option` table).
_PYXIS: Final[tuple[tuple[str, ArgKind], ...]] = (
    ("container-image", _R),
    ("container-mounts", _R),
    ("container-workdir", _R),
    ("container-name", _R),
    ("container-save", _R),
    ("container-mount-home", _N),
    ("no-container-mount-home", _N),
    ("container-remap-root", _N),
    ("no-container-remap-root", _N),
    ("container-entrypoint", _N),
    ("no-container-entrypoint", _N),
    ("container-entrypoint-log", _N),
    ("container-writable", _N),
    ("container-readonly", _N),
    ("container-env", _R),
)

# Other sites' SPANK plugins: NERSC Shifter (`--image`, `--module`, `--volume`) and CSCS's
# container engine and user environments (`--environment`, `--uenv`, `--view`). They are
# reported and ignored, like the pyxis options Gryvia does not use.
SITE_PLUGINS: Final[dict[str, str]] = {
    "image": "NERSC Shifter",
    "module": "NERSC Shifter",
    "volume": "NERSC Shifter",
    "environment": "CSCS container engine",
    "uenv": "CSCS uenv",
    "view": "CSCS uenv",
}

# Aliases: same getopt value, so getopt never calls them ambiguous with each other.
_ALIASES: Final[dict[str, str]] = {"tasks-per-node": "ntasks-per-node"}
# Different getopt values but one meaning; reports use the canonical name.
_CANONICAL: Final[dict[str, str]] = {"cluster": "clusters"}


def _build() -> tuple[OptionSpec, ...]:
    specs = [
        OptionSpec(
            name=name,
            arg=arg,
            short=short,
            key=_ALIASES.get(name, name),
            canonical=_CANONICAL.get(name, _ALIASES.get(name, name)),
        )
        for name, arg, short in _CORE
    ]
    specs += [
        OptionSpec(name=name, arg=arg, key=name, canonical=name, plugin=True)
        for name, arg in _PYXIS
    ]
    specs += [
        OptionSpec(name=name, arg=_R, key=name, canonical=name, plugin=True)
        for name in SITE_PLUGINS
    ]
    return tuple(specs)


OPTIONS: Final[tuple[OptionSpec, ...]] = _build()
LONG: Final[dict[str, OptionSpec]] = {spec.name: spec for spec in OPTIONS}
SHORT: Final[dict[str, OptionSpec]] = {spec.short: spec for spec in OPTIONS if spec.short}


def match_long(name: str) -> tuple[OptionSpec | None, list[str]]:
    """Resolve a long option name as glibc `getopt_long` does.

    An exact name wins; otherwise a prefix that matches options which all share one `key` and
    argument kind is accepted (`--out` is `--output`). Returns `(spec, [])` on success, `(None,
    candidates)` when the prefix is ambiguous and `(None, [])` when nothing matches.
    """
    exact = LONG.get(name)
    if exact is not None:
        return exact, []
    if not name:
        return None, []
    found = [spec for spec in OPTIONS if spec.name.startswith(name)]
    if not found:
        return None, []
    identities = {(spec.key, spec.arg) for spec in found}
    if len(identities) == 1:
        return found[0], []
    return None, [spec.name for spec in found]
