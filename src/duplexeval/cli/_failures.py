"""The one place where an error reaching the command line becomes what the user reads.

Input errors print as one line, ``duplexeval: FILE[:LINE]: what`` (the first of several
problems, with their count: :func:`summary_line`), and exit with code 2, never a traceback,
whichever exception carries them:

- :class:`~duplexeval.errors.DuplexevalError` (its own lines; its file is in its message);
- ``OSError`` (``FileExistsError``, ``PermissionError``, ``IsADirectoryError``, "File name too
  long", ...): its ``filename``, then the system's words (``strerror``);
- ``UnicodeDecodeError``, ``json.JSONDecodeError``, pydantic's ``ValidationError`` and
  ``RecursionError`` (a deeply nested file): the file and line the reader tagged the exception
  with (:func:`duplexeval.errors.located`), then one line of what is wrong.

Anything else is a bug and keeps its traceback.  Lines are printed after any progress bar
still on the screen: the bars are closed first, so that the error starts on its own line.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence

from pydantic import ValidationError

from duplexeval.errors import DuplexevalError, location

__all__ = ["INPUT_ERRORS", "failure_lines", "print_lines", "summary_line"]

INPUT_ERRORS: tuple[type[BaseException], ...] = (
    DuplexevalError, OSError, ValidationError, UnicodeDecodeError, json.JSONDecodeError,
    RecursionError)
"""The exceptions the command line reports as input errors (exit 2)."""


def failure_lines(exc: BaseException) -> list[str]:
    """The lines (without the ``duplexeval:`` prefix) that report ``exc``, one of
    :data:`INPUT_ERRORS`; each is a single line."""
    if isinstance(exc, DuplexevalError):
        return [_one_line(line) for line in exc.lines()]
    where = location(exc)
    if isinstance(exc, OSError) and exc.filename is not None:
        where = None  # the file the system names is the one that failed
    prefix = ""
    if where is not None:
        path, line = where
        prefix = f"{path}:{line}: " if line is not None else f"{path}: "
    return [prefix + _one_line(_what(exc, bool(prefix)))]


def summary_line(lines: Sequence[str]) -> str:
    """The one line a command prints for an input error of several ``lines`` (a dataset, a
    spec or an official output folder with many problems): the first, and how many more
    (``duplexeval validate`` lists every problem of a dataset)."""
    more = len(lines) - 1
    return lines[0] if more < 1 else f"{lines[0]} (and {more} more problem(s) in that input)"


def _what(exc: BaseException, named: bool) -> str:
    if isinstance(exc, OSError):
        files = [str(f) for f in (exc.filename, exc.filename2) if f is not None]
        words = exc.strerror or type(exc).__name__
        if files and not named:
            return f"{' -> '.join(files)}: {words}"
        return words if exc.strerror else (str(exc) or words)
    if isinstance(exc, ValidationError):
        errors = exc.errors()
        first = errors[0] if errors else {"loc": (), "msg": str(exc)}
        field = ".".join(str(x) for x in first["loc"]) or "top level"
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        return f"{field}: {first['msg']}{more}"
    if isinstance(exc, UnicodeDecodeError):
        return (f"not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at offset {exc.start})"
                if exc.start < len(exc.object) else "not UTF-8 text")
    if isinstance(exc, json.JSONDecodeError):
        return f"not valid JSON ({exc.msg}: line {exc.lineno} column {exc.colno})"
    if isinstance(exc, RecursionError):
        return "nested too deeply to read"
    return str(exc) or type(exc).__name__


def _one_line(text: str) -> str:
    """``text`` on one line: line breaks become ``; ``."""
    return "; ".join(part.strip() for part in str(text).splitlines() if part.strip())


def print_lines(lines: Sequence[str]) -> None:
    """Print ``duplexeval: LINE`` for each line to stderr, each on its own line: progress bars
    still open (left by the failed stage) are closed first, which ends their line."""
    _close_progress_bars()
    for line in lines:
        print(f"duplexeval: {line}", file=sys.stderr)


def _close_progress_bars() -> None:
    try:
        from tqdm import tqdm
    except ImportError:  # pragma: no cover - tqdm is a dependency
        return
    for bar in list(getattr(tqdm, "_instances", ())):
        bar.close()
