"""Shared building blocks of the API types: base model, metadata, conditions, kind metadata."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any, ClassVar, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    GetJsonSchemaHandler,
    Strict,
    StringConstraints,
)
from pydantic.alias_generators import to_camel
from pydantic.config import JsonDict, JsonValue
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema

from gryvia_operator.api.names import API_VERSION as API_VERSION
from gryvia_operator.api.names import GROUP as GROUP
from gryvia_operator.api.names import VERSION as VERSION
from gryvia_operator.api.resources import Resource, Scope

CATEGORIES = ("gryvia",)


@dataclass(frozen=True, eq=False)
class SchemaExtra:
    """Annotation metadata merging `extra` into the JSON Schema of the annotated type.

    Used for Kubernetes-only keywords (`format: int32`, `x-kubernetes-*`, CEL rules) that
    pydantic cannot express. Works inside unions and containers, unlike `Field(...)`.
    """

    extra: Mapping[str, Any]

    def __get_pydantic_json_schema__(
        self, core_schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        schema = dict(handler(core_schema))
        schema.update(self.extra)
        return schema


def cel_rules(rules: Iterable[Mapping[str, str]]) -> JsonDict:
    """`{"x-kubernetes-validations": [...]}` for a model's `json_schema_extra` (CEL rules)."""
    items: list[JsonValue] = []
    for rule in rules:
        entry: JsonDict = {key: value for key, value in rule.items()}
        items.append(entry)
    return {"x-kubernetes-validations": items}


Int32 = Annotated[int, Strict(), SchemaExtra({"format": "int32"})]
"""A strict 32-bit integer (the API server rejects strings and floats for integer fields)."""
Int64 = Annotated[int, Strict(), SchemaExtra({"format": "int64"})]
NonNegativeInt32 = Annotated[int, Strict(), Field(ge=0), SchemaExtra({"format": "int32"})]
PositiveInt32 = Annotated[int, Strict(), Field(ge=1), SchemaExtra({"format": "int32"})]
NonNegativeInt64 = Annotated[int, Strict(), Field(ge=0), SchemaExtra({"format": "int64"})]
NonNegativeFloat = Annotated[float, Field(ge=0)]
Percent = Annotated[float, Field(ge=0, le=100)]
"""A percentage 0..100 (thresholds and utilisation are percentages everywhere, never fractions)."""
FreeForm = Annotated[dict[str, Any], SchemaExtra({"x-kubernetes-preserve-unknown-fields": True})]
"""An object the API server stores as given (Kubernetes types we pass through untouched)."""


Str63 = Annotated[str, StringConstraints(max_length=63)]
"""A short string (label values, currencies, kinds)."""
Str253 = Annotated[str, StringConstraints(max_length=253)]
"""An object name or other DNS-subdomain sized string."""
Str1024 = Annotated[str, StringConstraints(max_length=1024)]
"""A free-text string with a bound (keeps CEL cost estimates small)."""


