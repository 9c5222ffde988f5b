"""Atomic file writes, and the rule for names that become part of a path.

A reader never sees a half-written file, and an interrupted writer leaves the old file (or
no file) in place.  Temporary files are named ``.{name}.tmp-{pid}-{random}`` and removed on
error.

Ids and names read from input files or code (dialogue ids, spec ids, suite and system names)
become file and folder names (``audio/{id}.wav``, ``samples/{id}/...``, ``runs/{system}-...``).
:func:`name_problem` / :func:`safe_name` is the one rule they pass, so that none of them can
point outside the folder it is joined to.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from duplexeval.errors import DuplexevalError

__all__ = ["atomic_path", "atomic_write_bytes", "atomic_write_json", "atomic_write_text",
           "format_seconds", "json_line", "name_problem", "read_json", "safe_name"]


def name_problem(name: str) -> str | None:
    """Why ``name`` cannot be used as one file or folder name, or ``None`` when it can.

    Refused: the empty name, a path separator (``/`` or ``\\``), ``..`` anywhere, a leading
    ``.`` (hidden files, ``.`` itself) and control characters (Unicode category Cc, e.g. NUL,
    newline, DEL).  Everything else (letters of any script, digits, ``-_.:`` and spaces) is
    allowed.
    """
    if not isinstance(name, str) or name == "":
        return "is empty"
    if "/" in name or "\\" in name:
        return "contains a path separator (/ or \\)"
    if ".." in name:
        return "contains '..'"
    if name.startswith("."):
        return "starts with '.'"
    if any(unicodedata.category(c) == "Cc" for c in name):
        return "contains a control character"
    return None


def safe_name(name: str, what: str = "name") -> str:
    """``name`` unchanged when :func:`name_problem` accepts it; else :class:`DuplexevalError`
    ``"{what} {name!r} cannot be used in a file name: {why}"`` (one line: ``repr`` escapes
    control characters)."""
    problem = name_problem(name)
    if problem is not None:
        raise DuplexevalError(f"{what} {name!r} cannot be used in a file name: {problem}")
    return name


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike[str], suffix: str = "") -> Iterator[Path]:
    """Yield a temporary path next to ``path``; on success it is renamed onto ``path``.

    ``suffix`` is appended to the temporary name, for writers that pick a format from the file
    extension (e.g. ``".wav"`` for soundfile).
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(
        prefix=f".{target.name}.tmp-{os.getpid()}-", suffix=suffix, dir=target.parent
    )
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        yield tmp
        with open(tmp, "rb+") as handle:
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        raise


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    """Write ``data`` to ``path`` atomically."""
    with atomic_path(path) as tmp:
        tmp.write_bytes(data)


def atomic_write_text(path: str | os.PathLike[str], text: str) -> None:
    """Write UTF-8 ``text`` to ``path`` atomically."""
    atomic_write_bytes(path, text.encode("utf-8"))


def json_line(obj: Any) -> str:
    """One JSON object as a line (UTF-8 characters kept, M3 separators), with newline."""
    return json.dumps(obj, ensure_ascii=False) + "\n"


def read_json(path: Path, what: str = "file") -> Any:
    """The JSON in ``path``; a missing or malformed file is a one-line
    :class:`~duplexeval.errors.DuplexevalError` naming it (``what`` says what it should be)."""
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DuplexevalError(f"{path}: {what} not found") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise DuplexevalError(f"{path}: not valid JSON ({exc})") from None


def atomic_write_json(path: str | os.PathLike[str], obj: Any) -> None:
    """Write ``obj`` as indented JSON atomically."""
    atomic_write_text(path, json.dumps(obj, ensure_ascii=False, indent=2) + "\n")


def format_seconds(t: float) -> str:
    """Shortest text that reads back as the same float; whole numbers without ``.0``.

    ``3.91 -> "3.91"``, ``33.0 -> "33"``, ``0.0000625 -> "6.25e-05"``.
    """
    text = repr(float(t))
    if text.endswith(".0"):
        text = text[:-2]
    if text == "-0":
        text = "0"
    return text
