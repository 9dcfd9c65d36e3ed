"""Job manifests: files split and validated with each problem located, the job a submit form
describes, and a fresh copy of a job to submit again.

Every Gryvia object gets the admission webhook's rules; findings name the file, document,
object and field.
"""

from __future__ import annotations

import copy
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from gryvia_cli.errors import InvalidInputError
from gryvia_operator.api.names import (
    AIJOB_KIND_NAME,
    ANNOTATION_CANCEL,
    ANNOTATION_LAST_APPLIED,
    API_VERSION,
    GROUP,
)

if TYPE_CHECKING:
    from pydantic import BaseModel


@dataclass(frozen=True)
class Document:
    """One YAML document of a file: 1-based index, first line, and its content;
    `field_lines` maps each field's path (`spec.gpus`, `spec.env[0].name`) to its 1-based line."""

    source: str
    index: int
    line: int
    content: Any
    field_lines: Mapping[str, int] = field(default_factory=dict, compare=False, repr=False)

    def line_of(self, path: str) -> int:
        """The line of field `path`, else of its nearest parent found, else the first line."""
        while path:
            if path in self.field_lines:
                return self.field_lines[path]
            path = path[: max(path.rfind("."), path.rfind("["), 0)]
        return self.line

    @property
    def label(self) -> str:
        """`file (document N, KIND/NAME, line L)` for messages (L: the first line)."""
        return self.label_at(self.line)

    def label_at(self, line: int) -> str:
        """`file (document N, KIND/NAME, line <line>)`."""
        parts = [f"document {self.index}"]
        if isinstance(self.content, Mapping):
            kind = self.content.get("kind") or "?"
            name = (
                (self.content.get("metadata") or {}).get("name")
                if isinstance(self.content.get("metadata"), Mapping)
                else None
            )
            parts.append(f"{kind}/{name or '?'}")
        return f"{self.source} ({', '.join(parts)}, line {line})"


@dataclass(frozen=True)
class Finding:
    """One error or warning about a document."""

    document: Document
    field: str
    message: str

    def render(self) -> str:
        """`file (document 2, GryviaAIJob/x, line 14): spec.gpus: <message>`, at the field's
        line; the field is not repeated when the message already starts with it."""
        from gryvia_operator.api.validation import FieldError

        text = FieldError(self.field, self.message).text()
        return f"{self.document.label_at(self.document.line_of(self.field))}: {text}"

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
            lines = _field_lines(node, "", {})
            docs.append(Document(source, index, node.start_mark.line + 1, content, lines))
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


def _field_lines(node: Any, path: str, out: dict[str, int]) -> dict[str, int]:
    """Walk a composed YAML node: the 1-based line of every mapping key and sequence item,
    by its path (`spec.gpus`, `spec.env[0]`)."""
    if isinstance(getattr(node, "value", None), list):
        for i, item in enumerate(node.value):
            if isinstance(item, tuple):  # a mapping's (key node, value node)
                key, value = item
                child = f"{path}.{key.value}" if path else str(key.value)
                out[child] = key.start_mark.line + 1
            else:  # a sequence's item node
                child, value = f"{path}[{i}]", item
                out[child] = item.start_mark.line + 1
            _field_lines(value, child, out)
    return out


def is_gryvia(content: Any) -> bool:
    """True when a document claims to be a Gryvia object (apiVersion or kind)."""
    if not isinstance(content, Mapping):
        return True  # not even a mapping: validate_object reports it
    api_version = str(content.get("apiVersion") or "")
    kind = str(content.get("kind") or "")
    return api_version.startswith(GROUP) or kind.startswith("Gryvia") or not (api_version or kind)


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


_SERVER_FIELDS = (
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "managedFields",
    "ownerReferences",
    "finalizers",
    "deletionTimestamp",
    "selfLink",
)


