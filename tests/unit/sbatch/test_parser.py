"""The parser follows sbatch's lexical rules: file checks, directive block, words, getopt."""

from __future__ import annotations

import pytest

from gryvia_cli.sbatch.model import Severity
from gryvia_cli.sbatch.parser import parse_script, split_words
from tests.unit.sbatch.helpers import codes, convert, make_script, parse, sbatch, values

# ---------------------------------------------------------------- file checks (sbatch.c)


@pytest.mark.parametrize(
    ("data", "code", "line"),
    [
        (b"", "empty-script", 1),
        (b"  \n\t\n", "empty-script", 1),
        (b"# nightly job\n#SBATCH -N 1\necho\n", "missing-shebang", 1),
        (b"\n#!/bin/bash\necho\n", "missing-shebang", 1),
        (b" #!/bin/bash\necho\n", "missing-shebang", 1),
        (b"#!/bin/bash\n#SBATCH -N 1\r\necho\r\n", "dos-line-endings", 2),
        (b"#!/bin/bash\r\necho\n", "dos-line-endings", 1),
        (b"#!/bin/bash\necho \0\n", "nul-byte", 2),
        (b"#!/bin/bash\necho \xff\n", "not-utf8", 2),
        (b"#!\necho\n", "missing-interpreter", 1),
    ],
)
def test_sbatch_refuses_the_file(data: bytes, code: str, line: int) -> None:
    parsed = parse_script(data, "x.sh")
    errors = [i for i in parsed.issues if i.severity is Severity.ERROR]
    assert [(e.code, e.line) for e in errors] == [(code, line)]
    assert convert(data).jobs == ()


def test_shebang_with_space_and_repeated_shebang_are_fine() -> None:
    data = b"#! /bin/bash\n#!/bin/bash\n#SBATCH -N 2\necho\n"
    parsed = parse_script(data, "x.sh")
    assert parsed.ok
    assert values(parsed) == {"nodes": "2"}


def test_a_lone_carriage_return_is_not_a_dos_line_break_but_is_a_blank() -> None:
    assert parse_script(b"#!/bin/bash\n#SBATCH -J a\necho a\rb\n", "x.sh").ok
    parsed = parse_script(b"#!/bin/bash\n#SBATCH -J a\rb\n", "x.sh")
    assert [i.directive for i in parsed.issues] == ["b"]


# ---------------------------------------------------------------- which lines are directives


@pytest.mark.parametrize(
    "line",
    ["##SBATCH -N 4", "# SBATCH -N 4", "#SBATCh -N 4", "#sSBATCH -N 4", "#BATCH -N 4",
     "   #SBATCH -N 4", "\t#SBATCH -N 4", "#sbatch -N 4"],
)  # fmt: skip
def test_only_sbatch_in_column_one_counts(line: str) -> None:
    parsed = parse_script(make_script(line, "#SBATCH -J x"), "x.sh")
    assert values(parsed) == {"job-name": "x"}


@pytest.mark.parametrize("line", ["# SBATCH -N 4", "#SBATCh -N 4", "   #SBATCH -N 4"])
def test_look_alike_prefixes_warn(line: str) -> None:
    parsed = parse_script(make_script(line), "x.sh")
    assert codes(parsed.issues) == ["look-alike-directive"]
    assert parsed.issues[0].line == 2


def test_a_double_hash_is_a_deliberately_disabled_directive() -> None:
    assert parse_script(make_script("##SBATCH -N 4"), "x.sh").issues == ()


def test_blank_lines_and_comments_do_not_end_the_block() -> None:
    data = make_script("#SBATCH -J a", "", "# a comment", "   ", "#SBATCH -N 3")
    assert values(parse_script(data, "x.sh")) == {"job-name": "a", "nodes": "3"}


def test_directives_after_the_first_command_are_ignored_with_a_warning() -> None:
    data = make_script("#SBATCH -N 2", "set -e", "#SBATCH -N 8", "#SBATCH --mem=1G")
    parsed = parse_script(data, "x.sh")
    assert values(parsed) == {"nodes": "2"}
    assert parsed.first_command_line == 3
    warnings = [(i.code, i.line) for i in parsed.issues]
    # one warning for all of them (a heredoc writing another script has dozens: issue 39, 6)
    assert warnings == [("directives-after-first-command", 4)]
    assert "line 3" in parsed.issues[0].message
    assert "and 1 more #SBATCH line(s) after it" in parsed.issues[0].message


