"""Field descriptions of the CRD schemas, taken from attribute docstrings when a schema is made.

The API models document each field with a string literal under it (PEP 257 attribute
docstrings). pydantic can read those itself (`use_attribute_docstrings`), but it does so for
every class as it is created: `inspect.getsource` parses the class's whole module once per
class, about 0.1 s of CPU for the API package, paid by every `gryvia` command and by the
console before its first frame, which never show a description. So the models leave that
off, and `DocumentedSchema`, the JSON Schema generator the CRD build uses, reads the
docstrings of each model it renders and adds them as the fields' `description`, as pydantic
would: a `Field(description=...)` wins, and a field inherited from a base keeps the base's text.
"""

from __future__ import annotations

import ast
import functools
import inspect
import itertools
import textwrap
from typing import cast

from pydantic import BaseModel
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import core_schema


@functools.cache
def attribute_docs(cls: type) -> dict[str, str]:
    """`{attribute name: docstring}` of the annotated attributes of `cls` (not its bases) that
    are followed by a string literal; {} when the source cannot be read."""
    try:
        source = textwrap.dedent(inspect.getsource(cls))
    except (OSError, TypeError):
        return {}
    body = next(
        (node.body for node in ast.parse(source).body if isinstance(node, ast.ClassDef)), []
    )
    docs: dict[str, str] = {}
    for node, after in itertools.pairwise(body):
        if (
            isinstance(node, ast.AnnAssign)
            and isinstance(node.target, ast.Name)
            and isinstance(after, ast.Expr)
            and isinstance(after.value, ast.Constant)
            and isinstance(after.value.value, str)
        ):
            docs[node.target.id] = inspect.cleandoc(after.value.value)
    return docs


def field_docs(model: type[BaseModel]) -> dict[str, str]:
    """Attribute docstrings of `model` and its bases, the nearest class's text winning."""
    docs: dict[str, str] = {}
    for cls in reversed(model.__mro__):
        if issubclass(cls, BaseModel) and cls is not BaseModel:
            docs.update(attribute_docs(cls))
    return docs


class DocumentedSchema(GenerateJsonSchema):
    """pydantic's JSON Schema generator, plus each model field's attribute docstring as its
    `description` where the field has none (pass as `schema_generator=`)."""

    def model_schema(self, schema: core_schema.ModelSchema) -> JsonSchemaValue:
        """The model's schema with the field descriptions filled in."""
        out = super().model_schema(schema)
        properties = out.get("properties")
        if not isinstance(properties, dict):
            return out
        model = cast("type[BaseModel]", schema["cls"])
        docs = field_docs(model)
        for name, info in model.model_fields.items():
            key = (info.alias or name) if self.by_alias else name
            doc = docs.get(name)
            node = properties.get(key)
            if doc and isinstance(node, dict) and "description" not in node:
                node["description"] = doc
        return out
