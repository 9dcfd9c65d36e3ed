"""Parsers for directive values, each following the Slurm function named in its docstring.

All raise `BadValue` with a human reason; units are stated per function (memory in MiB as
Slurm counts it, times in minutes or seconds as named).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Final

from gryvia_operator.api.gputype import normalize_gpu_type

C_SPACE: Final = " \t\n\v\f\r"
MAX_ARRAY_SIZE: Final = 100_001  # Gryvia's MaxArraySize default (Slurm's is 1001): 0..100000
INT_MAX: Final = 2**31 - 1


class BadValue(ValueError):
    """A directive value Slurm would refuse; the message says why."""


def parse_int(text: str, *, positive: bool = True) -> int:
    """A count as Slurm's `parse_int` reads it (proc_args.c): strtol, no trailing text."""
    match = re.fullmatch(r"[ \t\n\v\f\r]*([+-]?\d+)", text)
    if match is None:
        raise BadValue(f'"{text}" is not a whole number')
    value = int(match.group(1))
    if value < 0 or (positive and value == 0):
        raise BadValue(f'"{text}" must be {"positive" if positive else "zero or more"}')
    if value > INT_MAX:
        raise BadValue(f'"{text}" is too big')
    return value


def _node_number(text: str, whole: str) -> int:
    match = re.fullmatch(r"[ \t\n\v\f\r]*([+-]?\d+)([kKmM]?)[ \t\n\v\f\r]*", text)
    if match is None:
        raise BadValue(f'"{whole}" is not a valid node count')
    value = int(match.group(1))
    suffix = match.group(2).lower()
    value *= {"": 1, "k": 1024, "m": 1024 * 1024}[suffix]
    return value


def parse_node_count(text: str) -> tuple[int, int | None]:
    """`-N n` or `-N min-max` as `verify_node_count` reads it; returns (min, max or None)."""
    if "," in text or ":" in text:
        raise BadValue(
            f'"{text}": node count lists and steps are not supported; give one count or a range'
        )
    if "-" in text[1:] and not text.lstrip(C_SPACE).startswith("-"):
        low_text, _, high_text = text.partition("-")
        low = max(_node_number(low_text, text), 1)
        high = None if not high_text.strip(C_SPACE) else _node_number(high_text, text)
        if high is not None and high < low:
            raise BadValue(f"maximum node count {high} is less than minimum node count {low}")
        return low, high
    value = _node_number(text, text)
    if value < 0:
        raise BadValue(f'"{text}" is not a valid node count')
    return value, value


_TIME_INFINITE: Final = frozenset({"-1", "infinite", "unlimited"})


def _valid_timespec(text: str) -> bool:
    """Slurm parse_time.c `_is_valid_timespec`: digits, at most one '-', at most two ':'."""
    digits = dashes = colons = 0
    in_digit = False
    for char in text:
        if char.isdigit() and char.isascii():
            if not in_digit:
                digits += 1
                in_digit = True
        elif char == "-":
            in_digit = False
            dashes += 1
            if colons:
                return False
        elif char == ":":
            in_digit = False
            colons += 1
        else:
            return False
    if not digits or dashes > 1 or colons > 2:
        return False
    need = {1: 3, 2: 4} if dashes else {1: 2, 2: 3}
    return digits >= need.get(colons, 0)


def parse_time_seconds(text: str) -> int | None:
    """A time limit in seconds as `time_str2secs` reads it; None means no limit.

    Forms (sbatch(1) --time): `minutes`, `minutes:seconds`, `hours:minutes:seconds`,
    `days-hours`, `days-hours:minutes`, `days-hours:minutes:seconds`; `-1`, `INFINITE`,
    `UNLIMITED` (any case) mean no limit.
    """
    if text.lower() in _TIME_INFINITE:
        return None
    if not text or not _valid_timespec(text):
        raise BadValue(
            f'"{text}" is not a time: expected minutes, minutes:seconds, hours:minutes:seconds, '
            "days-hours, days-hours:minutes or days-hours:minutes:seconds"
        )
    numbers = [int(part) if part else 0 for part in re.split(r"[-:]", text)]
    if text.startswith("-"):
        raise BadValue(f'"{text}" is a negative time')
    if "-" in text:
        days, hours, minutes, seconds = [*numbers, 0, 0, 0][:4]
        return days * 86400 + hours * 3600 + minutes * 60 + seconds
    if len(numbers) == 3:
        return numbers[0] * 3600 + numbers[1] * 60 + numbers[2]
    if len(numbers) == 2:
        return numbers[0] * 60 + numbers[1]
    return numbers[0] * 60


def parse_time_limit(text: str) -> int | None:
    """The effective limit in seconds: seconds round up to whole minutes and 0 means none.

    Source: `time_str2mins` ("second values are rounded up to the next minute", sbatch(1) -t)
    and `arg_set_time_limit` (0 becomes INFINITE).
    """
    seconds = parse_time_seconds(text)
    if seconds is None:
        return None
    minutes = (seconds + 59) // 60
    return None if minutes == 0 else minutes * 60


