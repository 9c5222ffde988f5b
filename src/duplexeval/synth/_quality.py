"""Data quality of a synthesized (or any aligned, voiced) dataset.

* **ASR round trip** - every IPU (a channel's words merged across silences of at most 0.5 s) is
  transcribed from its own channel with Whisper (offline base by default; the IPUs of a channel
  go through :meth:`Transcriber.transcribe` as regions, packed into Whisper windows) and each
  recognised word is given to the nearest IPU; then compared with the aligned words: word
  error rate for English (lower case, numbers spelled out, punctuation removed), character error
  rate after kana normalisation for Japanese (:func:`duplexeval.speech._japanese.to_kana`: both
  sides to katakana, punctuation stripped, so "3時" and "三時" agree).  Corpus-level rates:
  total edits over total reference words (characters).
* **Timing** - the two-sample Kolmogorov-Smirnov distance between the dataset's turn-shift gaps
  (``end - start`` of TURN_SHIFT events) and a reference sample of gaps.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import jiwer
import numpy as np
from scipy import stats

from duplexeval._audio import read_audio
from duplexeval.data._dialogue import Dataset
from duplexeval.events import EventKind, ipus_from_spans
from duplexeval.timeline import Span

__all__ = ["asr_round_trip", "gap_distance", "normalize_en", "quality_report"]

_PUNCT = re.compile(r"[^\w\s']")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


def _spell(match: re.Match[str]) -> str:
    from num2words import num2words

    token = match.group(0).replace(",", "")
    value = float(token) if "." in token else int(token)
    # four-digit whole numbers are read as years ("1818": eighteen eighteen)
    year = isinstance(value, int) and 1100 <= value <= 2099 and value % 1000 >= 10
    return " " + num2words(value, to="year" if year else "cardinal") + " "


FILLERS = frozenset({"mm", "mmm", "hm", "hmm", "mhm", "mmhm", "uh", "um", "huh", "uhhuh", "m",
                     "h", "ah", "er", "erm"})
"""Filler and backchannel sounds left out of the English WER (spelled every which way by ASR:
"mm-hm", "m m h m", "mhm"), as Whisper's own English normaliser does."""


def normalize_en(text: str) -> str:
    """Lower case, numbers spelled out (num2words; 1100-2099 read as years), punctuation (but
    apostrophes) removed, hyphens split, fillers (:data:`FILLERS`) dropped, spaces collapsed."""
    text = _NUMBER.sub(_spell, text.lower().replace("%", " percent"))
    text = text.replace("-", " ")
    return " ".join(w for w in _PUNCT.sub(" ", text).split() if w not in FILLERS)


def _normalize(text: str, language: str) -> str:
    if language == "ja":
        from duplexeval.speech._japanese import to_kana

        return " ".join(to_kana(text))  # characters as tokens: the CER
    return normalize_en(text)


def asr_round_trip(dataset: Dataset, transcriber: Any | None = None,
                   pad: float = 0.05, processes: int = 1) -> dict[str, Any]:
    """Transcribe every IPU of every dialogue and compare with its aligned words.  The two
    channels of a dialogue go to Whisper in one call (their windows decoded side by side by
    ``processes`` workers when this function makes the transcriber)."""
    own = transcriber is None
    if transcriber is None:
        from duplexeval.speech._asr import Transcriber

        transcriber = Transcriber(processes=processes)
    try:
        return _round_trip(dataset, transcriber, pad)
    finally:
        if own:
            transcriber.close()


