"""The data-quality report of a voiced dataset in the form of the M3 paper's Table 2
(``duplexeval data quality``), and the DNSMOS scores its test-set selection ranks by.

* **DNSMOS** (:mod:`duplexeval.speech._dnsmos`): P.835 SIG, BAK, OVRL and P.808 MOS of each
  channel of each dialogue, the whole channel as one clip (windows of 9.01 s every ``hop``
  seconds).  A dialogue's score is the mean of its channels' scores; the dataset's is the mean
  over dialogues.  Table 2's single "DNSMOS" column is taken to be OVRL (the paper does not say
  which of the four it reports); :data:`SELECTION_MEASURE` is what ``data split --dnsmos``
  ranks by.
* **ASR round trip** (:func:`.quality.asr_round_trip`): Whisper on every IPU of every channel
  against the aligned words: WER (English) or kana CER (Japanese).
* **Not computed** (:data:`NOT_COMPUTED`): the paper's other Table 2 columns, each with the
  reason, so a report never passes a missing measure off as zero.

All MOS values are on the 1-5 scale; durations are seconds (hours where named so).
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from duplexeval._audio import read_audio
from duplexeval.data._dialogue import Dataset, Dialogue
from duplexeval.speech._dnsmos import Dnsmos, DnsmosScores, model_provenance
from duplexeval.synth._quality import asr_round_trip

__all__ = ["MEASURES", "NOT_COMPUTED", "SELECTION_MEASURE", "dialogue_dnsmos",
           "dnsmos_dataset", "dnsmos_scores", "quality_table", "table2_rows"]

MEASURES = ("sig", "bak", "ovrl", "p808")
"""The DNSMOS measures, in the order reported."""
SELECTION_MEASURE = "ovrl"
"""The measure Table 2's "DNSMOS" column and the test-set selection use by default."""
NOT_COMPUTED = {
    "SQ-STOI": "needs the SQ (speech quality) reference pipeline of the full-duplex dataset "
               "work the paper follows; not available offline",
    "SQ-PESQ": "as SQ-STOI; PESQ itself is intrusive and needs a clean reference",
    "UTMOSv2": "no UTMOSv2 model is packaged for offline use",
    "CometKiwi": "translation quality estimation needs the CometKiwi model (gated weights); "
                 "only meaningful for translated (MT-QA ja) data",
}
"""The paper's Table 2 measures this report does not compute, with the reason."""


def dialogue_dnsmos(model: Dnsmos, dialogue: Dialogue, hop: float = 1.0) -> dict[str, Any]:
    """One dialogue's DNSMOS: ``{"channels": [scores of ch0, ch1], <measure>: mean over the
    channels}``; a silent channel (all zeros) is scored as is (DNSMOS rates it, poorly)."""
    if dialogue.audio is None:
        raise ValueError(f"{dialogue.id}: no audio")
    x, rate = read_audio(dialogue.audio.path)
    channels: list[DnsmosScores] = [model.score(x[:, c], rate, hop) for c in range(x.shape[1])]
    out: dict[str, Any] = {"channels": [c.to_json() for c in channels]}
    for measure in MEASURES:
        out[measure] = round(float(np.mean([getattr(c, measure) for c in channels])), 4)
    return out


def dnsmos_dataset(dataset: Dataset, hop: float = 1.0, jobs: int = 1,
                   model: Dnsmos | None = None,
                   progress: Callable[[str], None] | None = None) -> dict[str, dict[str, Any]]:
    """:func:`dialogue_dnsmos` of every dialogue with audio, keyed by id in dataset order
    (``jobs`` dialogues at once; the scores do not depend on it)."""
    model = model or Dnsmos()
    voiced = [d for d in dataset.dialogues if d.audio is not None]

    def one(dialogue: Dialogue) -> dict[str, Any]:
        scores = dialogue_dnsmos(model, dialogue, hop)
        if progress is not None:
            progress(dialogue.id)
        return scores

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        results = list(pool.map(one, voiced))
    return {d.id: r for d, r in zip(voiced, results, strict=True)}


