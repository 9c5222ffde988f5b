"""The measures' tables and figures (``eval --measures``) on hand-drawn cases with known answers.

Barge-in cost, ``turnbench`` rules, output wav time (W = 12 s), ``R`` the reference turn end::

    backchannel 1   user     |bc|                      a = 4.0, b = 4.5, R = 9.0
                    yields   SSSSSS|                   stops at 4.6: false stop, 9.0 - 4.6 = 4.4 s
                    ignores  SSSSSSSSSSSSSSSSSSSS|     to 9.0 (= R): no false stop, 0 s
    backchannel 2   yields   stops at 4.8, R = 8.0:    3.2 s;   ignores: 0 s
    barge-in        user     |uuuuuuuu                 a = 4.0
                    yields   SSS|                      stops at 4.3 (within 0.5 s): 0 s
                    ignores  SSSSSSSSSSSSSSSSSSSSSSSSS to W: missed, censored, 12 - 4 = 8 s

so the system that yields to every backchannel pays (4.4 + 3.2) / 2 = 3.8 s per backchannel and
the one that ignores them 0; at the barge-in it is the other way round (0 against 8 s).  The
Markdown and CSV of that table are golden files (``tests/golden/measures/``).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from matplotlib.container import BarContainer, ErrorbarContainer

from duplexeval.analysis import SpeechSegment
from duplexeval.metrics import DimensionScore, EventScore, EventView
from duplexeval.metrics._counterfactual import paired_effects
from duplexeval.metrics._score_outputs import build_results
from duplexeval.metrics._stability import stability
from duplexeval.metrics.timing._m3 import M3Timing
from duplexeval.metrics.timing._turnbench import TurnBenchTiming
from duplexeval.report._measure_plots import bargein_cost, counterfactual_effects, pass_curves
from duplexeval.report._measure_tables import MeasureCell, measure_tables, write_measure_tables
from duplexeval.results import DatasetRef, Results, SourceInfo

GOLDEN = Path(__file__).parent / "golden" / "measures"
SOURCE = SourceInfo(kind="run", path="run", metadata="run/metadata.jsonl", system="s",
                    dataset=DatasetRef(name="hand-drawn"))


def _event(event_id: str, kind: str, stop: float, **meta: object) -> EventView:
    return EventView(event_id, kind, 0.0, 12.0, 4.0, 4.5,
                     (SpeechSegment.of(1, 3.0, stop),), sample_id="d", metadata=dict(meta))


def _turnbench(stops: tuple[float, float, float]) -> Results:
    """The three events above with the system stopping at ``stops``."""
    variant = TurnBenchTiming()
    events = [_event("bc1", "BC", stops[0], reference_turn_end=9.0),
              _event("bc2", "BC", stops[1], reference_turn_end=8.0),
              _event("barge", "BARGE_IN", stops[2])]
    return build_results([variant.score(e) for e in events], variant, SOURCE, None)


YIELDS = _turnbench((4.6, 4.8, 4.3))
IGNORES = _turnbench((9.0, 8.0, 12.0))
CELLS = [MeasureCell("yields", "cell", YIELDS), MeasureCell("ignores", "cell", IGNORES)]


def test_the_barge_in_cost_table_by_hand(tmp_path: Path) -> None:
    (table,) = measure_tables(["barge-in-cost"], CELLS)
    rows = {(r[0], r[2]): r for r in table.rows}
    penalty = table.columns.index("penalty s per event")
    assert rows[("yields", "user_backchanneling")][penalty].value == pytest.approx(3.8)
    assert rows[("ignores", "user_backchanneling")][penalty].value == 0.0
    assert rows[("yields", "user_barge_in")][penalty].value == 0.0
    assert rows[("ignores", "user_barge_in")][penalty].value == pytest.approx(8.0)
    rate = table.columns.index("wrong-reaction rate")
    assert rows[("yields", "user_backchanneling")][rate].value == 1.0
    assert rows[("ignores", "user_barge_in")][rate].value == 1.0
    written = write_measure_tables(["barge-in-cost", "turnbench"], CELLS, tmp_path)
    assert [p.name for p in written] == ["barge-in-cost.md", "barge-in-cost.csv",
                                         "turnbench.md", "turnbench.csv"]
    for path in written[:2]:
        assert path.read_text() == (GOLDEN / path.name).read_text(), path.name
    # no turn end nor pause in these cells: the table says so, its CSV is the header
    assert "- no rows: none of the cells has the events" in (tmp_path / "turnbench.md").read_text()
    assert (tmp_path / "turnbench.csv").read_text().count("\n") == 1


def test_the_barge_in_cost_figure_draws_each_event_and_the_mean() -> None:
    fig = bargein_cost([("yields", YIELDS), ("ignores", IGNORES)])
    (ax,) = fig.axes
    bars = {c.get_label(): c for c in ax.containers if isinstance(c, BarContainer)}
    assert bars["yields user_backchanneling mean"].patches[0].get_height() == pytest.approx(3.8)
    assert bars["ignores user_barge_in mean"].patches[0].get_height() == pytest.approx(8.0)
    dots = {c.get_label(): c.get_offsets() for c in ax.collections}
    assert sorted(dots["yields user_backchanneling events"][:, 1]) == pytest.approx([3.2, 4.4])


def _tries(verdicts: list[list[int]]) -> Results:
    """M3 TURN_SHIFT events, one list of tries each (1: took the turn)."""
    scores = [EventScore(EventView(f"e{i}_r{j}", "TURN_SHIFT", 0.0, 12.0, 2.0, 2.5, (),
                                   sample_id="d"), "m3", "1",
                         (DimensionScore("smooth_turn_taking", {"tor ↑": tor}),))
              for i, tries in enumerate(verdicts) for j, tor in enumerate(tries)]
    variant = M3Timing()
    return build_results(scores, variant, SOURCE, None, stability=stability(scores, variant))


def _curve(results: Results, name: str) -> list[float]:
    (ax,) = pass_curves([("run", results)]).axes
    found = next(c for c in ax.containers if isinstance(c, ErrorbarContainer)
                 and c.get_label() == f"TURN_SHIFT smooth_turn_taking {name}")
    return list(found.lines[0].get_ydata())


def test_pass_curves_fall_for_differing_tries_and_stay_flat_for_equal_ones() -> None:
    """Two events, three tries: ``P . P`` and ``P P P`` (pass^2 = (1/3 + 1)/2, pass^3 = 1/2);
    equal tries ``P P P`` and ``. . .``: flat at 1/2."""
    differing = _tries([[1, 0, 1], [1, 1, 1]])
    assert _curve(differing, "pass^k") == pytest.approx([5 / 6, 2 / 3, 1 / 2])
    assert _curve(differing, "pass@k") == pytest.approx([5 / 6, 1.0, 1.0])
    equal = _tries([[1, 1, 1], [0, 0, 0]])
    assert _curve(equal, "pass^k") == pytest.approx([0.5, 0.5, 0.5])
    (table,) = measure_tables(["stability"], [MeasureCell("s", "c", differing, tries=True)])
    flips = table.columns.index("flip share")
    assert table.rows[0][flips].value == 0.5
    assert measure_tables(["stability"], [MeasureCell("s", "c", differing)])[0].rows == []


def test_the_counterfactual_figure_and_table_show_each_effect_with_its_interval() -> None:
    """Three barge-ins: missed_stop 0 with the act, 1 without it (the act makes it stop):
    effect -1 on every pair."""
    def score(event_id: str, missed: int, twin_of: str | None = None) -> EventScore:
        meta = {"counterfactual_of": twin_of} if twin_of else {}
        view = EventView(event_id, "BARGE_IN", 0.0, 12.0, 4.0, 5.0, (), sample_id="d",
                         metadata=meta)
        return EventScore(view, "turnbench", "1", (DimensionScore(
            "user_barge_in", {"missed_stop ↓": missed}),))

    originals = [score(f"b{i}", 0) for i in range(3)]
    twins = [score(f"b{i}_cf", 1, f"b{i}") for i in range(3)]
    results = build_results(originals, TurnBenchTiming(), SOURCE, None).model_copy(
        update={"counterfactual": paired_effects(originals, twins)})
    (ax,) = counterfactual_effects([("run", results)]).axes
    (point,) = [c for c in ax.containers if isinstance(c, ErrorbarContainer)]
    assert point.get_label() == "run (turnbench) BARGE_IN user_barge_in missed_stop ↓"
    assert list(point.lines[0].get_xdata()) == [-1.0]
    (table,) = measure_tables(["counterfactual"], [MeasureCell("s", "c", results, tries=True)])
    effect = table.rows[0][table.columns.index("effect")]
    assert (effect.value, effect.low, effect.high) == (-1.0, -1.0, -1.0)


def test_every_interval_sits_in_a_column_declared_for_intervals() -> None:
    """The CSV header is the table's, rows or none: a number with an interval is always three
    columns, a plain number one."""
    from duplexeval.report._measure_tables import MEASURE_TABLES, Interval, render_csv

    cells = [*CELLS, MeasureCell("s", "c", _tries([[1, 0, 1]]), tries=True)]
    for name, build in MEASURE_TABLES.items():
        table, empty = build(cells), build([])
        for row in table.rows:
            assert [isinstance(v, Interval) for v in row] == [
                k and isinstance(v, Interval) for v, k in zip(row, table.intervals, strict=True)]
            assert all(isinstance(v, Interval) for v, k in zip(row, table.intervals,
                                                               strict=True) if k)
        assert render_csv(table).splitlines()[0] == render_csv(empty).splitlines()[0], name
