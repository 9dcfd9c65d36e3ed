"""Value parsers follow Slurm's: time, memory, counts, arrays, GPUs, export, names."""

from __future__ import annotations

import pytest

from gryvia_cli.sbatch.values import (
    BadValue,
    constraint_gpu_type,
    format_timeout,
    kubernetes_name,
    normalise_gpu_type,
    parse_array,
    parse_export,
    parse_gpu_spec,
    parse_gres,
    parse_int,
    parse_memory_mb,
    parse_node_count,
    parse_time_limit,
    render_memory,
)

# ---------------------------------------------------------------- time (sbatch(1) -t)


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("90", 5400),  # minutes
        ("45:00", 2700),  # minutes:seconds
        ("10:30", 660),  # rounds up to whole minutes
        ("3:00", 180),
        ("0:30", 60),
        ("12:00:00", 43200),  # hours:minutes:seconds
        ("48:0:00", 172800),
        ("72:00:00", 259200),
        ("1-12", 129600),  # days-hours
        ("0-06:00", 21600),  # days-hours:minutes
        ("2-00:00:00", 172800),  # days-hours:minutes:seconds
        ("1-0:0:1", 86460),
        ("0", None),  # zero means no limit
        ("-1", None),
        ("INFINITE", None),
        ("unlimited", None),
        ("UNLIMITED", None),
    ],
)
def test_time_limits_in_every_slurm_form(text: str, seconds: int | None) -> None:
    assert parse_time_limit(text) == seconds


@pytest.mark.parametrize("text", ["24h", "1:2:3:4", "1-2-3", "5:", ":5", "1:-5", "", "1.5", "-5"])
def test_invalid_times_are_refused(text: str) -> None:
    with pytest.raises(BadValue):
        parse_time_limit(text)


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(60, "1m"), (5400, "1h30m"), (2700, "45m"), (43200, "12h"), (129600, "1d12h"),
     (172800, "2d"), (90060, "1d1h1m")],
)  # fmt: skip
def test_timeout_strings(seconds: int, text: str) -> None:
    assert format_timeout(seconds) == text


# ---------------------------------------------------------------- memory (str_to_mbytes)


@pytest.mark.parametrize(
    ("text", "mib"),
    [("4096", 4096), ("16G", 16384), ("16GB", 16384), ("64000MB", 64000), ("8g", 8192),
     ("20Gb", 20480), ("1T", 1048576), ("1024K", 1), ("1025K", 2), ("24000M", 24000),
     ("0", 0)],
)  # fmt: skip
def test_memory_units(text: str, mib: int) -> None:
    assert parse_memory_mb(text) == mib


@pytest.mark.parametrize("text", ["1.5G", "-1G", "4 GiB", "G", "8X", "B", "10B"])
def test_invalid_memory_is_refused(text: str) -> None:
    with pytest.raises(BadValue):
        parse_memory_mb(text)


def test_render_memory() -> None:
    assert render_memory(32 * 2**30) == "32Gi"
    assert render_memory(24000 * 2**20) == "24000Mi"
    assert render_memory(2**40) == "1Ti"


# ---------------------------------------------------------------- counts


def test_counts() -> None:
    assert parse_int("4") == 4
    assert parse_int(" +4") == 4
    for bad in ("0", "-1", "four", "4x", "", "1e3", "99999999999"):
        with pytest.raises(BadValue):
            parse_int(bad)
    assert parse_int("0", positive=False) == 0


@pytest.mark.parametrize(
    ("text", "nodes"),
    [("4", (4, 4)), ("2-4", (2, 4)), ("2-", (2, None)), ("1k", (1024, 1024)), ("0", (0, 0))],
)
def test_node_counts(text: str, nodes: tuple[int, int | None]) -> None:
    assert parse_node_count(text) == nodes


@pytest.mark.parametrize("text", ["NUM_NODES", "two", "4-2", "-3", "2,4", "1-4:2", ""])
def test_invalid_node_counts(text: str) -> None:
    with pytest.raises(BadValue):
        parse_node_count(text)


# ---------------------------------------------------------------- arrays


@pytest.mark.parametrize(
    ("text", "indices", "limit", "step"),
    [
        ("0-9%2", list(range(10)), 2, 1),
        ("0-15:4", [0, 4, 8, 12], None, 4),
        ("10-20:4", [10, 14, 18], None, 4),
        ("1,3,7-9", [1, 3, 7, 8, 9], None, 1),
        ("[0-3]%1", [0, 1, 2, 3], 1, 1),
        ("5", [5], None, 1),
        ("3,1,3", [1, 3], None, 2),
        ("0-1000", list(range(1001)), None, 1),
    ],
)
def test_array_specs(text: str, indices: list[int], limit: int | None, step: int) -> None:
    spec = parse_array(text)
    assert list(spec.indices) == indices
    assert spec.max_parallel == limit
    assert spec.step == step


