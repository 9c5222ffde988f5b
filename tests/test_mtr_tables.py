"""MTR's per-feature table, ablation and round curves read only the dialogues of their label.

Three dialogues, drawn as their smooth-turn-taking verdicts per round (1 success, 0 failure)::

    dialogue   label   round:  1  2  3
    f01-smooth smooth          1  0  1      -> smooth R1 100 %, R1-10 2/3
    c01-s      S               0  0  1      -> ablation S 1/3
    c02-si     S+I             1  1  1      -> ablation S+I 3/3 (and one interruption, 0)

Pooled over all dialogues, smooth success would be 6/9; the feature cell must say 2/3.
"""

from __future__ import annotations

import csv
import io
from collections import Counter

from duplexeval.metrics import DimensionScore, EventScore, EventView
from duplexeval.metrics._scoring import aggregate_rows, label_rows
from duplexeval.metrics.timing._mtr import MtrTiming
from duplexeval.report._mtr_tables import (
    ablation_table,
    feature_table,
    round_table,
    table_csv,
    table_markdown,
    table_tex,
)
from duplexeval.results import AggregateRow, Results, SourceInfo, VariantInfo
from duplexeval.suites import get_suite
from duplexeval.suites._build import quick_by_label
from duplexeval.synth._spec import load_specs

VERDICTS = {"f01-smooth": ("smooth", [1, 0, 1]), "c01-s": ("S", [0, 0, 1]),
            "c02-si": ("S+I", [1, 1, 1])}


def _scores() -> list[EventScore]:
    out = []
    for dialogue, (label, verdicts) in VERDICTS.items():
        for k, ok in enumerate(verdicts, start=1):
            event = EventView(f"{dialogue}-{k}", "TURN_SHIFT", 0.0, 10.0, 1.0, 1.1, (),
                              sample_id=dialogue, language="en", domain="chat",
                              metadata={"round": k, "dialogue_label": label})
            out.append(EventScore(event, "mtr", "1", (DimensionScore(
                "smooth_turn_taking", {"success ↑": ok, "latency ↓": 0.5 if ok else None}),)))
    barge = EventView("c02-si-b", "BARGE_IN", 0.0, 10.0, 2.0, 3.0, (), sample_id="c02-si",
                      language="en", domain="chat",
                      metadata={"round": 2, "dialogue_label": "S+I"})
    out.append(EventScore(barge, "mtr", "1", (DimensionScore(
        "interruption", {"success ↑": 0, "latency ↓": None}),)))
    return out


def _results(scores: list[EventScore]) -> Results:
    variant = MtrTiming()
    return Results(
        source=SourceInfo(kind="run", path="run", metadata="metadata.jsonl", system="scripted",
                          protocol="multi-ref"),
        variant=VariantInfo(name="mtr", version=variant.version, source=variant.source,
                            settings=variant.settings(), definition=variant.definition()),
        analysis=None, events=[],
        aggregates=[AggregateRow(**r) for r in aggregate_rows(scores)],
        label_aggregates=[AggregateRow(**r) for r in label_rows(scores)])


def _csv_cells(text: str) -> dict[tuple[str, str], float]:
    return {(r["run"], r["column"]): float(r["mean"]) for r in csv.DictReader(io.StringIO(text))}


def test_label_rows_are_kept_apart_from_the_overall_rows() -> None:
    results = _results(_scores())
    overall = [r for r in results.aggregates if r.dimension == "smooth_turn_taking"
               and r.metric == "success ↑" and r.round is None]
    assert [(r.n, r.mean) for r in overall] == [(9, 6 / 9)]
    assert all(r.label is None for r in results.aggregates)
    assert {r.label for r in results.label_aggregates} == {"smooth", "S", "S+I"}


def test_feature_table_reads_only_the_feature_dialogues() -> None:
    table = feature_table([("scripted (Multi (ref))", _results(_scores()))])
    cells = _csv_cells(table_csv(table))
    run = "scripted (Multi (ref))"
    assert cells[(run, "Smooth turn-taking success % R1")] == 100.0
    assert abs(cells[(run, "Smooth turn-taking success % R1-10")] - 200 / 3) < 1e-9
    assert cells[(run, "Smooth turn-taking latency s")] == 0.5
    # no interruption dialogue (label "interruption"): the S+I barge-in is not a feature cell
    assert (run, "Interruption success % R1-10") not in cells
    text = table_markdown(table)
    assert "| scripted (Multi (ref)) | 100.0† (n=1) | 66.7 [20.8, 93.9]† (n=3) |" in text
    assert "–" in text


def test_ablation_gives_each_combination_its_own_smooth_success() -> None:
    cells = _csv_cells(table_csv(ablation_table([("r", _results(_scores()))])))
    assert abs(cells[("r", "S smooth success % R1-10")] - 100 / 3) < 1e-9
    assert cells[("r", "S+I smooth success % R1-10")] == 100.0
    assert ("r", "S+I+P smooth success % R1-10") not in cells


def test_round_table_has_one_row_per_feature_seen() -> None:
    table = round_table([("r", _results(_scores()))])
    assert [name for name, _ in table.rows] == ["r: Smooth turn-taking"]
    cells = _csv_cells(table_csv(table))
    assert [cells[("r: Smooth turn-taking", f"R{k} %")] for k in (1, 2, 3)] == [100.0, 0.0,
                                                                               100.0]


def test_the_mtr_quick_subset_gives_every_cell_five_events() -> None:
    """Five dialogues of each feature (five events per feature and round), two of each
    combination (the ablation cell pools rounds: 20, 10, 8 and 6 smooth rounds), five
    instruction-following and five safety dialogues (five items per round), in spec order."""
    suite = get_suite("mtr-en")
    specs = load_specs(suite.spec_folder())
    chosen = quick_by_label(specs, suite.quick_per_label or 0, suite.quick_label_caps)
    labels = Counter(s.mtr.label for s in chosen if s.mtr is not None)
    assert labels == {"smooth": 5, "interruption": 5, "pause": 5, "background": 5,
                      "backchannel": 5, "S": 2, "S+I": 2, "S+I+P": 2, "S+I+P+B": 2,
                      "if": 5, "safety": 5}
    smooth_rounds = Counter(s.mtr.label for s in chosen if s.mtr is not None
                            and s.mtr.group == "combination"
                            for r in s.mtr.rounds if r.features == ("smooth",))
    assert smooth_rounds == {"S": 20, "S+I": 10, "S+I+P": 8, "S+I+P+B": 6}
    assert [s.id for s in chosen] == [s.id for s in specs if s in chosen]  # spec order


def test_every_table_renders_as_latex_with_its_marks_escaped() -> None:
    table = feature_table([("scripted (Multi (ref))", _results(_scores()))])
    tex = table_tex(table)
    assert tex.splitlines()[1] == "\\begin{tabular}{l" + "r" * len(table.columns) + "}"
    assert "100.0$^{\\dagger}$ (n=1)" in tex and "Smooth turn-taking success \\% R1" in tex
    assert tex.count(" \\\\\n") == 2  # the header and one run
