"""Input files named on the command line: a path, or `-` for stdin."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gryvia_cli.errors import InvalidInputError

if TYPE_CHECKING:
    from gryvia_cli.core.manifests import DocumentReport


def read_source(path: str) -> tuple[str, str]:
    """Return (text, display name) of a file path or `-` (stdin).

    Raises InvalidInputError when the file cannot be read.
    """
    if path == "-":
        return sys.stdin.read(), "<stdin>"
    file = Path(path)
    try:
        return file.read_text(encoding="utf-8"), path
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInputError(f"cannot read {path}: {exc.__class__.__name__}: {exc}") from None


def read_one_document(path: str, kind: str) -> tuple[Any, str]:
    """Return (document, display name) of a YAML file or `-` (stdin) that must hold exactly
    one document (empty documents do not count); `kind` names it in the error.

    Raises InvalidInputError when the file cannot be read, is not valid YAML or holds no
    document or more than one.
    """
    import yaml

    text, source = read_source(path)
    try:
        docs = [d for d in yaml.safe_load_all(text) if d is not None]
    except yaml.YAMLError as exc:
        raise InvalidInputError(f"{source}: not valid YAML: {exc}") from None
    if len(docs) != 1:
        raise InvalidInputError(f"{source}: expected one {kind}, found {len(docs)}")
    return docs[0], source


def check_sources(paths: list[str]) -> list[DocumentReport]:
    """Every YAML document of the files (or stdin) checked with the admission rules
    (`core.manifests.check_text`), in order ([] when the files are empty). Raises
    InvalidInputError when a file cannot be read or parsed."""
    from gryvia_cli.core.manifests import check_text

    reports = []
    for path in paths:
        text, name = read_source(path)
        reports += check_text(text, name)
    return reports


def job_documents(text: str, source: str) -> tuple[list[dict[str, Any]], list[str], list[str]]:
    """The GryviaAIJobs of one YAML text (`source` names it in messages), each checked with
    the admission rules: (jobs, problems, warnings), problems and warnings as
    `file: document: object: field: message` lines; a document of another kind is a
    problem (submit creates GryviaAIJobs only). Raises InvalidInputError for text that is not
    YAML (`core.manifests.split_documents`)."""
    from collections.abc import Mapping

    from gryvia_cli.core.manifests import check_document, split_documents

    jobs: list[dict[str, Any]] = []
    problems: list[str] = []
    warnings: list[str] = []
    for doc in split_documents(text, source):
        kind = doc.content.get("kind") if isinstance(doc.content, Mapping) else None
        if kind != "GryviaAIJob":
            problems.append(
                f"{doc.label}: submit creates GryviaAIJobs, not {kind or 'this document'} "
                "(use kubectl apply for other objects)"
            )
            continue
        report = check_document(doc)
        problems += [f.render() for f in report.errors]
        warnings += [f.render() for f in report.warnings]
        jobs.append(dict(doc.content))
    return jobs, problems, warnings