def resubmit_body(raw: Mapping[str, Any]) -> dict[str, Any]:
    """A new GryviaAIJob from an old one (a raw API object): same spec, labels and annotations
    (without the cancel request and the last-applied copy), named by the server from
    `<name>-` (the name cut to 52 characters), no status."""
    meta = raw.get("metadata") or {}
    new_meta = {k: copy.deepcopy(v) for k, v in meta.items() if k not in _SERVER_FIELDS}
    name = str(new_meta.pop("name", "job"))
    new_meta["generateName"] = f"{name[:52]}-"
    annotations = dict(new_meta.get("annotations") or {})
    annotations.pop(ANNOTATION_CANCEL, None)
    annotations.pop(ANNOTATION_LAST_APPLIED, None)
    new_meta["annotations"] = annotations
    return {
        "apiVersion": raw.get("apiVersion", API_VERSION),
        "kind": AIJOB_KIND_NAME,
        "metadata": new_meta,
        "spec": copy.deepcopy(raw.get("spec") or {}),
    }


@dataclass(frozen=True)
class JobForm:
    """What a person typed into a submit form (all text, unparsed)."""

    name: str = ""
    namespace: str = ""
    type: str = "training"
    image: str = ""
    gpus: str = "1"
    gpu_type: str = ""
    nodes: str = "1"
    command: str = ""
    storage: str = ""


def _number(text: str) -> int | str:
    value = text.strip()
    return int(value) if value.lstrip("-").isdigit() else value


def build_job_manifest(form: JobForm) -> dict[str, Any]:
    """The GryviaAIJob of a form; numbers that do not parse are kept as text so that
    `validate_job` names the field. Several nodes make the job distributed, with `gpus` GPUs
    per node; an empty or `any` GPU type leaves `gpuType` out; the command is split like a
    shell would (kept whole when its quoting does not parse)."""
    spec: dict[str, Any] = {
        "type": form.type,
        "image": form.image.strip(),
        "gpus": _number(form.gpus),
    }
    if form.gpu_type.strip() and form.gpu_type.strip().lower() != "any":
        spec["gpuType"] = form.gpu_type.strip()
    nodes = _number(form.nodes or "1")
    if nodes != 1:
        spec["distributed"] = {"enabled": True, "nodes": nodes}
    if form.command.strip():
        try:
            spec["command"] = shlex.split(form.command)
        except ValueError:
            spec["command"] = [form.command]
    if form.storage.strip():
        spec["storage"] = form.storage.strip()
    meta: dict[str, Any] = {"name": form.name.strip()}
    if form.namespace.strip():
        meta["namespace"] = form.namespace.strip()
    return {"apiVersion": API_VERSION, "kind": AIJOB_KIND_NAME, "metadata": meta, "spec": spec}


def new_object(
    kind: str, name: str, spec: dict[str, Any], namespace: str | None = None
) -> dict[str, Any]:
    """The body of a new Gryvia object of `kind`: apiVersion, kind, metadata (name, and
    namespace when given) and `spec` (the same dict, not a copy). Not validated."""
    metadata = {"name": name} if namespace is None else {"name": name, "namespace": namespace}
    return {"apiVersion": API_VERSION, "kind": kind, "metadata": metadata, "spec": spec}


def manifest_body(doc: Any, kind: str, source: str) -> dict[str, Any]:
    """A copy of the manifest `doc` (one YAML document) with apiVersion defaulted to Gryvia's.
    Raises ValueError `<source>: expected a <kind> manifest, found '<other>'` when it is not a
    mapping of that kind."""
    if not isinstance(doc, dict) or doc.get("kind") != kind:
        found = doc.get("kind") if isinstance(doc, dict) else type(doc).__name__
        raise ValueError(f"{source}: expected a {kind} manifest, found {found!r}")
    return {**doc, "apiVersion": doc.get("apiVersion") or API_VERSION}


def validated_body(model: type[BaseModel], body: dict[str, Any], source: str) -> dict[str, Any]:
    """`body` when `model` accepts it; else ValueError `<source>: <field>: <message>` naming
    the first problem (`<source>: <message>` when it concerns no one field)."""
    from pydantic import ValidationError

    from gryvia_operator.api.controlled import first_problem

    try:
        model.model_validate(body)
    except ValidationError as exc:
        where, text = first_problem(exc)
        raise ValueError(f"{source}: {where + ': ' if where else ''}{text}") from None
    return body
