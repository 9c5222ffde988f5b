"""Scored runs for the report tests: the ``scripted`` system on the first bundled English
dialogue (voiced with clip-bank bursts) under Single, Multi (gen) and Multi (ref), scored from
the speech it logged (``scores-truth``: no ASR), with one offline content record and one
judged record written by hand so the report has texts and a judge's reason to show."""

from __future__ import annotations

from pathlib import Path

from duplexeval._fileio import atomic_write_text, json_line
from duplexeval.data import Need, bundled_dataset, load_dataset
from duplexeval.data._voice_bursts import voice_bursts
from duplexeval.metrics._accuracy import ACCURACY_PROTOCOLS
from duplexeval.metrics._score_run import score_run_dir
from duplexeval.plan import EvalProtocol, PlanOptions, build_plan
from duplexeval.results import ContentRecord, OfflineRecord
from duplexeval.runs import execute_run
from duplexeval.systems import load_system

JUDGE_REASON = "The answer <b>names</b> the place & the year."
"""A reason with markup characters: the report must show them as text."""


def make_report_runs(root: Path, dialogues: int = 1) -> list[Path]:
    """The three scored runs (run directories) under ``root``."""
    source, _ = load_dataset(bundled_dataset("sample-en"), alignment=Need.REQUIRE)
    voice_bursts(source, root / "data", 16000)
    dataset, _ = load_dataset(root / "data", audio=Need.REQUIRE)
    runs = []
    for protocol, args in ACCURACY_PROTOCOLS:
        plan = build_plan(dataset.dialogues[:dialogues],
                          PlanOptions(protocol=EvalProtocol(protocol)))
        out = root / protocol
        execute_run(load_system("scripted", args), dataset, plan, out, seed=1, progress=False)
        results, scores = score_run_dir(out, truth=True, progress=False)
        shift = next(e for e in results.events if e.dimension == "smooth_turn_taking")
        base = {"event_id": shift.event_id, "sample_id": shift.sample_id, "language": "en",
                "domain": shift.domain}
        atomic_write_text(scores / "content_offline.jsonl", json_line(OfflineRecord(
            **base, response_words=3, truncated=0, qa_f1=None, qa_em=None,
            user="where was it <held>?", response="in Paris, 1900",
            reference="Paris").model_dump()))
        atomic_write_text(scores / "content.jsonl", json_line(ContentRecord(
            **base, dimension="relevance", score=2, score_100=100.0, unscored_reason=None,
            judge_model="fake", prompt_id="m3-relevance", prompt_version=1, raw="score: 2",
            reason=JUDGE_REASON).model_dump()))
        runs.append(out)
    return runs
