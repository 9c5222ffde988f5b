"""User-facing errors: each prints as one line per problem and exits with code 2.

Two rules shared by every stage live here too:

- :func:`located` tags an exception raised while reading a file with the file (and 1-based
  line), so that the command line's one error line (``duplexeval.cli._failures``) can name it
  whatever the exception (``UnicodeDecodeError``, pydantic's ``ValidationError``,
  ``RecursionError``, ...); :func:`location` reads the tag back.
- :func:`number_problem` is the one rule for numbers a user gives (options, ``--system-arg``
  values): finite, and within the stated bounds.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["DatasetInvalid", "DuplexevalError", "Problem", "located", "location",
           "number_problem", "number_type"]

_LOCATION = "_duplexeval_location"


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


@contextmanager
def located(path: str | Path, line: int | None = None) -> Iterator[None]:
    """Tag any exception raised inside the block (but a :class:`DuplexevalError`, which names
    its file itself) with ``path`` and ``line``, unless an inner block tagged it already; the
    exception itself propagates unchanged."""
    try:
        yield
    except DuplexevalError:
        raise
    except Exception as exc:
        if not hasattr(exc, _LOCATION):
            with suppress(AttributeError):  # a type that refuses new attributes stays untagged
                setattr(exc, _LOCATION, (Path(path), line))
        raise


def location(exc: BaseException) -> tuple[Path, int | None] | None:
    """The (file, line) :func:`located` tagged ``exc`` with, or ``None``."""
    where = getattr(exc, _LOCATION, None)
    return where if isinstance(where, tuple) else None


def number_problem(value: float, low: float | None = None, high: float | None = None,
                   low_open: bool = False) -> str | None:
    """Why ``value`` is not an acceptable number, or ``None`` when it is: it must be finite
    (not NaN, not +-inf), at least ``low`` (above it with ``low_open``) and at most ``high``."""
    if not math.isfinite(value):
        return "must be a finite number"
    if low is not None and (value <= low if low_open else value < low):
        return f"must be {'greater than' if low_open else 'at least'} {low:g}"
    if high is not None and value > high:
        return f"must be at most {high:g}"
    return None


def number_type(kind: type[float] | type[int] = float, low: float | None = None,
                high: float | None = None, low_open: bool = False,
                unit: str = "") -> Callable[[str], Any]:
    """An argparse ``type=``: a number of ``kind`` (``float`` or ``int``) that
    :func:`number_problem` accepts; every numeric option of every subcommand is one (named
    instances in ``duplexeval.cli._options``).  ``unit`` (e.g. ``"seconds"``) is named in the
    message."""
    what = "an integer" if kind is int else (unit or "a number")

    def parse(text: str) -> Any:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
        problem = number_problem(value, low, high, low_open)
        if problem is not None:
            raise argparse.ArgumentTypeError(f"{problem}, got {text}") from None
        return value

    parse.__name__ = kind.__name__  # argparse names the type in its messages
    return parse
