"""``duplexeval judge-agreement``: two judges' scores of the same content items and their
agreement (:mod:`duplexeval.metrics.content._judge_pairs`), so that a cheap local judge can be
measured against the official one before it is trusted.

Two sources:

* **a run** (:func:`judge_run`): the items are those ``duplexeval score RUN_DIR`` judges,
  built the same way (:func:`~duplexeval.metrics.content._score.score_content`) from the run's
  analysis as it is on disk, its reference dialogues and the content options; each judge is
  asked every item through the answer cache, so a re-run makes no call.  Nothing is written
  into the run: without a complete analysis with content transcripts (``duplexeval score
  RUN_DIR`` makes one) the command refuses, naming the file, rather than analyse.  The answer
  cache keys answers by the judge's model name, not its URL, so the two judges must have
  different model names.
* **two content files** (:func:`compare_files`): ``content.jsonl`` files (or scores folders
  holding one) of two scorings, paired item by item; every score is checked against its
  prompt's range, naming the file and line.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from duplexeval.errors import DuplexevalError
from duplexeval.judge._templates import load_prompt
from duplexeval.metrics._m3_metadata import read_m3_outputs
from duplexeval.metrics._score_run import run_dialogues, with_rounds
from duplexeval.metrics.content._inputs import CONTENT_EVENT_TYPES, ContentOptions
from duplexeval.metrics.content._judge_pairs import DimensionAgreement, compare_records
from duplexeval.metrics.content._judged import RULE_MODEL
from duplexeval.metrics.content._rounds import RoundFinder
from duplexeval.metrics.content._score import JudgeSettings, score_content
from duplexeval.results._content import ContentRecord
from duplexeval.results._reader import read_content_records
from duplexeval.runs._directory import AnalysisFiles, RunDir, ScoreFiles, open_run

__all__ = ["AgreementReport", "JudgeSide", "compare_files", "judge_run"]


@dataclass(frozen=True)
class JudgeSide:
    """One judge: its label (``A``, ``B``), model(s), where its scores came from, its
    records, the usage line of its calls (``None`` for a file) and the first reason it left
    an item unscored (``None`` when it scored every item it was asked)."""

    label: str
    model: str
    source: str
    records: list[ContentRecord]
    usage: str | None = None
    first_unscored: str | None = None


@dataclass(frozen=True)
class AgreementReport:
    """What ``judge-agreement`` prints: the source, the two judges and each dimension."""

    mode: str
    """``run`` or ``files``."""
    source: str
    judges: tuple[JudgeSide, JudgeSide]
    dimensions: list[DimensionAgreement]
    confidence: float


def _first_unscored(records: list[ContentRecord]) -> str | None:
    return next((r.unscored_reason for r in records
                 if r.judge_model != RULE_MODEL and r.score is None), None)


def _side(label: str, model: str, source: str, records: list[ContentRecord],
          usage: str | None = None) -> JudgeSide:
    return JudgeSide(label, model, source, records, usage, _first_unscored(records))


def _analysis(run: RunDir) -> AnalysisFiles:
    """The run's analysis, checked to be complete and to hold content transcripts."""
    files = run.analysis()
    settings = files.read_settings()
    if settings is None or not files.metadata.is_file():
        missing = files.settings if settings is None else files.metadata
        raise DuplexevalError(f"{missing}: not found, so the run has no complete analysis; "
                              f"`duplexeval score {run.root}` makes one")
    types = settings.get("content_event_types") or []
    if settings.get("asr") in (None, "none") or not set(CONTENT_EVENT_TYPES) <= set(types):
        raise DuplexevalError(f"{files.settings}: the analysis is timing-only (no content "
                              f"transcripts); `duplexeval score {run.root}` with ASR makes them")
    return files


def judge_run(run_dir: Path, a: JudgeSettings, b: JudgeSettings,
              content: ContentOptions | None = None, confidence: float = 0.95,
              ) -> AgreementReport:
    """Ask judges ``a`` and ``b`` every content item of the run (module docstring)."""
    if a.model == b.model:
        raise DuplexevalError(f"both judges are model {a.model!r}: the answer cache keys "
                              "answers by model name, so B would get A's answers; serve them "
                              "under different names")
    run = open_run(run_dir)
    files = _analysis(run)
    dialogues, missing = run_dialogues(run)
    language, domain = run.dataset_language()
    events, _meta = read_m3_outputs(files.root, AnalysisFiles.TRANSCRIPT_FIELD, language, domain)
    events = with_rounds(events, dialogues, RoundFinder())
    content = content or ContentOptions()
    if not score_content(events, dialogues, content, dialogues_missing=missing).inputs:
        raise DuplexevalError(f"{files.metadata}: no content items to judge (no TURN_SHIFT "
                              "event and no annotated item among the run's samples)")
    sides = []
    for label, judge in (("A", a), ("B", b)):
        done = score_content(events, dialogues, content, judge, dialogues_missing=missing)
        sides.append(_side(label, judge.model, judge.base_url, done.judged, done.usage_line))
    return AgreementReport("run", str(run.root), (sides[0], sides[1]),
                           compare_records(sides[0].records, sides[1].records, confidence),
                           confidence)


def _checked(path: Path) -> list[ContentRecord]:
    """The records of a content file, each score within its prompt's range."""
    records = read_content_records(path)
    file = ScoreFiles(path).content if path.is_dir() else path
    if not records:
        raise DuplexevalError(f"{file}: no content items (the file is empty)")
    seen: set[tuple[str, str]] = set()
    for no, r in enumerate(records, start=1):
        try:
            prompt = load_prompt(r.prompt_id).prompt
        except KeyError:
            raise DuplexevalError(f"{file}: record {no}: unknown prompt {r.prompt_id!r}") from None
        if r.score is not None and not prompt.score_min <= r.score <= prompt.score_max:
            raise DuplexevalError(f"{file}: record {no}: score {r.score} outside "
                                  f"{r.prompt_id}'s {prompt.score_min}-{prompt.score_max}")
        if (r.event_id, r.dimension) in seen:
            raise DuplexevalError(f"{file}: record {no}: {r.event_id}::{r.dimension} "
                                  "appears twice")
        seen.add((r.event_id, r.dimension))
    return records


def _models(records: list[ContentRecord]) -> str:
    names = sorted({r.judge_model for r in records if r.judge_model != RULE_MODEL})
    return ", ".join(names) or RULE_MODEL


def compare_files(path_a: Path, path_b: Path, confidence: float = 0.95) -> AgreementReport:
    """The agreement of two content files' judges (judge A: ``path_a``)."""
    a, b = _checked(path_a), _checked(path_b)
    sides = (_side("A", _models(a), str(path_a), a), _side("B", _models(b), str(path_b), b))
    return AgreementReport("files", f"{path_a} vs {path_b}", sides,
                           compare_records(a, b, confidence), confidence)
