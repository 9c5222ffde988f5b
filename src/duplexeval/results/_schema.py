"""The JSON Schema of results files, generated from the model, never hand-written.

``duplexeval results schema [-o FILE]`` prints or writes it, and ``schemas/results.schema.json``
in the repository is a copy that a test keeps current (``python scripts/write_results_schema.py``
refreshes it).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from duplexeval._fileio import atomic_write_text
from duplexeval.results._model import Results

__all__ = ["json_schema", "json_schema_text", "write_json_schema"]


def json_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of the current results file, generated from the model."""
    schema = Results.model_json_schema(mode="serialization")
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    return schema


def json_schema_text() -> str:
    """:func:`json_schema` as the indented text that is written and committed."""
    return json.dumps(json_schema(), ensure_ascii=False, indent=2, sort_keys=True) + "\n"


def write_json_schema(path: str | Path) -> None:
    """Write the JSON Schema to ``path`` atomically."""
    atomic_write_text(path, json_schema_text())
