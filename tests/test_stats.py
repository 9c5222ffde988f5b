"""Student-t intervals against scipy, and the † marker."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

from duplexeval.metrics.stats import FEW_EVENTS, summarize


@given(st.lists(st.floats(-10, 10, allow_nan=False), min_size=2, max_size=60))
def test_interval_equals_scipy(xs: list[float]) -> None:
    s = summarize(xs)
    x = np.asarray(xs)
    assert s.n == len(xs) and s.mean == pytest.approx(x.mean(), abs=1e-9)
    sem = stats.sem(x)
    if sem == 0:
        assert s.ci_low == pytest.approx(s.mean, abs=1e-9)
        return
    low, high = stats.t.interval(0.95, len(xs) - 1, loc=x.mean(), scale=sem)
    assert s.ci_low == pytest.approx(low, abs=1e-9) and s.ci_high == pytest.approx(high, abs=1e-9)


def test_hand_computed_interval() -> None:
    # 1, 2, 3: mean 2, s = 1, t(0.975, 2) = 4.302653, half-width 4.302653 / sqrt(3) = 2.484138
    s = summarize([1, 2, 3])
    assert s.mean == 2 and s.std == 1
    assert s.half_width == pytest.approx(2.484138, abs=1e-6)
    assert s.format() == "2.00 ± 2.48†"


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