def test_a_directive_broken_onto_a_second_line_is_a_command() -> None:
    data = make_script("#SBATCH --nodes=2 \\", "--ntasks=2", "#SBATCH -J late")
    parsed = parse_script(data, "x.sh")
    assert parsed.first_command_line == 3
    assert "job-name" not in values(parsed)


def test_the_legacy_slurm_prefix_is_accepted_with_a_warning() -> None:
    parsed = parse_script(make_script("#SLURM -N 2"), "x.sh")
    assert values(parsed) == {"nodes": "2"}
    assert codes(parsed.issues) == ["deprecated-slurm-prefix"]


def test_a_bare_sbatch_line_contributes_nothing() -> None:
    parsed = parse_script(make_script("#SBATCH", "#SBATCH   ", "#SBATCH -N 2"), "x.sh")
    assert parsed.ok
    assert values(parsed) == {"nodes": "2"}


# ---------------------------------------------------------------- words


@pytest.mark.parametrize(
    ("rest", "words"),
    [
        (' --job-name="llama finetune"', ["--job-name=llama finetune"]),
        (" --job-name='a b'c", ["--job-name=a bc"]),
        (r" --job-name=llama\ finetune", ["--job-name=llama finetune"]),
        (" --time=02:00:00#cap", ["--time=02:00:00"]),
        (" --time=02:00:00 # twelve hours", ["--time=02:00:00"]),
        (' --comment="a#b" -N 2', ["--comment=a#b", "-N", "2"]),
        ("\t-N\t2  -n 4", ["-N", "2", "-n", "4"]),
        (" --job-name=$USER-${SLURM_JOB_ID}", ["--job-name=$USER-${SLURM_JOB_ID}"]),
        (r" --comment=\"x\"", ['--comment="x"']),
    ],
)
def test_words_split_like_sbatch(rest: str, words: list[str]) -> None:
    assert split_words(rest, 2) == (words, [])


def test_an_empty_word_ends_the_line_with_a_warning() -> None:
    words, issues = split_words(' -J "" -N 2', 2)
    assert words == ["-J"]
    assert codes(issues) == ["empty-word"]


def test_an_unmatched_quote_is_an_error() -> None:
    parsed = parse('--job-name="oops')
    assert codes(parsed.issues) == ["unmatched-quote"]
    assert parsed.issues[0].line == 2


def test_values_are_literal_text() -> None:
    assert values(parse("--job-name=run-$(date)", "--chdir=~/x")) == {
        "job-name": "run-$(date)",
        "chdir": "~/x",
    }


# ---------------------------------------------------------------- getopt


@pytest.mark.parametrize(
    "spelling",
    [["--nodes=2"], ["--nodes 2"], ["-N2"], ["-N 2"], ["-N", "2"], ["--nodes", "2"]],
)
def test_every_option_form_is_the_same(spelling: list[str]) -> None:
    assert values(parse(*spelling)) == {"nodes": "2"}


def test_several_options_per_line() -> None:
    assert values(parse("-N 2 -n 4 --time=10 -J x")) == {
        "nodes": "2",
        "ntasks": "4",
        "time": "10",
        "job-name": "x",
    }


def test_unambiguous_abbreviations_are_accepted() -> None:
    parsed = parse("--out=o.txt", "--tasks=4", "--cpus-per-t 8", "--exclusiv")
    assert values(parsed) == {
        "output": "o.txt",
        "ntasks-per-node": "4",
        "cpus-per-task": "8",
        "exclusive": None,
    }


@pytest.mark.parametrize(
    "word", ["--cpus-per=2", "--ti=5", "--mem-per=1G", "--clus=a", "--node=2", "--exc"]
)
def test_ambiguous_abbreviations_are_errors(word: str) -> None:
    parsed = parse(word)
    assert codes(parsed.issues) == ["invalid-directive"]
    assert "ambiguous" in parsed.issues[0].message


