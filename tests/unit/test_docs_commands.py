"""Docs that cannot lie: every `gryvia ...` command line in README.md, docs/ and examples/ (in
code blocks and inline code) and in the FAQ Gryvia follows names commands and options that
exist in the real command tree, and every Gryvia manifest in a doc's YAML block validates
with no error and no warning (an unknown field is one).

The checker walks the Typer/click tree the way the CLI parses it: group words pick
subcommands, `-x`/`--xyz` must be options of the command they follow (global options of the
root too); placeholders in capitals (`JOB`) and `<...>` stand for arguments. Commands that take
free arguments (`gryvia gpu`) accept any words after them. docs/cli.md is generated from the
same tree and docs/reference/crds.md from the models, so both are skipped.
"""

from __future__ import annotations

import functools
import re
import shlex
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer
import yaml

from gryvia_cli.main import app

ROOT = Path(__file__).resolve().parents[2]
GENERATED = {ROOT / "docs" / "cli.md", ROOT / "docs" / "reference" / "crds.md"}
DOCS = sorted(
    p
    for p in [ROOT / "README.md", *ROOT.glob("docs/**/*.md"), *ROOT.glob("examples/**/*.md")]
    if p not in GENERATED
)
YAML_FILES = sorted([*ROOT.glob("docs/**/*.yaml"), *ROOT.glob("examples/**/*.yaml")])
"""The example files (docs/examples, examples/ and the demo's manifests)."""
FAQ_COMMANDS = (
    # The command lines of the public FAQ Gryvia follows, as it writes them ("every command the
    # FAQ shows must work as written"), copied here: the suite reads nothing outside the clone.
    "gryvia validate job.yaml",
    "gryvia submit --file job.yaml",
    "gryvia status my-job",
    "gryvia logs my-job --follow",
    "gryvia quota my-team",
    "gryvia quota my-team --budget",
    "gryvia delete job my-job --yes",
    "gryvia gpu training --job my-job",
    "gryvia gpu nccl --job my-job",
    "gryvia health gpu",
    'gryvia tenant create ml-research --display-name "ML Research Team" --allowed-sku a100-80g '
    "--max-gpus 128 --isolated true",
    "gryvia tenant list",
    "gryvia queue",
    "gryvia capacity",
    "gryvia list nodes",
    "gryvia logs my-job --tail 100",
    "gryvia submit --sbatch job.sh --image IMAGE",
)
_INLINE = re.compile(r"`(gryvia [^`]+)`")
_FENCE = re.compile(r"^\s*```")


def command_lines(text: str) -> Iterator[tuple[int, str]]:
    """(line number, command) of each `gryvia ...` line in fenced blocks (a trailing `\\`
    joins the next line; `$ ` prompts, pipes, redirections and comments cut) and in inline
    code spans of prose."""
    lines = text.splitlines()
    fenced, i = False, 0
    while i < len(lines):
        number, line = i + 1, lines[i]
        if _FENCE.match(line):
            fenced = not fenced
        elif fenced:
            while line.rstrip().endswith("\\") and i + 1 < len(lines):
                i += 1
                line = line.rstrip()[:-1] + " " + lines[i].strip()
            text_part = line.strip().removeprefix("$ ")
            if text_part.startswith("gryvia "):
                yield number, re.split(r"\s(?:\||&&|;|>|2>|#)\s?", text_part)[0].strip()
        else:
            for match in _INLINE.finditer(line):
                yield number, match.group(1).strip()
        i += 1


def _option(command: Any, word: str) -> Any | None:
    name = word.split("=", 1)[0]
    for param in command.params:
        if getattr(param, "param_type_name", "") == "option" and (
            name in param.opts or name in param.secondary_opts
        ):
            return param
    return None


@functools.cache
def _root() -> Any:
    return typer.main.get_command(app)


