"""The judge's answer cache: one SQLite file (stdlib ``sqlite3``, WAL mode), one row per
answered call.

Conventions:

* The key is the sha256 (hex) of a canonical JSON of the judge model, the prompt id and
  version, the rendered messages and the sampling settings (:func:`cache_key`).  The endpoint
  URL is not part of it: the model name stands for the judge.
* A row is written as soon as an answer arrives, before it is parsed, so a killed run loses
  at most the calls in flight, and a cached answer is never requested again.  Answers that do
  not parse are cached too (re-parsing them gives the same verdict); calls that finally failed
  are not, so the next run tries them again.
* Stored per row: the key, model, prompt id and version, the raw answer text, the usage token
  counts and the UTC time.  The API key is never stored, and neither are the messages.
* The file lives where the caller says; :func:`default_cache_path` is
  ``cache_root()/judge/answers.sqlite``.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

from duplexeval._cache import cache_root
from duplexeval.judge._records import JudgeItem, Sampling

__all__ = ["AnswerCache", "CachedAnswer", "cache_key", "default_cache_path"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS answers (
    key TEXT PRIMARY KEY,
    judge_model TEXT NOT NULL,
    prompt_id TEXT NOT NULL,
    prompt_version INTEGER NOT NULL,
    raw TEXT NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    created_utc TEXT NOT NULL
)
"""


def default_cache_path() -> Path:
    """``cache_root()/judge/answers.sqlite`` (the folder is created when the cache opens)."""
    return cache_root() / "judge" / "answers.sqlite"


def cache_key(judge_model: str, item: JudgeItem, sampling: Sampling) -> str:
    """The sha256 hex digest identifying one call."""
    payload = {"judge_model": judge_model, "prompt_id": item.prompt.prompt_id,
               "prompt_version": item.prompt.version,
               "messages": [list(m) for m in item.messages], "sampling": asdict(sampling)}
    text = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class CachedAnswer:
    """One stored answer."""

    raw: str
    prompt_tokens: int
    completion_tokens: int


class AnswerCache:
    """The cache file, shared by the batch's threads (one connection behind a lock)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute(_SCHEMA)

    def get(self, key: str) -> CachedAnswer | None:
        """The stored answer for ``key``, if any."""
        with self._lock:
            row = self._db.execute("SELECT raw, prompt_tokens, completion_tokens FROM answers "
                                   "WHERE key = ?", (key,)).fetchone()
        return CachedAnswer(*row) if row else None

    def put(self, key: str, item: JudgeItem, judge_model: str, answer: CachedAnswer) -> None:
        """Store one answer (committed at once; an existing row for the key is kept)."""
        now = datetime.now(UTC).isoformat(timespec="seconds")
        with self._lock:
            self._db.execute(
                "INSERT OR IGNORE INTO answers VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (key, judge_model, item.prompt.prompt_id, item.prompt.version, answer.raw,
                 answer.prompt_tokens, answer.completion_tokens, now))

    def __len__(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM answers").fetchone()[0])

    def close(self) -> None:
        """Close the connection (SQLite checkpoints the WAL into the main file)."""
        with self._lock:
            self._db.close()

    def __enter__(self) -> AnswerCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