def dnsmos_scores(per_dialogue: dict[str, dict[str, Any]],
                  measure: str = SELECTION_MEASURE) -> dict[str, float]:
    """``{dialogue id: score}`` for :func:`duplexeval.data._split.speaker_disjoint_split`."""
    if measure not in MEASURES:
        raise ValueError(f"unknown DNSMOS measure {measure!r} (one of {', '.join(MEASURES)})")
    return {i: float(s[measure]) for i, s in per_dialogue.items()}


def _summary(per_dialogue: dict[str, dict[str, Any]]) -> dict[str, Any]:
    if not per_dialogue:
        return {"dialogues": 0}
    rows = list(per_dialogue.values())
    out: dict[str, Any] = {"dialogues": len(rows)}
    for measure in MEASURES:
        values = [r[measure] for r in rows]
        by_channel = [[r["channels"][c][measure] for r in rows if len(r["channels"]) > c]
                      for c in (0, 1)]
        out[measure] = {"mean": round(float(np.mean(values)), 4),
                        "min": round(float(np.min(values)), 4),
                        "max": round(float(np.max(values)), 4),
                        "channel_means": [round(float(np.mean(v)), 4) if v else None
                                          for v in by_channel]}
    return out


def quality_table(dataset: Dataset, *, dnsmos: bool = True, asr: bool = True, hop: float = 1.0,
                  jobs: int = 1, transcriber: Any | None = None, model: Dnsmos | None = None,
                  progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """The report (see the module docstring): ``table2`` (the row of the paper's Table 2: each
    column's value, ``None`` when not computed), ``dnsmos`` (summary, per dialogue, model
    provenance), ``asr`` and ``not_computed`` (measure: reason)."""
    report: dict[str, Any] = {
        "dataset": dataset.name, "split": dataset.split, "language": dataset.language,
        "dialogues": len(dataset.dialogues),
        "hours": round(sum(d.duration for d in dataset.dialogues) / 3600, 4),
    }
    not_computed = dict(NOT_COMPUTED)
    table2: dict[str, float | None] = {"DNSMOS": None, **dict.fromkeys(NOT_COMPUTED)}
    if dnsmos:
        per = dnsmos_dataset(dataset, hop, jobs, model, progress)
        summary = _summary(per)
        report["dnsmos"] = {"measure": SELECTION_MEASURE, "hop_s": hop,
                            "model": model_provenance(), "summary": summary,
                            "dialogues": per}
        if per:
            table2["DNSMOS"] = summary[SELECTION_MEASURE]["mean"]
    else:
        not_computed["DNSMOS"] = "skipped (--no-dnsmos)"
    if asr:
        report["asr"] = asr_round_trip(dataset, transcriber, processes=jobs)
    else:
        not_computed["ASR round trip"] = "skipped (--no-asr)"
    report["table2"] = table2
    report["not_computed"] = not_computed
    return report


def table2_rows(report: dict[str, Any]) -> list[list[str]]:
    """``[measure, value]`` rows for printing: Table 2's columns, the DNSMOS breakdown, the ASR
    round trip; ``-`` for what was not computed."""
    rows = [[name, "-" if value is None else f"{value:.3f}"]
            for name, value in report["table2"].items()]
    summary = report.get("dnsmos", {}).get("summary", {})
    for measure in MEASURES:
        if measure in summary:
            ch = summary[measure]["channel_means"]
            rows.append([f"DNSMOS {measure.upper()} (ch0 / ch1)",
                         f"{summary[measure]['mean']:.3f} ({_fmt(ch[0])} / {_fmt(ch[1])})"])
    asr = report.get("asr")
    if asr and asr.get("metric") not in (None, "none"):
        rows.append([f"ASR round trip {asr['metric']}",
                     f"{asr['value']:.3f} ({asr['ipus']} IPUs)"])
    return rows


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"

