"""Text in and out of the Moshi text stream (12.5 Hz, one token per frame).

Forcing (the reference words, as the runner hands them: the words whose start falls in the
frame, space-joined)::

    frame        t0        t0+1      t0+2      t0+3      t0+4
    words        "hello there"                 "ok"
    tokens       ▁hello    ▁there    PAD       ▁ok       PAD

A word's pieces (the checkpoint's own SentencePiece model, so J-Moshi and LLM-jp-Moshi get
theirs; the words of a frame are encoded together, joined by spaces, or by nothing for
languages written without spaces: Japanese and Chinese) start at its onset frame and take one
frame each; pieces that collide with a later word push it back; frames with nothing to say get
the padding token.  Moshi's training streams also carry an end-of-padding token in the frame
before each word (M3's interleaver writes it); a frame-synchronous session learns of a word
only in its onset frame, so that token is not written.  When forcing stops, pieces still
queued are dropped: the model continues freely.

Output: a sampled token is shown as its piece with "▁" as a space; the padding and
end-of-padding tokens (and ids outside the tokenizer) show nothing, as moshi's server does.
"""

from __future__ import annotations

from typing import Any

__all__ = ["UNSPACED_LANGUAGES", "TextForcing", "piece_text"]

UNSPACED_LANGUAGES = frozenset({"ja", "zh"})


class TextForcing:
    """The queue of reference pieces not yet forced (plain data: ``queue``)."""

    def __init__(self, tokenizer: Any, pad_id: int, language: str | None = None) -> None:
        self.tokenizer = tokenizer
        self.pad_id = pad_id
        self.joiner = "" if language in UNSPACED_LANGUAGES else " "
        self.queue: list[int] = []

    def next(self, words: str) -> int:
        """The text token of a forced frame whose starting words are ``words``."""
        words = self.joiner.join(words.split())
        if words:
            self.queue.extend(int(i) for i in self.tokenizer.encode(words))
        return self.queue.pop(0) if self.queue else self.pad_id

    def clear(self) -> None:
        self.queue.clear()


def piece_text(tokenizer: Any, token: int, silent: tuple[int, ...]) -> str:
    """What a sampled text token shows ("" for padding and ids outside the tokenizer)."""
    if token in silent or not 0 <= token < tokenizer.vocab_size():
        return ""
    return str(tokenizer.id_to_piece(token)).replace("▁", " ")
