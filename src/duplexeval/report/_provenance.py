"""Where a table cell's number comes from: its definition, its data, and whether it may be
compared with published numbers.

* **definition**: timing cells name the variant and which definition it applied (``m3
  variant, official code``; ``flexi variant, paper``; ``... compat`` for a code mode), from
  ``results.variant``; content cells name the judge (``content judged by MODEL``) or the offline
  metrics (``content offline``).
* **data**: the dataset's name and subset (``m3-chat-en, quick subset``), from
  ``results.source.dataset``; the subset is read from the name of a suite build
  (``NAME-quick-KEY``, ``NAME-firstN-KEY``, ``NAME-KEY``).
* **synthetic**: the dataset is a build of a bundled suite (its name is a suite's and it lies in
  the cache's ``suites/`` folder).  Such a cell is marked :data:`SYNTHETIC_MARK` in the tables:
  it is not comparable with published numbers, which come from the benchmarks' own data.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from duplexeval.results._model import DatasetRef, Results
from duplexeval.suites._registry import SUITES

__all__ = ["SYNTHETIC_MARK", "SYNTHETIC_NOTE", "Provenance", "content_provenance",
           "data_name", "is_bundled_suite", "timing_provenance"]

SYNTHETIC_MARK = "§"
SYNTHETIC_NOTE = (f"{SYNTHETIC_MARK} from a bundled synthetic suite: not comparable with "
                  "published numbers.")


@dataclass(frozen=True)
class Provenance:
    """A cell's definition, data and whether the data is a bundled synthetic suite."""

    definition: str = ""
    data: str = ""
    synthetic: bool = False


def is_bundled_suite(dataset: DatasetRef | None) -> bool:
    """Whether ``dataset`` is a build of a bundled suite (see the module docstring)."""
    if dataset is None or not dataset.name or dataset.name not in SUITES:
        return False
    return Path(dataset.path).parent.name == "suites"


def _subset(dataset: DatasetRef) -> str:
    base = Path(dataset.path).name
    if not base.startswith(f"{dataset.name}-"):
        return ""
    rest = base[len(dataset.name) + 1:]
    if rest.startswith("quick-"):
        return "quick subset"
    first = re.match(r"first(\d+)-", rest)
    if first:
        return f"first {first.group(1)} dialogues"
    return "full" if re.fullmatch(r"[0-9a-f]{16}", rest) else ""


def data_name(dataset: DatasetRef | None) -> str:
    """``NAME, SUBSET`` of a suite build, else the dataset's name ('' when unknown)."""
    if dataset is None:
        return ""
    subset = _subset(dataset) if is_bundled_suite(dataset) else ""
    return f"{dataset.name}, {subset}" if subset else dataset.name


def timing_provenance(results: Results) -> Provenance:
    """A timing cell's provenance (see the module docstring)."""
    variant = results.variant
    definition = f"{variant.name} variant" + (f", {variant.definition}"
                                               if variant.definition else "")
    dataset = results.source.dataset
    return Provenance(definition, data_name(dataset), is_bundled_suite(dataset))


def content_provenance(results: Results) -> Provenance:
    """A content cell's provenance (see the module docstring)."""
    settings = results.content.settings if results.content is not None else {}
    judge = settings.get("judge")
    model = judge.get("model") if isinstance(judge, dict) else None
    definition = f"content judged by {model}" if model else "content offline"
    dataset = results.source.dataset
    return Provenance(definition, data_name(dataset), is_bundled_suite(dataset))