def parse_memory_mb(text: str) -> int:
    """A memory size in MiB as `str_to_mbytes` reads it (proc_args.c; sbatch(1) --mem).

    Default unit MiB; suffixes K, M, G, T in either case, optionally followed by B; all binary.
    K rounds up to whole MiB. Fractions and negative sizes are refused.
    """
    match = re.fullmatch(r"[ \t\n\v\f\r]*\+?(\d+)([kKmMgGtT]?)([bB]?)", text)
    if match is None or (match.group(3) and not match.group(2)):
        raise BadValue(
            f'"{text}" is not a memory size: a whole number with an optional K, M, G or T suffix'
        )
    value = int(match.group(1))
    unit = match.group(2).lower()
    if unit == "k":
        return (value + 1023) // 1024
    return value * {"": 1, "m": 1, "g": 1024, "t": 1024 * 1024}[unit]


@dataclass(frozen=True)
class ArraySpec:
    """A job array: sorted unique indices, the `%N` limit (or None) and the step if regular."""

    indices: tuple[int, ...]
    max_parallel: int | None
    step: int


def parse_array(text: str, max_size: int = MAX_ARRAY_SIZE) -> ArraySpec:
    """`--array` as `slurm_parse_array_tok` and `_valid_array_inx` read it (sbatch(1) -a).

    Items `n`, `a-b`, `a-b:step` separated by commas, optionally in `[...]`, then `%N`.
    """
    body, percent, limit_text = text.partition("%")
    limit: int | None = None
    if percent:
        if not re.fullmatch(r"\d+", limit_text) or int(limit_text) == 0:
            raise BadValue(f'"{text}": Invalid job array specification (bad %limit)')
        limit = int(limit_text)
    if body.startswith("[") and body.endswith("]"):
        body = body[1:-1]
    found: set[int] = set()
    for token in body.split(","):
        if not token:
            continue
        match = re.fullmatch(r"(\d+)(?:-(\d+)(?::(\d+))?)?", token)
        if match is None:
            raise BadValue(f'"{text}": Invalid job array specification ("{token}")')
        first = int(match.group(1))
        last = int(match.group(2)) if match.group(2) else first
        step = int(match.group(3)) if match.group(3) else 1
        if last < first or step <= 0:
            raise BadValue(
                f'"{text}": Invalid job array specification ("{token}"; indices must run '
                "upwards with a positive step)"
            )
        if last >= max_size or step >= max_size:
            raise BadValue(
                f'"{text}": index {max(last, step)} is above this site\'s array limit: indices '
                f"run from 0 to {max_size - 1} (MaxArraySize={max_size}; raise it with the "
                "setting sbatch_max_array_size, env GRYVIA_SBATCH_MAX_ARRAY_SIZE)"
            )
        found.update(range(first, last + 1, step))
    if not found:
        raise BadValue(f'"{text}": Invalid job array specification (no index)')
    indices = tuple(sorted(found))
    steps = {b - a for a, b in pairwise(indices)}
    return ArraySpec(indices, limit, steps.pop() if len(steps) == 1 else 1)


@dataclass(frozen=True)
class GpuRequest:
    """GPUs parsed from `--gres` or a `--gpus*` option: count (None = none), model, other gres."""

    count: int | None
    gpu_type: str | None = None
    others: tuple[str, ...] = field(default_factory=tuple)


_COUNT: Final = re.compile(r"(\d+)([kKmMgGtT]?)")


def _count(text: str) -> int | None:
    match = _COUNT.fullmatch(text)
    if match is None:
        return None
    scale = {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3, "t": 1024**4}
    return int(match.group(1)) * scale[match.group(2).lower()]


def parse_gres(text: str) -> GpuRequest:
    """`--gres=gpu[:type][:count],...` per node (sbatch(1) --gres; `slurm_get_next_tres`).

    Count defaults to 1, a trailing non-numeric field is a type, a zero count drops the entry.
    """
    if text.lower() == "none":
        return GpuRequest(None)
    gpus: GpuRequest | None = None
    others: list[str] = []
    for entry in text.split(","):
        fields = entry.removeprefix("gres/").split(":")
        name = fields[0]
        if not name:
            raise BadValue(f'"{text}": empty generic resource name')
        if name.lower() != "gpu":
            others.append(entry)
            continue
        rest = fields[1:]
        count = 1
        if rest and _count(rest[-1]) is not None:
            count = _count(rest[-1]) or 0
            rest = rest[:-1]
        if len(rest) > 1 or any(not part for part in rest):
            raise BadValue(f'"{entry}" is not gpu[:type][:count]')
        gpu_type = rest[0] if rest else None
        if gpu_type is not None and re.fullmatch(r"[+-]?\d+", gpu_type):
            raise BadValue(f'"{entry}": invalid GPU count "{gpu_type}"')
        if count == 0:
            continue
        if gpus is not None:
            raise BadValue(f'"{text}": more than one GPU entry (mixed GPU models per node)')
        gpus = GpuRequest(count, gpu_type)
    base = gpus or GpuRequest(None)
    return GpuRequest(base.count, base.gpu_type, tuple(others))


