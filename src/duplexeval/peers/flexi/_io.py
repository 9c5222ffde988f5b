"""Reading FLEXI's output folders as its evaluators read them (``ChristineCHEN274/FLEXI``
@2247b0d, ``evaluate/eval_*.py``).

A FLEXI output root holds one folder per dialog (``dialog_N``) with:

* ``output.json``: the model's words, ``{"text": ..., "chunks": [{"text": w, "timestamp":
  [start, end]}, ...]}`` in seconds (FLEXI's ``tools/asr_tool/asr.py``);
* ``input.json``: the user's words, same shape;
* ``*turn_taking.json`` (turn taking): ``[{"timestamp": [t, ...]}]``; ``t`` is read as the
  user's end (``eval_turn_taking.py`` l. 34, 50);
* ``pause.json``: ``{"timestamp": [pause_start, pause_end]}``;
* ``interrupt.json``: ``[{"timestamp": [start, end], "context": ..., "interrupt": ...}]``;
* ``metadata.json`` (user backchannel): ``{"user_backchannel_times": [t, ...]}``;
* ``output.wav`` (model backchannel): the model's audio, for VAD and its duration.

Which folders are samples follows each evaluator: turn taking, model interrupt and model
backchannel list the root's folders; pause handling every folder below the root; user
interrupt and user backchannel every folder from the root down (the root included) holding
the files they need.  Sample names are the folder paths relative to the root (``"."`` for the
root itself), in natural order (``dialog_2`` before ``dialog_10``).

Errors: a file the evaluator would crash on is a one-line
:class:`~duplexeval.errors.DuplexevalError` naming it; a file it would skip over is returned
as a reason (the caller writes the sample as skipped).
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

from duplexeval._fileio import loads_json, read_json
from duplexeval.errors import DuplexevalError
from duplexeval.metrics.timing._flexi_rules import Word

__all__ = ["INPUT_JSON", "OUTPUT_JSON", "chunk_time", "find_file", "load_json", "natural_key",
           "number", "parse_words", "recursive_dirs", "sample_name", "timestamp_pair",
           "top_level_dirs", "try_load_json"]

OUTPUT_JSON = "output.json"
INPUT_JSON = "input.json"


def natural_key(name: str) -> list[Any]:
    """Sort key putting ``dialog_2`` before ``dialog_10``."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]


def sample_name(root: Path, folder: Path) -> str:
    """The folder's path relative to the root, POSIX style (``"."`` for the root)."""
    rel = folder.relative_to(root).as_posix()
    return rel or "."


def _check_root(root: Path) -> None:
    if not root.is_dir():
        raise DuplexevalError(f"{root}: not a folder (expected FLEXI's dialog_N folders)")


def top_level_dirs(root: Path) -> list[Path]:
    """The root's folders, natural order (hidden ones such as ``.git`` left out)."""
    _check_root(root)
    dirs = [p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")]
    return sorted(dirs, key=lambda p: natural_key(p.name))


def recursive_dirs(root: Path, include_root: bool) -> list[Path]:
    """Every folder below the root (and the root itself when asked), as ``os.walk`` visits
    them, in natural order of their relative paths."""
    _check_root(root)
    dirs = [p for p in root.rglob("*") if p.is_dir()
            and not any(part.startswith(".") for part in p.relative_to(root).parts)]
    if include_root:
        dirs.append(root)
    return sorted(dirs, key=lambda p: natural_key(sample_name(root, p)))


def find_file(folder: Path, suffix: str) -> Path | None:
    """The first file (sorted by name) in ``folder`` whose name ends with ``suffix``."""
    found = sorted(p for p in folder.iterdir() if p.is_file() and p.name.endswith(suffix))
    return found[0] if found else None


def load_json(path: Path, what: str) -> Any:
    """The JSON in ``path``; missing or malformed: a one-line error naming it."""
    return read_json(path, what)


def try_load_json(path: Path) -> tuple[Any, str | None]:
    """``(data, None)``, or ``(None, reason)`` when the file is missing or not JSON (the
    evaluators that skip such samples: pause handling, user interrupt, user backchannel)."""
    try:
        return loads_json(path.read_text(encoding="utf-8")), None
    except FileNotFoundError:
        return None, f"missing file {path.name}"
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        return None, f"{path.name} is not valid JSON ({exc})"
    except RecursionError:  # found by fuzzing: a JSON array nested thousands deep
        return None, f"{path.name} is nested too deeply to read"


def _number_or_none(value: Any, allow_none: bool) -> float | None:
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) \
            or not math.isfinite(value):
        raise ValueError(f"expected a number, got {value!r}")
    return float(value)


