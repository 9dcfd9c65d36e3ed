"""Manifest files: multi-document YAML split, validated, each problem located.

Every Gryvia object gets the admission webhook's rules; findings name the file, document,
object and field.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from gryvia_cli.errors import InvalidInputError


@dataclass(frozen=True)
class Document:
    """One YAML document of a file: 1-based index, first line, and its content."""

    source: str
    index: int
    line: int
    content: Any

    @property
    def label(self) -> str:
        """`file` or `file (document N, KIND/NAME)` for messages."""
        parts = [f"document {self.index}"]
        if isinstance(self.content, Mapping):
            kind = self.content.get("kind") or "?"
            name = (
                (self.content.get("metadata") or {}).get("name")
                if isinstance(self.content.get("metadata"), Mapping)
                else None
            )
            parts.append(f"{kind}/{name or '?'}")
        return f"{self.source} ({', '.join(parts)}, line {self.line})"


@dataclass(frozen=True)
class Finding:
    """One error or warning about a document."""

    document: Document
    field: str
    message: str

    def render(self) -> str:
        """`file (document 2, GryviaAIJob/x, line 14): spec.gpus: <message>`; the field is
        not repeated when the message already starts with it."""
        text = self.message
        if self.field and not text.startswith(self.field):
            text = f"{self.field}: {text}"
        return f"{self.document.label}: {text}"

    def as_dict(self) -> dict[str, Any]:
        """JSON shape of a finding."""
        return {"field": self.field, "message": self.message}


@dataclass
class DocumentReport:
    """Findings for one document."""

    document: Document
    errors: list[Finding] = field(default_factory=list)
    warnings: list[Finding] = field(default_factory=list)
    skipped: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """JSON shape: `{file, document, line, kind, name, valid, skipped, errors, warnings}`."""
        content = self.document.content if isinstance(self.document.content, Mapping) else {}
        meta = content.get("metadata") if isinstance(content.get("metadata"), Mapping) else {}
        return {
            "file": self.document.source,
            "document": self.document.index,
            "line": self.document.line,
            "kind": content.get("kind"),
            "name": (meta or {}).get("name"),
            "valid": not self.errors,
            "skipped": self.skipped,
            "errors": [f.as_dict() for f in self.errors],
            "warnings": [f.as_dict() for f in self.warnings],
        }


def split_documents(text: str, source: str) -> list[Document]:
    """Parse every non-empty YAML document of `text`, with its first line number.

    Raises InvalidInputError naming the file, line and column of a YAML syntax error.
    """
    import yaml

    loader_cls = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    loader = loader_cls(text)
    docs: list[Document] = []
    try:
        index = 0
        while loader.check_node():
            node = loader.get_node()
            index += 1
            if node is None:
                continue
            content = loader.construct_document(node)
            if content is None:
                continue
            docs.append(Document(source, index, node.start_mark.line + 1, content))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise InvalidInputError(
            f"{source}:{where} is not valid YAML: {problem}",
            hint="check the indentation and quoting around that line",
        ) from None
    finally:
        loader.dispose()
    return docs


def is_gryvia(content: Any) -> bool:
    """True when a document claims to be a Gryvia object (apiVersion or kind)."""
    if not isinstance(content, Mapping):
        return True  # not even a mapping: validate_object reports it
    api_version = str(content.get("apiVersion") or "")
    kind = str(content.get("kind") or "")
    return (
        api_version.startswith("gryvia.io")
        or kind.startswith("Gryvia")
        or not (api_version or kind)
    )


def check_document(doc: Document) -> DocumentReport:
    """Validate one document: every webhook rule for jobs, the schema for other Gryvia kinds;
    documents of other APIs (ConfigMaps, ...) are skipped with a note."""
    from gryvia_operator.api import validate_object

    report = DocumentReport(doc)
    if not is_gryvia(doc.content):
        report.skipped = "not a Gryvia object"
        return report
    result = validate_object(doc.content)
    report.errors = [Finding(doc, e.field, e.message) for e in result.errors]
    report.warnings = [Finding(doc, w.field, w.message) for w in result.warnings]
    return report


def check_text(text: str, source: str) -> list[DocumentReport]:
    """Split and validate a whole file's text (see split_documents for errors)."""
    return [check_document(doc) for doc in split_documents(text, source)]
