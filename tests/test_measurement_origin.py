"""Every latency metric says where its interval starts and ends (``measurement_origin``), in
the variant and in ``results.json``; metrics that are not intervals have none."""

from __future__ import annotations

from duplexeval.analysis import SpeechSegment
from duplexeval.metrics import EventView, get_variant, variant_names
from duplexeval.metrics._score_outputs import build_results
from duplexeval.metrics._scoring import score_events
from duplexeval.metrics.timing._m3 import M3Timing
from duplexeval.results import SourceInfo


def event(kind: str, start: float, end: float, *model: tuple[float, float]) -> EventView:
    """An event at ``[start, end]`` of a 0-12 s sample with system segments ``model``."""
    return EventView(event_id=f"{kind}-{start}", event_type=kind, input_start=0.0,
                     input_end=12.0, event_start=start, event_end=end,
                     segments=tuple(SpeechSegment.of(1, a, b) for a, b in model))


def test_each_m3_latency_row_of_the_results_names_its_interval() -> None:
    #   TURN_SHIFT  user turn end 2.0 |  system 2.3-3.5   latency 0.3
    #   TURN_HOLD   pause [5, 6]         system 6.5-7.5   latency 1.5
    #   BARGE_IN    onset 8.0            system 7.0-8.4   stop latency 0.4
    events = [event("TURN_SHIFT", 2.0, 2.2, (2.3, 3.5)),
              event("TURN_HOLD", 5.0, 6.0, (2.3, 3.5), (6.5, 7.5)),
              event("BARGE_IN", 8.0, 8.5, (7.0, 8.4))]
    variant = M3Timing()
    results = build_results(score_events(events, variant), variant,
                            SourceInfo(kind="run", path="x", metadata="m"), None)
    rows = {(r.dimension, r.metric): r for r in results.aggregates}
    shift = rows[("smooth_turn_taking", "latency ↓")]
    assert shift.mean is not None and abs(shift.mean - 0.3) < 1e-9
    assert shift.measurement_origin is not None
    assert "turn end" in shift.measurement_origin.start
    assert "input channel" in shift.measurement_origin.start
    assert "played-out output" in shift.measurement_origin.end
    assert rows[("smooth_turn_taking", "tor ↑")].measurement_origin is None
    assert rows[("pause_handling", "latency ↑")].measurement_origin is not None
    assert rows[("user_barge_in", "stop_latency ↓")].measurement_origin is not None
    assert rows[("smooth_turn_taking", "latency_abs_err_to_human")].measurement_origin is None
    recorded = results.variant.measurement_origin
    assert recorded["smooth_turn_taking/latency ↓"] == shift.measurement_origin
    # every latency-like row has an origin; the file round-trips it
    for (dimension, metric), row in rows.items():
        if "latency" in metric and "err" not in metric:
            assert row.measurement_origin is not None, (dimension, metric)
    again = type(results).model_validate_json(results.model_dump_json())
    assert again.variant.measurement_origin == recorded


def test_every_variant_declares_origins_for_dimensions_it_scores() -> None:
    kinds = ("TURN_SHIFT", "TURN_HOLD", "SHORTPAUSE", "BC", "BARGE_IN")
    for name in variant_names():
        variant = get_variant(name)
        dimensions = {d for k in kinds for d in variant.dimensions(k)}
        assert variant.measurement_origins, name
        for key, origin in variant.measurement_origins.items():
            dimension, metric = key.split("/", 1)
            assert dimension in dimensions, (name, key)
            assert any(where in origin.start + origin.end
                       for where in ("channel", "reference dialogue")), (name, key)
            assert variant.measurement_origin(dimension, metric) is origin