def problem_of(line: str) -> str | None:
    """Why `line` does not parse against the real command tree; None when it does."""
    try:
        words = shlex.split(line)[1:]
    except ValueError:
        return None  # not a whole command (a fragment in prose)
    command: Any = _root()
    ctx = command.make_context("gryvia", [], resilient_parsing=True)
    path = ["gryvia"]
    while words:
        word = words[0].removeprefix("[").removesuffix("]")  # `[--flag VALUE]`: optional
        if word == "--":
            return None
        if hasattr(command, "get_command") and not word.startswith("-"):
            if "|" in word:  # `create|list|get`: a summary of subcommands, each must exist
                missing = [w for w in word.split("|") if command.get_command(ctx, w) is None]
                return f"no command {missing[0]!r} in `{' '.join(path)}`" if missing else None
            sub = command.get_command(ctx, word)
            if sub is None:
                if word.isupper() or word.startswith(("<", "[")) or word == "...":
                    return None
                return f"no command {word!r} in `{' '.join(path)}`"
            path.append(word)
            command, words = sub, words[1:]
            ctx = type(ctx)(command, parent=ctx, info_name=word, resilient_parsing=True)
            continue
        if command.context_settings.get("ignore_unknown_options"):
            return None  # it takes free arguments (`gryvia gpu training --job J`)
        if word.startswith("-") and len(word) > 1 and not word[1].isdigit():
            if word in ("-h", "--help"):
                return None
            option = _option(command, word)
            if option is None:
                return f"no option {word.split('=', 1)[0]} in `{' '.join(path)}`"
            takes_value = not option.is_flag and not option.count and "=" not in word
            words = words[2:] if takes_value else words[1:]
            continue
        words = words[1:]
    return None


def _doc_lines() -> list[tuple[str, str]]:
    out = []
    for path in DOCS:
        for number, line in command_lines(path.read_text(encoding="utf-8")):
            out.append((f"{path.relative_to(ROOT)}:{number}", line))
    return out


DOC_LINES = _doc_lines()


def test_the_docs_show_many_commands() -> None:
    assert len(DOC_LINES) > 150, "the extraction found too few command lines"


@pytest.mark.parametrize(("where", "line"), DOC_LINES, ids=[w for w, _ in DOC_LINES])
def test_every_command_line_in_the_docs_exists(where: str, line: str) -> None:
    assert problem_of(line) is None, f"{where}: {line}: {problem_of(line)}"


@pytest.mark.parametrize("line", FAQ_COMMANDS)
def test_every_command_line_of_the_faq_exists(line: str) -> None:
    assert problem_of(line) is None, f"{line}: {problem_of(line)}"


def test_the_checker_catches_a_missing_command_option_or_value() -> None:
    assert problem_of("gryvia aply -f x.yaml") == "no command 'aply' in `gryvia`"
    assert problem_of("gryvia logs JOB --folow") == "no option --folow in `gryvia logs`"
    assert problem_of("gryvia -n ml queue -A -o wide") is None
    assert problem_of("gryvia tenant create x --max-gpus 3 --isolated true") is None
    assert problem_of("gryvia exec JOB --replica 1 -- sh -c 'echo $RANK'") is None
    assert problem_of("gryvia budget create|list|gte") == "no command 'gte' in `gryvia budget`"
    assert problem_of("gryvia priority create P --value 5 [--preemption Never]") is None
    text = "```sh\n$ gryvia queue \\\n    --bogus | head\n```\nthen `gryvia nope`"
    assert [problem_of(line) for _, line in command_lines(text)] == [
        "no option --bogus in `gryvia queue`",
        "no command 'nope' in `gryvia`",
    ]


def _manifests() -> list[tuple[str, dict[str, Any]]]:
    out = []
    for path in DOCS:
        blocks = re.findall(r"```ya?ml\n(.*?)```", path.read_text(encoding="utf-8"), re.S)
        for i, block in enumerate(blocks):
            try:
                docs = list(yaml.safe_load_all(block))
            except yaml.YAMLError:
                continue  # a fragment (chart values with placeholders)
            for doc in docs:
                if isinstance(doc, dict) and doc.get("apiVersion") == "gryvia.io/v1alpha1":
                    out.append((f"{path.relative_to(ROOT)}#{i}:{doc.get('kind')}", doc))
    for path in YAML_FILES:  # every YAML example file, as `gryvia validate FILE` reads it
        for i, doc in enumerate(yaml.safe_load_all(path.read_text(encoding="utf-8"))):
            if isinstance(doc, dict) and doc.get("apiVersion") == "gryvia.io/v1alpha1":
                out.append((f"{path.relative_to(ROOT)}#{i}:{doc.get('kind')}", doc))
    return out


MANIFESTS = _manifests()


@pytest.mark.parametrize(("where", "doc"), MANIFESTS, ids=[w for w, _ in MANIFESTS])
def test_every_gryvia_manifest_in_the_docs_validates(where: str, doc: dict[str, Any]) -> None:
    from gryvia_operator.api import validate_object

    result = validate_object(doc)
    findings = [*result.errors, *result.warnings]  # unknown fields are warnings: none either
    assert not findings, f"{where}: " + "; ".join(e.message for e in findings)
