"""Which command lines the start-up fast path (`cli.fastpath`) runs itself, and that what it
prints is what the Typer command prints (same fake access layer, same session)."""

from __future__ import annotations

import pytest

from gryvia_cli.cli.fastpath import FastArgs, parse, run_fast


def test_the_plain_forms_of_list_jobs_are_parsed_as_click_would() -> None:
    args = parse(
        ["--context", "c", "-n", "root-ns", "ls", "job", "-A", "-o", "wide", "-l", "a=b", "-v"],
        {},
    )
    assert args == FastArgs(
        context="c",
        root_namespace="root-ns",
        output="wide",
        selector="a=b",
        all_namespaces=True,
        verbose=True,
    )
    later = parse(["list", "jobs", "--namespace=x", "-n", "y", "--output=json", "--no-color"], {})
    assert later is not None
    assert (later.namespace, later.output, later.no_color) == ("y", "json", True)
    hoisted = parse(["list", "--kubeconfig", "k", "jobs", "--context=c"], {})
    assert hoisted is not None and (hoisted.kubeconfig, hoisted.context) == ("k", "c")


@pytest.mark.parametrize(
    "argv",
    [
        ["list", "jobs", "--help"],
        ["list", "jobs", "-h"],
        ["list", "jobs", "sweep"],  # a job array: an argument
        ["list", "jobs", "-w"],
        ["list", "jobs", "--phase", "Running"],
        ["list", "jobs", "--mine"],
        ["list", "jobs", "-o", "jsonpath={.items}"],
        ["list", "jobs", "-o", "bogus"],  # Typer words the usage error
        ["list", "jobs", "-ojson"],
        ["list", "jobs", "-o=json"],
        ["list", "jobs", "-n"],  # a missing value
        ["list", "-n", "x", "jobs"],  # `list` has no -n: a usage error
        ["list", "-A", "jobs"],
        ["list", "nodes"],
        ["list"],
        ["status"],
        ["-A", "list", "jobs"],  # -A is no global option
        ["list", "jobs", "--", "-A"],
        ["--kubeconfig=", "list", "jobs"],
        [],
    ],
)
def test_every_other_command_line_goes_to_the_typer_app(argv: list[str]) -> None:
    assert parse(argv, {}) is None


def test_tui_and_its_options_are_parsed_as_click_would() -> None:
    args = parse(["--kubeconfig", "k", "-n", "root-ns", "tui", "-A", "--readonly", "-n", "x"], {})
    assert args == FastArgs(
        command="tui",
        kubeconfig="k",
        root_namespace="root-ns",
        namespace="x",
        all_namespaces=True,
        readonly=True,
    )
    assert parse(["tui", "--context=c", "--no-color"], {}) == FastArgs(
        command="tui", context="c", no_color=True
    )


@pytest.mark.parametrize(
    "argv",
    [
        ["tui", "--help"],
        ["tui", "-o", "json"],  # no such option of tui: Click's usage error
        ["tui", "-l", "a=b"],
        ["tui", "jobs"],
        ["--readonly", "tui"],  # a command's flag before the command
        ["list", "jobs", "--readonly"],
    ],
)
def test_other_tui_lines_go_to_the_typer_app(argv: list[str]) -> None:
    assert parse(argv, {}) is None


def test_tui_runs_the_console_with_the_session_the_typer_command_would_build(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import gryvia_cli.tui

    seen: list[dict[str, object]] = []
    monkeypatch.setattr(gryvia_cli.tui, "run", lambda **kw: seen.append(kw))
    monkeypatch.setenv("GRYVIA_NAMESPACE", "from-env")
    monkeypatch.delenv("GRYVIA_CONTEXT", raising=False)
    assert run_fast(["--kubeconfig", "/k", "tui", "--readonly"]) == 0
    assert run_fast(["tui", "-A", "-n", "mine"]) == 0
    assert seen == [
        {
            "kubeconfig": "/k",
            "context": None,
            "namespace": "from-env",
            "all_namespaces": False,
            "readonly": True,
        },
        {
            "kubeconfig": None,
            "context": None,
            "namespace": "mine",
            "all_namespaces": True,
            "readonly": False,
        },
    ]


def test_output_and_verbose_from_the_environment_go_to_the_typer_app() -> None:
    assert parse(["list", "jobs"], {"GRYVIA_OUTPUT": "json"}) is None
    assert parse(["list", "jobs"], {"GRYVIA_VERBOSE": "1"}) is None
    assert parse(["list", "jobs"], {"GRYVIA_CONTEXT": "c"}) == FastArgs()


def test_the_table_is_printed_page_by_page_with_widths_per_page(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Pages of two jobs (PAGE_SIZE patched): one header, every job once, and the rows of each
    page laid out on their own, as kubectl lays out each chunk; a --phase filter that keeps
    nothing prints no table."""
    from gryvia_cli.views import joblist
    from tests.unit.cli.fakes import FakeAccess
    from tests.unit.cli.helpers import make_job, run, stamp

    monkeypatch.setattr(joblist, "PAGE_SIZE", 2)
    names = ["a", "b", "a-much-longer-name", "c", "d"]
    fake = FakeAccess(*(stamp(make_job(n).gpus(1).gpu_type("H100").obj(), 60) for n in names))
    lines = run(["list", "jobs"], fake).output.splitlines()
    assert [line.split()[0] for line in lines] == ["NAME", *names]
    gap = [line.index(" - ") for line in lines[1:]]  # where the USER column starts
    assert gap[0] == gap[1] == gap[4] < gap[2] == gap[3]  # pages: a b | a-much... c | d
    pending = run(["list", "jobs", "--phase", "Pending"], fake).output.splitlines()
    assert len(pending) == 1 + len(names)
    none = run(["list", "jobs", "--phase", "Running"], fake).output
    assert none == "No jobs found in namespace ml.\n"
