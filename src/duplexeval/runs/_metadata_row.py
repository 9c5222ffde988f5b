"""One line of a run's ``metadata.jsonl`` (:class:`MetadataRow`): the official M3 metadata
fields of a finished sample, checked as they are read."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, field_validator, model_validator

from duplexeval._fileio import name_problem
from duplexeval.timeline import MAX_FILE_SECONDS

__all__ = ["MetadataRow"]


class MetadataRow(BaseModel):
    """One line of ``metadata.jsonl``: the official M3 metadata fields of a finished sample
    (paths relative to the run directory); times are finite and within
    :data:`~duplexeval.timeline.MAX_FILE_SECONDS` of zero (NaN, inf or 1e308 is refused)."""

    model_config = ConfigDict(extra="allow", allow_inf_nan=False)
    sample_id: str
    event_id: str
    user_channel: int
    system_channel: int
    event_type: str
    task: str
    event_start: float | int
    event_end: float | int
    input_start: float | int
    input_end: float | int
    context_start: float | int
    context_end: float | int
    model: str
    trigger_time: float | int
    input_audio_path: str
    context_audio_path: str
    alignment_path: str | None = None
    output_audio_path: str
    use_context: bool
    context_mode: str

    @field_validator("event_start", "event_end", "input_start", "input_end", "context_start",
                     "context_end", "trigger_time")
    @classmethod
    def _a_time(cls, value: float) -> float:
        if abs(value) > MAX_FILE_SECONDS:
            raise ValueError(f"must be within {MAX_FILE_SECONDS:g} s of zero")
        return value

    @field_validator("sample_id", "event_id")
    @classmethod
    def _a_file_name(cls, value: str) -> str:  # they name the sample's files
        problem = name_problem(value)
        if problem is not None:
            raise ValueError(f"cannot be used in a file name: {problem}")
        return value

    @model_validator(mode="after")
    def _windows_in_order(self) -> MetadataRow:
        for name in ("input", "context"):
            start, end = getattr(self, f"{name}_start"), getattr(self, f"{name}_end")
            if start > end:
                raise ValueError(f"{name}_start ({start}) after {name}_end ({end})")
        return self