def _word(chunk: Any, allow_none: bool) -> Word:
    if not isinstance(chunk, dict):
        raise ValueError("a chunk must be an object with text and timestamp")
    stamp = chunk.get("timestamp")
    if not isinstance(stamp, list) or len(stamp) < 2:
        raise ValueError(f"timestamp must be [start, end], got {stamp!r}")
    text = chunk.get("text", "")
    if not isinstance(text, str):
        raise ValueError(f"text must be a string, got {text!r}")
    return Word(text, _number_or_none(stamp[0], allow_none),
                _number_or_none(stamp[1], allow_none))


def parse_words(data: Any, path: Path, *, required: bool = True,
                allow_none: bool = False) -> list[Word]:
    """The ``chunks`` of an ``input.json``/``output.json`` as words.

    ``required``: a missing ``chunks`` key is an error (the evaluators that index it) rather
    than no words (those that ``.get`` it).  ``allow_none``: ``null`` times are kept as
    ``None`` (model backchannel handles them) rather than an error."""
    if not isinstance(data, dict):
        raise DuplexevalError(f"{path}: expected a JSON object with 'chunks'")
    if "chunks" not in data and not required:
        return []
    chunks = data.get("chunks")
    if not isinstance(chunks, list):
        raise DuplexevalError(f"{path}: 'chunks' must be a list")
    words = []
    for i, chunk in enumerate(chunks):
        try:
            words.append(_word(chunk, allow_none))
        except ValueError as exc:
            raise DuplexevalError(f"{path}: chunks[{i}]: {exc}") from None
    return words


def number(value: Any, path: Path, where: str) -> float:
    """A finite number (seconds); anything else is an error naming the file."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) \
            or not math.isfinite(value):
        raise DuplexevalError(f"{path}: {where} must be a number, got {value!r}")
    return float(value)


def timestamp_pair(value: Any, path: Path, where: str) -> tuple[float, float]:
    """``[start, end]`` numbers (seconds); anything else is an error naming the file."""
    if not isinstance(value, list) or len(value) < 2:
        raise DuplexevalError(f"{path}: {where} must be [start, end], got {value!r}")
    return number(value[0], path, f"{where}[0]"), number(value[1], path, f"{where}[1]")


def chunk_time(data: Any, path: Path, index: int, position: int, min_len: int) -> float | None:
    """``chunks[index].timestamp[position]`` as FLEXI's small readers take it: ``None`` when
    there are no chunks, no timestamp list of at least ``min_len`` items, or a ``null`` there
    (``eval_pause_handing.py`` l. 38-56, ``eval_model_interrupt.py`` l. 29-50); a chunk that is
    not an object, or a time that is not a number, is an error (the code crashes)."""
    if not isinstance(data, dict):
        raise DuplexevalError(f"{path}: expected a JSON object with 'chunks'")
    chunks = data.get("chunks")
    if not isinstance(chunks, list) or not chunks:
        return None
    chunk = chunks[index]
    if not isinstance(chunk, dict):
        raise DuplexevalError(f"{path}: chunks[{index}] must be an object")
    stamp = chunk.get("timestamp")
    if not isinstance(stamp, list) or len(stamp) < min_len or stamp[position] is None:
        return None
    return number(stamp[position], path, f"chunks[{index}].timestamp[{position}]")
