"""Atomic file writes, and the rule for names that become part of a path.

A reader never sees a half-written file, and an interrupted writer leaves the old file (or
no file) in place.  Temporary files are named ``.{name}.tmp-{pid}-{random}`` and removed on
error; the file gets the mode a plain ``open`` would give it (``0o666`` less the umask), not
the ``0o600`` of a temporary file.

JSON is strict: :func:`atomic_write_json` and :func:`json_line` never write the tokens
``NaN``/``Infinity`` (not JSON; most readers reject them).  A value that is not a finite number
becomes ``null`` and, in an object, the key ``{key}_reason`` beside it says what it was
(:func:`strict_json`); the dump itself is made with ``allow_nan=False``.

Ids and names read from input files or code (dialogue ids, spec ids, suite and system names)
become file and folder names (``audio/{id}.wav``, ``samples/{id}/...``, ``runs/{system}-...``).
:func:`name_problem` / :func:`safe_name` is the one rule they pass, so that none of them can
point outside the folder it is joined to.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import tempfile
import unicodedata
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from duplexeval.errors import DuplexevalError

__all__ = [
    "NAME_MAX",
    "atomic_path",
    "atomic_write_bytes",
    "atomic_write_json",
    "atomic_write_text",
    "exclusive_lock",
    "foreign_folder_problem",
    "format_seconds",
    "has_non_finite",
    "json_line",
    "loads_json",
    "name_problem",
    "output_problem",
    "overwrite_problem",
    "process_alive",
    "read_json",
    "remove_stale_temporaries",
    "safe_name",
    "sha256_file",
    "sources_digest",
    "strict_json",
]

NAME_MAX = 255
"""The longest file or folder name, in bytes (UTF-8), that common file systems take."""


def name_problem(name: str) -> str | None:
    """Why ``name`` cannot be used as one file or folder name, or ``None`` when it can.

    Refused: the empty name, a path separator (``/`` or ``\\``), ``..`` anywhere, a leading
    ``.`` (hidden files, ``.`` itself), control characters (Unicode category Cc, e.g. NUL,
    newline, DEL), lone surrogates (category Cs) and names longer than :data:`NAME_MAX`
    bytes (with the ``.wav``/``.json`` a file adds: 240).  Everything else (letters of any
    script, digits, ``-_.:`` and spaces) is allowed.
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
    if any(unicodedata.category(c) == "Cs" for c in name):  # "\ud800" in a JSON string
        return "contains a lone surrogate (not Unicode text)"
    if len(name.encode("utf-8")) > NAME_MAX - 15:
        return f"longer than {NAME_MAX - 15} bytes"
    return None


def foreign_folder_problem(path: Path, marks: Sequence[str], what: str) -> str | None:
    """Why ``path`` cannot be the output folder of a command that writes ``what`` (a run
    directory, a bundle), or ``None``: it exists and holds files or folders (hidden ones
    aside: a killed command's lock) but none of ``marks``, the names such a folder has, so it
    is another thing's folder (the current folder, a dataset, ``/``) that the outputs would be
    mixed into."""
    if not path.is_dir():
        return None
    try:
        entries = [name for name in os.listdir(path) if not name.startswith(".")]
    except OSError:
        return None  # unreadable: the write itself reports it
    if not entries or any((path / mark).exists() for mark in marks):
        return None
    return (f"{path}: holds other files and is not {what}; give a new or empty folder "
            "(or one this command wrote before, to resume it)")


def overwrite_problem(out: Path, source: Path) -> str | None:
    """Why writing the output file ``out`` would replace what the command reads from
    ``source`` (a file, or a folder whose files it reads), or ``None``: ``out`` is ``source``
    itself or a file already inside it (``segment ds -o ds/test.jsonl`` replaced the dataset
    it read)."""
    try:
        target, read = out.resolve(), source.resolve()
    except (OSError, RuntimeError):  # a symlink loop: reading the input reports it
        return None
    if target == read or (read.is_dir() and target.is_file() and target.is_relative_to(read)):
        return f"{out}: is a file of the input {source}; write the output elsewhere"
    return None


def output_problem(path: Path, folder: bool) -> str | None:
    """Why ``path`` cannot be written as an output (a folder with ``folder``, else a file),
    checked before any work; ``None`` when it can.  Refused: a name longer than
    :data:`NAME_MAX` bytes anywhere in it, a file where the folder should be (or a folder where
    the file should be), a file among its parents, and a parent that cannot be written (not
    shown by the tests, which run as root)."""
    for part in path.parts:
        if len(os.fsencode(part)) > NAME_MAX:
            return f"{path}: a name in it is longer than {NAME_MAX} bytes"
    if folder and path.exists() and not path.is_dir():
        return f"{path}: is a file, not a folder"
    if not folder and path.is_dir():
        return f"{path}: is a folder, not a file"
    existing = next((p for p in path.parents if p.exists()), Path("."))
    if not existing.is_dir():
        return f"{existing}: is a file, so {path} cannot be made under it"
    if not os.access(existing, os.W_OK | os.X_OK):
        return f"{existing}: not writable, so {path} cannot be written"
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
        os.chmod(tmp, _file_mode())
        yield tmp
        with open(tmp, "rb+") as handle:
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        raise


