"""Intervals on the metric's scale: Wilson for proportions, the percentile bootstrap for bounded
scores and small samples, Student-t (against scipy) otherwise; and the † marker."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

from duplexeval.metrics._stats import FEW_EVENTS, summarize, wilson_interval


@given(st.lists(st.floats(-10, 10, allow_nan=False), min_size=2, max_size=60))
def test_interval_equals_scipy(xs: list[float]) -> None:
    s = summarize(xs)
    x = np.asarray(xs)
    if s.method != "t":  # proportions, small samples, a t interval leaving [0, inf)
        assert len(xs) < FEW_EVENTS or set(xs) <= {0.0, 1.0} or min(xs) >= 0
        return
    assert s.n == len(xs) and s.mean == pytest.approx(x.mean(), abs=1e-9)
    sem = stats.sem(x)
    if sem == 0:
        assert s.ci_low == pytest.approx(s.mean, abs=1e-9)
        return
    low, high = stats.t.interval(0.95, len(xs) - 1, loc=x.mean(), scale=sem)
    assert s.ci_low == pytest.approx(low, abs=1e-9) and s.ci_high == pytest.approx(high, abs=1e-9)


def test_hand_computed_interval() -> None:
    # 1, 2, 3: mean 2, s = 1, t(0.975, 2) = 4.302653, half-width 4.302653 / sqrt(3) = 2.484138
    s = summarize([1, 2, 3] * 10)  # n = 30: Student's t
    assert s.method == "t" and s.mean == 2
    assert s.half_width == pytest.approx(2.045230 * s.std / 30 ** 0.5, abs=1e-6)
    # n = 3: the t interval 2 ± 2.48 would reach below the smallest value; the bootstrap
    # stays within [1, 3]
    small = summarize([1, 2, 3])
    assert small.method == "bootstrap" and small.format() == "2.00 [1.00, 3.00]†"


def test_booleans_count_as_integers_and_small_n() -> None:
    assert summarize([True, False, True, True]).mean == 0.75
    one = summarize([0.3])
    assert one.n == 1 and one.ci_low is None and one.format() == "0.30†"
    assert summarize([]).format() == "-"


def test_dagger_below_twenty_events() -> None:
    assert summarize([1.0] * (FEW_EVENTS - 1)).few
    assert not summarize([1.0] * FEW_EVENTS).few
    # mean 0.75, s = 0.25649, t(0.975, 19) = 2.093024: half-width 0.12004, no dagger at n = 20
    assert summarize([0.5, 1.0] * 10).format(scale=100, digits=1) == "75.0 ± 12.0"


def test_wilson_by_hand() -> None:
    """1 of 2: [0.0945, 0.9055]; 0 of 5 and 5 of 5 stay inside [0, 1]."""
    s = summarize([True, False])
    assert s.method == "wilson"
    assert (s.ci_low, s.ci_high) == pytest.approx((0.094532, 0.905468), abs=1e-6)
    assert s.format(100, 1) == "50.0 [9.5, 90.5]†"
    assert summarize([0] * 5).ci_low == 0.0 and summarize([1] * 5).ci_high == 1.0
    assert wilson_interval(0, 5)[1] == pytest.approx(0.434482, abs=1e-6)


def test_a_float_of_zero_or_one_is_a_measurement_not_a_verdict() -> None:
    """Five latencies of 0.0 s (a system that yields at once) or five divergences of 1.0 are
    not a proportion: their interval is the bootstrap's [0, 0] / [1, 1], not Wilson's
    [0, 0.43] / [0.57, 1] (the demo's FLEXI table printed `interrupt lat s 0.00 [0.00, 0.43]`).
    0/1 ints and bools are verdicts; ``proportion`` overrides the inference."""
    latency = summarize([0.0] * 5)
    assert latency.method == "bootstrap" and (latency.ci_low, latency.ci_high) == (0.0, 0.0)
    assert summarize([1.0] * 5).format() == "1.00 [1.00, 1.00]†"
    assert summarize([0, 1, 1]).method == "wilson"
    assert summarize([0.0, 1.0, 1.0]).method == "bootstrap"
    assert summarize([0.0, 1.0, 1.0], proportion=True).method == "wilson"
    assert summarize([0, 1, 1], proportion=False).method == "bootstrap"


@given(st.lists(st.one_of(st.sampled_from([0, 1]), st.floats(0, 100, allow_nan=False)),
                min_size=2, max_size=80), st.booleans())
def test_no_interval_leaves_its_scale(xs: list[float], bounded: bool) -> None:
    """Any values on [0, 100] (latencies, scores, 0/1 rates): the interval holds the mean and
    stays inside [0, 100], and a rate's inside [0, 1]; the bootstrap is the same every time."""
    s = summarize(xs, bounded=bounded)
    assert s.ci_low is not None and s.ci_high is not None
    assert 0.0 <= s.ci_low <= s.mean + 1e-9 and s.mean - 1e-9 <= s.ci_high <= 100.0
    if all(isinstance(x, int) for x in xs):
        assert s.method == "wilson" and s.ci_high <= 1.0
    elif bounded:
        assert s.method == "bootstrap"
    assert summarize(xs, bounded=bounded) == s
