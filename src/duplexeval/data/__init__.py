"""Dialogue data: the data model, the M3 layout (read, write, validate), annotation, locators.

Public names for users and third-party code::

    from duplexeval.data import Dataset, Dialogue, Word, load_dataset
"""

from duplexeval.data._dialogue import AudioInfo, Dataset, Dialogue, Word
from duplexeval.data._locate import bundled_dataset, find_m3_toy
from duplexeval.data._m3 import write_dataset
from duplexeval.data._validate import Need, ValidationReport, check_dataset, load_dataset

__all__ = [
    "AudioInfo",
    "Dataset",
    "Dialogue",
    "Need",
    "ValidationReport",
    "Word",
    "bundled_dataset",
    "check_dataset",
    "find_m3_toy",
    "load_dataset",
    "write_dataset",
]
