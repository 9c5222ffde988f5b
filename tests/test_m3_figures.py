"""M3 Figures 4 and 5 from results, with the numbers they draw.

Three SHIFT events under Single, two answered (latencies 0.4 s and 0.2 s), one not::

    event   answered   latency
    e1      yes        0.4       Figure 4 points (sorted): (0.2, 1/3), (0.4, 2/3); total 3
    e2      yes        0.2       the curve levels off at 2/3 = the SHIFT TOR
    e3      no         -

Figure 5 reads the overall SHIFT TOR (2/3) and PAUSE TOR (1/4): Δ = 66.67 - 25 = 41.67 points.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

from duplexeval.report._m3_figures import figure4_csv, figure5_csv, write_m3_figures
from duplexeval.results import (
    AggregateRow,
    EventResult,
    Results,
    SourceInfo,
    VariantInfo,
)


def _results(protocol: str) -> Results:
    events = [EventResult(event_id=f"e{i}", sample_id="s", event_type="TURN_SHIFT",
                          language="en", domain="chat", dimension="smooth_turn_taking",
                          values={"tor ↑": tor, "latency ↓": lat}, extras={}, info={})
              for i, (tor, lat) in enumerate([(1, 0.4), (1, 0.2), (0, None)], start=1)]

    def agg(event_type: str, metric: str, mean: float, n: int) -> AggregateRow:
        return AggregateRow(language="all", domain="all", official=True, event_type=event_type,
                            dimension="d", metric=metric, n=n, mean=mean, std=None,
                            ci95_low=None, ci95_high=None, ci95_half_width=None,
                            few_events=True)

    return Results(source=SourceInfo(kind="run", path="r", metadata="m", system="scripted",
                                     protocol=protocol),
                   variant=VariantInfo(name="m3", version="1", source="", settings={}),
                   analysis=None, events=events,
                   aggregates=[agg("TURN_SHIFT", "tor ↑", 2 / 3, 3),
                               agg("TURN_HOLD", "tor ↓", 0.25, 4)])


def test_figure4_points_are_the_answered_latencies_over_every_scored_event() -> None:
    rows = list(csv.DictReader(io.StringIO(figure4_csv([_results("single")]))))
    assert [(float(r["latency_s"]), float(r["cumulative"]), int(r["total"])) for r in rows] \
        == [(0.2, 1 / 3, 3), (0.4, 2 / 3, 3)]


def test_figure5_gives_both_tors_and_their_difference() -> None:
    (row,) = csv.DictReader(io.StringIO(figure5_csv([_results("multi-gen")])))
    assert row["protocol"] == "multi-gen"
    assert abs(float(row["shift_tor"]) - 200 / 3) < 1e-9 and float(row["pause_tor"]) == 25.0
    assert abs(float(row["delta"]) - (200 / 3 - 25)) < 1e-9


def test_the_figures_are_written_in_protocol_order_with_their_data(tmp_path: Path) -> None:
    files = write_m3_figures("scripted", [_results("multi-ref"), _results("single")],
                             tmp_path, "en")
    assert [f.name for f in files] == [
        "figure4-chat-en.csv", "figure5-chat-en.csv", "figure4-chat-en.png",
        "figure4-chat-en.svg", "figure5-chat-en.png", "figure5-chat-en.svg"]
    protocols = [r["protocol"] for r in csv.DictReader(io.StringIO(files[1].read_text()))]
    assert protocols == ["single", "multi-ref"]
    again = tmp_path / "again"
    write_m3_figures("scripted", [_results("multi-ref"), _results("single")], again, "en")
    assert (again / "figure4-chat-en.svg").read_bytes() == files[3].read_bytes()