def parse_gpu_spec(text: str) -> GpuRequest:
    """`--gpus`, `--gpus-per-node`, `--gpus-per-task`: `[type:]count`; a type alone means 1."""
    entries = [entry for entry in text.split(",") if entry]
    if len(entries) != 1:
        raise BadValue(f'"{text}": one GPU model per job is supported')
    fields = entries[0].removeprefix("gpu:").split(":")
    if len(fields) > 2 or not all(fields):
        raise BadValue(f'"{text}" is not [type:]count')
    if len(fields) == 1:
        count = _count(fields[0])
        if count is None:
            if re.fullmatch(r"[+-]?\d+", fields[0]):
                raise BadValue(f'"{text}": invalid GPU count')
            return GpuRequest(1, fields[0])
        return GpuRequest(count or None)
    count = _count(fields[1])
    if count is None:
        raise BadValue(f'"{text}": invalid GPU count "{fields[1]}"')
    return GpuRequest(count or None, fields[0])


@dataclass(frozen=True)
class ExportSpec:
    """`--export`: whether the submit environment would pass (`ALL`), explicit values, names."""

    propagate_all: bool
    values: dict[str, str]
    inherited: tuple[str, ...]


_ENV_NAME: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def parse_export(text: str) -> ExportSpec:
    """`--export=ALL|NONE|[ALL,]NAME[=value],...` (sbatch(1) --export)."""
    propagate_all = False
    values: dict[str, str] = {}
    inherited: list[str] = []
    last: str | None = None
    for token in text.split(","):
        upper = token.upper()
        if upper in ("ALL", "NONE", "NIL"):
            propagate_all = propagate_all or upper == "ALL"
            last = None
            continue
        name, has_value, value = token.partition("=")
        if has_value and _ENV_NAME.fullmatch(name):
            values[name] = value
            last = name
        elif not has_value and _ENV_NAME.fullmatch(name):
            inherited.append(name)
            last = None
        elif last is not None:  # a comma inside a value: `A=x,y`
            values[last] += "," + token
        else:
            raise BadValue(f'"{token}" is not NAME or NAME=value')
    return ExportSpec(propagate_all, values, tuple(inherited))


_GPU_MODEL: Final = re.compile(
    r"(nvidia[-_]?)?(tesla[-_]?)?"
    r"(gh200|gb200|h100|h200|h800|b100|b200|a100|a800|a40|a30|a16|a10g?|a2|l40s?|l4|t4|"
    r"v100s?|p100|p40|p4|k80|rtx[-_]?a?\d{4}(ada)?|a\d{4}|mi\d{3}[a-z]?|titan[a-z]*)"
    r"([-_].*)?",
    re.IGNORECASE,
)


def is_gpu_model(feature: str) -> bool:
    """True when a node feature names a GPU model (h100, a100_80gb, tesla_v100, ...)."""
    return _GPU_MODEL.fullmatch(feature) is not None


def constraint_gpu_type(text: str) -> str | None:
    """The GPU model a `--constraint` pins, or None (sbatch(1) -C; see README §6).

    Only a single feature or an AND (`&`, `,`) of features of which exactly one is a GPU
    model counts; any OR (`|`, `[...]`) means no single model.
    """
    if "|" in text or "[" in text:
        return None
    features = [re.sub(r"\*\d+$", "", part.strip("() ")) for part in re.split(r"[&,]", text)]
    models = {feature for feature in features if feature and is_gpu_model(feature)}
    return models.pop() if len(models) == 1 else None


def normalise_gpu_type(raw: str) -> str:
    """Gryvia's GPU type for a Slurm model name, by the contract's one rule
    (`api.gputype.normalize_gpu_type`): `h100` -> `H100`, `a100` -> the family `A100` (any
    variant), `a100_80gb` -> `A100-80G`, `h200` -> `H200`, `l40s` -> `L40S` (not `L40`),
    `nvidia_h100_80gb_hbm3_3g.40gb` -> `H100-MIG-3G.40GB`."""
    return normalize_gpu_type(raw)


def format_timeout(seconds: int) -> str:
    """Gryvia's `timeout` string for whole minutes: `90m` -> `1h30m`, `1d12h`, `45m`."""
    minutes = seconds // 60
    days, minutes = divmod(minutes, 1440)
    hours, minutes = divmod(minutes, 60)
    parts = (f"{days}d" * bool(days), f"{hours}h" * bool(hours), f"{minutes}m" * bool(minutes))
    return "".join(parts) or "0m"


def render_memory(size: int) -> str:
    """A Kubernetes quantity for a byte count: `32Gi`, `24000Mi`."""
    for unit, scale in (("Ti", 1024**4), ("Gi", 1024**3), ("Mi", 1024**2), ("Ki", 1024)):
        if size % scale == 0:
            return f"{size // scale}{unit}"
    return str(size)


def kubernetes_name(name: str, max_length: int = 54) -> str:
    """An RFC 1123 label that also starts with a letter (the operator derives a Service name,
    an RFC 1035 label, from it): lower case, other characters become single `-`."""
    cleaned = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "sbatch-job"
    if not cleaned[0].isalpha():
        cleaned = f"job-{cleaned}"
    return cleaned[:max_length].rstrip("-")
