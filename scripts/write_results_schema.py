"""Write ``schemas/results.schema.json``: the JSON Schema of the results file, generated from
the pydantic model (:func:`duplexeval.results.json_schema`).

Run after any change to :mod:`duplexeval.results._model` (``tests/test_results_reader.py``
fails while the committed copy is stale)::

    PYTHONPATH=src python scripts/write_results_schema.py
"""

from __future__ import annotations

from pathlib import Path

from duplexeval.results import write_json_schema

TARGET = Path(__file__).resolve().parents[1] / "schemas" / "results.schema.json"

if __name__ == "__main__":
    write_json_schema(TARGET)
    print(f"wrote {TARGET}")