class GryviaModel(BaseModel):
    """Base of every API model: camelCase on the wire, snake_case in Python.

    Fields are documented by the string literal under each (attribute docstrings); the CRD
    build turns those into schema descriptions (`crd.fielddocs`), not pydantic at class
    creation, and validators are built on first use (`defer_build`): importing the API
    types stays cheap for the CLI and the console."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        serialize_by_alias=True,
        extra="ignore",
        defer_build=True,
    )


class ObjectMeta(GryviaModel):
    """The parts of Kubernetes object metadata the platform reads; other keys are kept as given."""

    model_config = ConfigDict(extra="allow")

    name: str | None = None
    generate_name: str | None = None
    namespace: str | None = None
    uid: str | None = None
    resource_version: str | None = None
    generation: int | None = None
    creation_timestamp: datetime | None = None
    deletion_timestamp: datetime | None = None
    labels: dict[str, str] | None = None
    annotations: dict[str, str] | None = None
    finalizers: list[str] | None = None
    owner_references: list[dict[str, Any]] | None = None


class Condition(GryviaModel):
    """A Kubernetes `metav1.Condition`."""

    type: Annotated[str, StringConstraints(max_length=316)]
    """Condition type, e.g. `Ready` or `Scheduled`."""
    status: Literal["True", "False", "Unknown"]
    """Whether the condition holds."""
    reason: Str1024 | None = None
    """CamelCase machine-readable reason for the last transition."""
    message: Annotated[str, StringConstraints(max_length=32768)] | None = None
    """Human-readable detail."""
    last_transition_time: datetime | None = None
    """When the status last changed."""
    observed_generation: Int64 | None = None
    """The `metadata.generation` the condition was computed from."""


Conditions = Annotated[
    list[Condition],
    SchemaExtra({"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["type"]}),
]


@dataclass(frozen=True)
class PrinterColumn:
    """One `additionalPrinterColumns` entry (what `kubectl get` shows)."""

    name: str
    json_path: str
    type: Literal["string", "integer", "number", "boolean", "date"] = "string"
    description: str = ""
    priority: int = 0

    def to_crd(self) -> dict[str, Any]:
        """Return the CRD form: `{name, type, jsonPath[, description][, priority]}`."""
        out: dict[str, Any] = {"name": self.name, "type": self.type, "jsonPath": self.json_path}
        if self.description:
            out["description"] = self.description
        if self.priority:
            out["priority"] = self.priority
        return out


AGE_COLUMN = PrinterColumn("Age", ".metadata.creationTimestamp", "date")


@dataclass(frozen=True)
class KindInfo:
    """Everything about a kind except its fields: its resource (names, scope: the one table
    in `api/resources.py`), model, printer columns and notes.

    `omitted` lists reference fields deliberately left out of the model and why; the CRD
    reference prints it.
    """

    resource: Resource
    model: type[GryviaResource]
    printer_columns: tuple[PrinterColumn, ...]
    description: str
    omitted: tuple[str, ...] = ()
    categories: tuple[str, ...] = CATEGORIES

    @property
    def kind(self) -> str:
        """The kind name, e.g. `GryviaAIJob`."""
        return self.resource.kind

    @property
    def plural(self) -> str:
        """The plural resource name, e.g. `gryviaaijobs`."""
        return self.resource.plural

    @property
    def short_names(self) -> tuple[str, ...]:
        """kubectl short names, e.g. `("gaj",)`."""
        return self.resource.short_names

    @property
    def scope(self) -> Scope:
        """`Namespaced` or `Cluster`."""
        return self.resource.scope

    @property
    def group(self) -> str:
        """The API group, `gryvia.io`."""
        return self.resource.group

    @property
    def version(self) -> str:
        """The served version, `v1alpha1`."""
        return self.resource.version

    @property
    def singular(self) -> str:
        """Lower-case kind, e.g. `gryviaaijob`."""
        return self.resource.singular

    @property
    def api_version(self) -> str:
        """`group/version`, e.g. `gryvia.io/v1alpha1`."""
        return self.resource.api_version

    @property
    def crd_name(self) -> str:
        """The CRD's `metadata.name`, `<plural>.<group>`."""
        return f"{self.plural}.{self.group}"

    @property
    def namespaced(self) -> bool:
        """True for namespaced kinds."""
        return self.resource.namespaced

    @property
    def has_status(self) -> bool:
        """True when the model has a `status` field (the CRD then gets a status subresource)."""
        return "status" in self.model.model_fields


class GryviaResource(GryviaModel):
    """A whole custom resource: apiVersion, kind, metadata, spec and (usually) status."""

    api_version: Literal["gryvia.io/v1alpha1"] = "gryvia.io/v1alpha1"
    kind: str = ""
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)

    kind_info: ClassVar[KindInfo]

    @property
    def name(self) -> str:
        """`metadata.name`, or "" when unset."""
        return self.metadata.name or ""

    @property
    def namespace(self) -> str:
        """`metadata.namespace`, or "" when unset (cluster-scoped kinds)."""
        return self.metadata.namespace or ""
