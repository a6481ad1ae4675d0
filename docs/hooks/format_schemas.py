"""The run directories' file formats as JSON Schema, generated from the pydantic models that read and write them.

A page says ``<!-- generated: schema harness.records.entries:GameEntry -->`` and the docs hook puts
the model's ``model_json_schema()`` there as a JSON block, so the documented format is the one the
code validates.
"""

from __future__ import annotations

import importlib
import json

from pydantic import BaseModel


def model_class(reference: str) -> type[BaseModel]:
    """The pydantic model named ``module:Class``; a clear error when it is not one."""
    module_name, _, class_name = reference.partition(":")
    if not module_name or not class_name:
        raise ValueError(f"schema reference {reference!r}: expected module:Class, e.g. harness.records.entries:GameEntry")
    model = getattr(importlib.import_module(module_name), class_name, None)
    if not (isinstance(model, type) and issubclass(model, BaseModel)):
        raise ValueError(f"schema reference {reference!r}: {class_name} is not a pydantic model of {module_name}")
    return model


def schema_markdown(reference: str) -> str:
    """The JSON Schema of ``module:Class`` in a fenced JSON block (serialization mode: what the files hold)."""
    schema = model_class(reference).model_json_schema(mode="serialization")
    return "```json\n" + json.dumps(schema, indent=2, ensure_ascii=False) + "\n```\n"