@pytest.mark.parametrize("text", ["abc", "$IDX", "5-1", "0-9%0", "0-9%x", "1-5:0", ""])
def test_invalid_array_specs(text: str) -> None:
    with pytest.raises(BadValue, match="Invalid job array specification"):
        parse_array(text)


# ---------------------------------------------------------------- GPUs


@pytest.mark.parametrize(
    ("text", "count", "model"),
    [
        ("gpu", 1, None),
        ("gpu:2", 2, None),
        ("gpu:a100:8", 8, "a100"),
        ("gpu:A4000:1", 1, "A4000"),
        ("gpu:a100", 1, "a100"),
        ("gres/gpu:4", 4, None),
        ("gpu:0", None, None),
        ("none", None, None),
        ("gpu:1g.10gb:1", 1, "1g.10gb"),
    ],
)
def test_gres(text: str, count: int | None, model: str | None) -> None:
    gres = parse_gres(text)
    assert (gres.count, gres.gpu_type) == (count, model)


def test_gres_keeps_other_resources_aside() -> None:
    gres = parse_gres("gpu:2,gpumem:20g")
    assert (gres.count, gres.others) == (2, ("gpumem:20g",))


@pytest.mark.parametrize("text", ["gpu:-1", "gpu:a:b:2", "gpu:a100:1,gpu:v100:1", ":2"])
def test_invalid_gres(text: str) -> None:
    with pytest.raises(BadValue):
        parse_gres(text)


@pytest.mark.parametrize(
    ("text", "count", "model"),
    [("4", 4, None), ("h100:8", 8, "h100"), ("l40s", 1, "l40s"), ("0", None, None)],
)
def test_gpu_specs(text: str, count: int | None, model: str | None) -> None:
    spec = parse_gpu_spec(text)
    assert (spec.count, spec.gpu_type) == (count, model)


@pytest.mark.parametrize("text", ["-1", "a100:x", "a100:1,v100:1", "a:b:c"])
def test_invalid_gpu_specs(text: str) -> None:
    with pytest.raises(BadValue):
        parse_gpu_spec(text)


@pytest.mark.parametrize(
    ("raw", "gryvia"),
    [("h100", "H100"), ("H100_SXM5", "H100"), ("nvidia_h100_80gb", "H100"), ("a100", "A100"),
     ("a100_80gb", "A100-80G"), ("A100-SXM4-80GB", "A100-80G"), ("a100-40g", "A100-40G"),
     ("l40", "L40"), ("a10", "A10"), ("tesla_t4", "T4"), ("v100-32gb", "V100"),
     ("l40s", "L40S"), ("h200", "H200"), ("A4000", "A4000"), ("a10g", "A10G"), ("b200", "B200"),
     ("rtx_a6000", "RTX-A6000"), ("nvidia_a40", "A40"), ("l4", "L4")],
)  # fmt: skip
def test_gpu_types_normalise_to_gryvia_names(raw: str, gryvia: str) -> None:
    assert normalise_gpu_type(raw) == gryvia


@pytest.mark.parametrize(
    ("constraint", "model"),
    [("h100", "h100"), ("a100&ib", "a100"), ("ib,a100_80gb", "a100_80gb"), ("a100|h100", None),
     ("[a100|h100]", None), ("ib&infiniband", None), ("a100&h100", None), ("h100*2", "h100")],
)  # fmt: skip
def test_gpu_model_from_a_constraint(constraint: str, model: str | None) -> None:
    assert constraint_gpu_type(constraint) == model


# ---------------------------------------------------------------- export, names


def test_export() -> None:
    spec = parse_export("ALL,OMP_NUM_THREADS=8,PATHS=/a,/b,HOME")
    assert spec.propagate_all
    assert spec.values == {"OMP_NUM_THREADS": "8", "PATHS": "/a,/b"}
    assert spec.inherited == ("HOME",)
    spec = parse_export("NONE")
    assert (spec.propagate_all, spec.values) == (False, {})
    assert parse_export("ALL,HOME").inherited == ("HOME",)
    with pytest.raises(BadValue):
        parse_export("=x")


@pytest.mark.parametrize(
    ("name", "k8s"),
    [("resnet-ft", "resnet-ft"), ("LLaMA 70B fine_tune", "llama-70b-fine-tune"),
     ("01-single-gpu-basic.sh", "job-01-single-gpu-basic-sh"), ("---", "sbatch-job"),
     ("", "sbatch-job"), ("a" * 80, "a" * 54)],
)  # fmt: skip
def test_kubernetes_names(name: str, k8s: str) -> None:
    assert kubernetes_name(name) == k8s
