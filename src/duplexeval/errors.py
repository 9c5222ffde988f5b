"""User-facing errors: each prints as one line per problem and exits with code 2."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = ["DatasetInvalid", "DuplexevalError", "Problem"]


@dataclass(frozen=True, order=True)
class Problem:
    """One problem found in an input file; ``line`` is 1-based, ``None`` for the whole file."""

    path: Path
    line: int | None
    message: str

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line is not None else f"{self.path}"
        return f"{where}: {self.message}"


class DuplexevalError(Exception):
    """An error caused by the user's input or arguments (no traceback; exit code 2)."""

    exit_code = 2

    def lines(self) -> list[str]:
        """The lines to print, one per problem."""
        return [str(self)]


class DatasetInvalid(DuplexevalError):
    """A dataset failed validation; carries every problem found."""

    def __init__(self, problems: Sequence[Problem]) -> None:
        self.problems = list(problems)
        super().__init__("\n".join(str(p) for p in self.problems))

    def lines(self) -> list[str]:
        return [str(p) for p in self.problems]
