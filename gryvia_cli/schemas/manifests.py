"""The document of `gryvia validate` (ValidationReport): the findings of the admission
webhook's rules, per manifest document."""

from __future__ import annotations

from typing import Literal

from gryvia_cli.schemas.base import CliModel, Document


class Finding(CliModel):
    """One error or warning."""

    field: str
    """The field it is about, e.g. `spec.gpus`."""
    message: str


class DocumentResult(CliModel):
    """The result of one YAML document of one file."""

    file: str
    """The file as given (`-`: stdin)."""
    document: int
    """Its position in the file, from 1."""
    line: int
    """The line it starts on."""
    kind: str | None
    """The document's own kind (e.g. GryviaAIJob); null when it has none."""
    name: str | None
    """Its metadata.name; null when it has none."""
    valid: bool
    """False when it has an error."""
    skipped: str | None
    """Why it was not checked (a document of another API); null when it was."""
    errors: list[Finding]
    warnings: list[Finding]
    """Findings that fail only with --strict."""


class ValidationReport(Document):
    """`gryvia validate FILE... -o json`: one item per document (exit 1 when any has an error,
    or a warning with --strict)."""

    kind: Literal["ValidationReport"]
    items: list[DocumentResult]