def test_aliases_resolve_to_the_canonical_option() -> None:
    parsed = parse("--tasks-per-node=4")
    assert parsed.directives[0].key == "ntasks-per-node"
    assert parsed.directives[0].directive == "--ntasks-per-node"


def test_the_later_value_wins() -> None:
    parsed = parse("-t 30", "--time=45")
    assert parsed.last("time") is not None
    assert parsed.last("time").value == "45"  # type: ignore[union-attr]


def test_a_stray_word_is_an_invalid_directive_with_its_line() -> None:
    parsed = parse("-N 2", "--job-name=llama finetune", "--mem=1G")
    assert [(i.code, i.line, i.directive) for i in parsed.issues] == [
        ("invalid-directive", 3, "finetune")
    ]
    assert "Invalid directive found in batch script: finetune" in parsed.issues[0].message
    assert "mem" not in values(parsed)  # getopt stopped at the stray word


def test_a_unicode_minus_is_a_stray_word() -> None:
    parsed = parse("\u2212\u2212nodes=1")
    assert codes(parsed.issues) == ["invalid-directive"]


def test_flags_take_no_argument() -> None:
    assert values(parse("--hold", "-H", "--requeue")) == {"hold": None, "requeue": None}
    parsed = parse("--hold=yes")
    assert "doesn't allow an argument" in parsed.issues[0].message


def test_optional_arguments_need_an_equals_sign() -> None:
    assert values(parse("--exclusive=user")) == {"exclusive": "user"}
    parsed = parse("--exclusive user")
    assert [i.directive for i in parsed.issues] == ["user"]


def test_a_required_argument_is_taken_from_the_next_word_even_on_the_next_line() -> None:
    parsed = parse("--job-name", "--nodes=2")
    assert values(parsed) == {"job-name": "--nodes=2"}


def test_a_missing_required_argument_is_an_error() -> None:
    assert "requires an argument" in parse("-N 1", "--time").issues[0].message
    assert "requires an argument" in parse("-N").issues[0].message


def test_short_option_clusters_and_optional_short_arguments() -> None:
    assert values(parse("-HO", "-kno")) == {"hold": None, "overcommit": None, "no-kill": "no"}


@pytest.mark.parametrize(
    ("word", "text"),
    [("-Z", "invalid option -- 'Z'"), ("--foo=1", "unrecognized option '--foo'")],
)
def test_unknown_options_are_errors(word: str, text: str) -> None:
    parsed = parse(word)
    assert codes(parsed.issues) == ["invalid-directive"]
    assert text in parsed.issues[0].message


def test_double_dash_ends_the_options() -> None:
    assert parse("-N 2 --").ok
    parsed = parse("-N 2 -- extra")
    assert [i.directive for i in parsed.issues] == ["extra"]


def test_pyxis_options_are_known() -> None:
    assert values(parse("--container-image=nvcr.io/nvidia/pytorch:24.05-py3")) == {
        "container-image": "nvcr.io/nvidia/pytorch:24.05-py3"
    }


def test_nothing_is_produced_when_any_directive_is_invalid() -> None:
    conversion = convert(sbatch("-N 2", "--bogus", "--gres=gpu:1"))
    assert conversion.jobs == ()
    assert conversion.report["outcome"] == "reject"
    assert conversion.report["errors"][0]["line"] == 3


# ---------------------------------------------------------------- heterogeneous jobs


def test_hetjob_separators_are_refused_as_unsupported() -> None:
    parsed = parse("-N 1", "hetjob", "-N 2")
    assert [(i.code, i.line, i.directive) for i in parsed.issues] == [
        ("heterogeneous-job", 3, "hetjob")
    ]
    assert values(parsed) == {"nodes": "1"}


def test_a_colon_separator_is_a_heterogeneous_job() -> None:
    parsed = parse("-N 1 : -N 2")
    assert codes(parsed.issues) == ["heterogeneous-job"]


def test_slurm_takes_any_line_mentioning_hetjob_as_a_separator() -> None:
    parsed = parse("--job-name=hetjob-test")
    assert "heterogeneous-job" in codes(parsed.issues)
    assert "containing 'hetjob'" in parsed.issues[0].message
