"""The base of every CLI document model: the version field, the kind, and the rule that a
model prints back exactly the fields it was given."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, SerializerFunctionWrapHandler, model_serializer

ApiVersion = Literal["cli.gryvia.io/v1"]
"""The `apiVersion` of every computed document (`names.CLI_API_VERSION`): group
`cli.gryvia.io`, version `v1`. Within v1 fields are only added; removing a field or changing
what one means makes v2 (docs/json-output.md). A unit test holds it equal to the constant."""


class CliModel(BaseModel):
    """A part of a document. Field descriptions are the attribute docstrings. Unknown fields
    are kept (a reader built against v1 reads a later v1 document); the schema tests forbid
    them, so a field the CLI prints is always named here. A field with a default is one the
    CLI prints only sometimes: it is printed back only when it was given."""

    model_config = ConfigDict(
        extra="allow", populate_by_name=True, use_attribute_docstrings=True, defer_build=True
    )

    @model_serializer(mode="wrap")
    def _as_given(self, handler: SerializerFunctionWrapHandler):  # type: ignore[no-untyped-def]
        # No return annotation: the serialization schema stays the fields' own (MCP's
        # output schemas are built in that mode).
        data = handler(self)
        if isinstance(data, dict):
            for name, info in type(self).model_fields.items():
                if name not in self.model_fields_set and not info.is_required():
                    data.pop(info.alias or name, None)
                    data.pop(name, None)
        return data


class Document(CliModel):
    """A document `gryvia ... -o json` prints: apiVersion and kind first, as every one has."""

    apiVersion: ApiVersion
    """`cli.gryvia.io/v1`: the schema version of this document (docs/json-output.md)."""
    kind: str
    """What the document is; one schema per kind (docs/reference/json/)."""