def _file_mode() -> int:
    """``0o666`` less the process's umask (read without changing it where ``/proc`` says)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return 0o666 & ~int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)  # no /proc: set and restore (not thread-safe, but brief)
    os.umask(mask)
    return 0o666 & ~mask


def remove_stale_temporaries(folder: Path) -> int:
    """Remove the temporary files (``.{name}.tmp-{pid}-{random}``, see :func:`atomic_path`)
    that a killed writer left anywhere under ``folder``, so that a command run again after a
    kill leaves the folder an uninterrupted one would; a file whose writer process is still
    alive is kept.  Returns how many were removed."""
    removed = 0
    if not folder.is_dir():
        return 0
    for path in folder.rglob(".*.tmp-*"):
        pid = path.name.split(".tmp-", 1)[1].split("-", 1)[0]
        if pid.isdigit() and process_alive(int(pid)):
            continue
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
            removed += 1
    return removed


def process_alive(pid: int) -> bool:
    """True while process ``pid`` exists (another user's included)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    """Write ``data`` to ``path`` atomically."""
    with atomic_path(path) as tmp:
        tmp.write_bytes(data)


def atomic_write_text(path: str | os.PathLike[str], text: str) -> None:
    """Write UTF-8 ``text`` to ``path`` atomically."""
    atomic_write_bytes(path, text.encode("utf-8"))


def json_line(obj: Any) -> str:
    """One JSON object as a line (UTF-8 characters kept, M3 separators), with newline."""
    return json.dumps(strict_json(obj), ensure_ascii=False, allow_nan=False) + "\n"


JSON_INT_DIGITS = 300
"""Digits up to which a JSON integer is read exactly (a 63-bit seed has 19; a float's range
ends at 309)."""


def _json_int(text: str) -> int | float:
    """A JSON integer literal: an ``int`` up to :data:`JSON_INT_DIGITS` digits, past that a
    ``float`` (``inf``), so that a huge number in a file reaches the readers' checks of
    finite, in-range numbers instead of Python's 4,300-digit limit on ``int()``
    (``ValueError``) or an ``OverflowError`` where it is made a float."""
    return int(text) if len(text.lstrip("-")) <= JSON_INT_DIGITS else float(text)


def loads_json(text: str | bytes) -> Any:
    """``json.loads`` for the files a user gives (datasets, specs, run files, results): an
    integer of more than :data:`JSON_INT_DIGITS` digits becomes ``inf`` (:func:`_json_int`),
    which the reader then refuses as not finite."""
    return json.loads(text, parse_int=_json_int)


def read_json(path: Path, what: str = "file") -> Any:
    """The JSON in ``path``; a missing or malformed file is a one-line
    :class:`~duplexeval.errors.DuplexevalError` naming it (``what`` says what it should be)."""
    try:
        return loads_json(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DuplexevalError(f"{path}: {what} not found") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise DuplexevalError(f"{path}: not valid JSON ({exc})") from None
    except RecursionError:
        raise DuplexevalError(f"{path}: nested too deeply to read") from None


def sources_digest(package: Path, sources: tuple[str, ...]) -> str:
    """SHA-256 over the files ``sources`` name under ``package`` (files, folders taken whole,
    or glob patterns such as ``suites/*.py``; relative paths and bytes, sorted; ``__pycache__``
    left out): the key part that makes a cache entry the current code's."""
    h = hashlib.sha256()
    for source in sources:
        root = package / source
        found = sorted(package.glob(source)) if "*" in source else \
            [root] if root.is_file() else root.rglob("*")
        files = sorted(p for p in found if p.is_file() and "__pycache__" not in p.parts)
        for path in files:
            h.update(path.relative_to(package).as_posix().encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


def sha256_file(path: Path) -> str:
    """The SHA-256 of a file's bytes, in hex (read in 1 MiB blocks)."""
    h = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def atomic_write_json(path: str | os.PathLike[str], obj: Any) -> None:
    """Write ``obj`` as indented JSON atomically."""
    atomic_write_text(path, json.dumps(strict_json(obj), ensure_ascii=False, indent=2,
                                       allow_nan=False) + "\n")


def strict_json(obj: Any) -> Any:
    """``obj`` with every float that is not finite replaced by ``None``; in a dict, the key
    ``{key}_reason`` is added beside it (``"not a number (NaN)"``, ``"infinite (inf)"``), unless
    the dict has that key already.  Objects without such floats are returned as they are."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        if not any(has_non_finite(v) for v in obj.values()):
            return obj
        out: dict[Any, Any] = {}
        for key, value in obj.items():
            out[key] = strict_json(value)
            if isinstance(value, float) and not math.isfinite(value) \
                    and f"{key}_reason" not in obj:
                out[f"{key}_reason"] = ("not a number (NaN)" if math.isnan(value)
                                        else f"infinite ({value})")
        return out
    if isinstance(obj, (list, tuple)):
        return [strict_json(v) for v in obj] if any(has_non_finite(v) for v in obj) else obj
    return obj


def has_non_finite(obj: Any) -> bool:
    """Whether a JSON value (dicts, lists, numbers) holds a NaN or infinite float."""
    if isinstance(obj, float):
        return not math.isfinite(obj)
    if isinstance(obj, dict):
        return any(has_non_finite(v) for v in obj.values())
    if isinstance(obj, (list, tuple)):
        return any(has_non_finite(v) for v in obj)
    return False


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


@contextlib.contextmanager
def exclusive_lock(lock: Path) -> Iterator[None]:
    """Hold an advisory lock on the file ``lock`` (created if absent) for the ``with`` block:
    one holder at a time across processes (POSIX ``flock``, blocking; elsewhere no lock).  The
    suite builds and the official-data downloads use it so that parallel test workers or two
    terminals never build or import one thing twice at once."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    with lock.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