def _round_trip(dataset: Dataset, transcriber: Any, pad: float) -> dict[str, Any]:
    language = dataset.language or "en"
    refs: list[str] = []
    hyps: list[str] = []
    worst: list[tuple[float, str, str, str]] = []
    for d in dataset.dialogues:
        if d.audio is None or not d.words:
            continue
        lang = d.language or language
        x, rate = read_audio(d.audio.path)
        layouts = []
        for channel in (0, 1):
            words = d.words_on(channel)
            ipus = [ipu.span for ipu in ipus_from_spans(channel, [w.span for w in words])]
            if ipus:
                layouts.append((channel, words, ipus))
        heard_all = transcriber.transcribe_many(
            [(x[:, channel], rate, [Span(max(0.0, u.start - pad), u.end + pad) for u in ipus])
             for channel, _, ipus in layouts], lang)
        for (_, words, ipus), got in zip(layouts, heard_all, strict=True):
            heard: list[list[str]] = [[] for _ in ipus]
            for w in got:  # each recognised word to the IPU nearest its middle
                mid = (w.start + w.end) / 2
                k = min(range(len(ipus)), key=lambda i: max(ipus[i].start - mid,
                                                            mid - ipus[i].end, 0.0))
                heard[k].append(w.text)
            for ipu, hyp_words in zip(ipus, heard, strict=True):
                inside = [w.text for w in words
                          if w.start >= ipu.start - 1e-6 and w.end <= ipu.end + 1e-6]
                ref = _normalize(("" if lang == "ja" else " ").join(inside), lang)
                if not ref:
                    continue
                hyp = _normalize(("" if lang == "ja" else " ").join(hyp_words), lang)
                refs.append(ref)
                hyps.append(hyp)
                err = jiwer.wer(ref, hyp) if hyp else 1.0
                worst.append((err, d.id, ref, hyp))
    if not refs:
        return {"metric": "none", "units": 0}
    rate_value = jiwer.wer(refs, [h if h else "∅" for h in hyps])
    worst.sort(key=lambda t: -t[0])
    return {
        "metric": "kana_cer" if language == "ja" else "wer",
        "value": rate_value,
        "ipus": len(refs),
        "units": sum(len(r.split()) for r in refs),
        "worst": [{"error": e, "dialogue": i, "reference": r, "asr": h}
                  for e, i, r, h in worst[:5]],
    }


def turn_shift_gaps(dataset: Dataset) -> list[float]:
    """``end - start`` of every TURN_SHIFT event (seconds; negative: overlap)."""
    return [e.end - e.start for d in dataset.dialogues for e in d.events
            if e.kind == EventKind.TURN_SHIFT]


def gap_distance(produced: Sequence[float], reference: Sequence[float],
                 resolution: float = 0.01) -> dict[str, Any]:
    """Two-sample KS distance between produced and reference turn-shift gaps, both rounded to
    ``resolution`` seconds (the M3 annotations' 10 ms): a gap drawn as 0.2 s and measured as
    0.201 s after millisecond word rounding must not count as a different value, which would
    dominate the distance where the reference has many ties (the QA toy set: 40 of 64 gaps are
    0.20 s)."""
    if not produced or not reference:
        return {"ks": None, "n": len(produced), "n_reference": len(reference)}
    a = np.round(np.asarray(produced) / resolution) * resolution
    b = np.round(np.asarray(reference) / resolution) * resolution
    result = stats.ks_2samp(a, b)
    return {"ks": float(result.statistic), "p_value": float(result.pvalue),
            "n": len(produced), "n_reference": len(reference),
            "median": float(np.median(produced)),
            "median_reference": float(np.median(reference))}


def quality_report(dataset: Dataset, reference_gaps: Sequence[float],
                   transcriber: Any | None = None, asr: bool = True,
                   processes: int = 1) -> dict[str, Any]:
    """The quality report of a voiced, aligned dataset (see the module docstring);
    ``processes``: of the round trip's own transcriber (without ``transcriber``)."""
    report: dict[str, Any] = {
        "dialogues": len(dataset.dialogues),
        "seconds": round(sum(d.duration for d in dataset.dialogues), 3),
        "events": {k.value: sum(1 for d in dataset.dialogues for e in d.events if e.kind == k)
                   for k in EventKind},
        "timing": gap_distance(turn_shift_gaps(dataset), reference_gaps),
    }
    if asr:
        report["asr"] = asr_round_trip(dataset, transcriber, processes=processes)
    return report
