"""Judge agreement: the statistics against hand-worked values and Krippendorff's published
examples, and the pairing of two judges' records with every exclusion counted."""

from __future__ import annotations

import doctest
from typing import Any

import pytest

from duplexeval.metrics.content import agreement as agreement_module
from duplexeval.metrics.content.agreement import (
    agreement,
    cohen_kappa,
    krippendorff_alpha,
)
from duplexeval.metrics.content.judge_pairs import compare_records
from duplexeval.metrics.stats import RESAMPLES
from duplexeval.results.content import ContentRecord

# -- the statistics -----------------------------------------------------------------------

# Twelve items on 0-2; judge B = judge A + 1 on every third item (3, 6, 9, 12; all below 2).
GRADES_A = [0, 2, 1, 2, 0, 0, 1, 2, 1, 0, 2, 0]
GRADES_B = [g + 1 if i % 3 == 0 else g for i, g in enumerate(GRADES_A, start=1)]
# By hand.  Counts (A rows, B columns): C = [[3, 2, 0], [0, 1, 2], [0, 0, 4]]; A's marginals
# (5, 3, 4), B's (3, 3, 6).  Exact: 8/12.  Quadratic weights w = (i - j)^2 / 4: the four
# disagreements are one point apart, sum w O = 4 * 1/4 / 12 = 1/12; sum w E = (5*3/4 + 5*6 +
# 3*3/4 + 3*6/4 + 4*3 + 4*3/4) / 144 = 55.5 / 144, so kappa = 1 - 12 / 55.5 = 29/37.
# Alpha: o = C + C^T, n_c = (8, 6, 10), n = 24, sum o d2 = 2 * 4 = 8 (interval);
# sum n_c n_k d2 = 2 * (8*6*1 + 8*10*4 + 6*10*1) = 856: alpha = 1 - 23 * 8 / 856.
# Ordinal d2: (0,1) = ((8+6)/2)^2 = 49, (1,2) = ((6+10)/2)^2 = 64, (0,2) = (24 - 9)^2 = 225;
# sum o d2 = 2 * (2*49 + 2*64) = 452, sum n_c n_k d2 = 2 * (8*6*49 + 8*10*225 + 6*10*64) =
# 48384: alpha = 1 - 23 * 452 / 48384.  Mean difference B - A: 4/12.
HAND = {("exact_agreement", None): 8 / 12, ("cohen_kappa", "quadratic"): 29 / 37,
        ("krippendorff_alpha", "interval"): 1 - 23 * 8 / 856,
        ("krippendorff_alpha", "ordinal"): 1 - 23 * 452 / 48384,
        ("mean_difference", None): 4 / 12}

# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", the reliability data of
# four observers on twelve units with missing values (unit 12 has one value: not pairable),
# and the values published there: nominal .743, ordinal .815, interval .849.
N = None
KRIPPENDORFF_2011 = list(zip(
    [1, 2, 3, 3, 2, 1, 4, 1, 2, N, N, N],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, N, 3],
    [N, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, N],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, N], strict=True))
# The same paper's binary example: two observers, ten units, nominal alpha .095.
BINARY_A = [0, 1, 0, 0, 0, 0, 0, 0, 1, 0]
BINARY_B = [1, 1, 1, 0, 0, 1, 0, 0, 0, 0]
# Cohen's kappa of it by hand: p_o = 6/10; A's share of 1s 2/10, B's 4/10; p_e = 0.8 * 0.6 +
# 0.2 * 0.4 = 0.56; kappa = (0.6 - 0.56) / (1 - 0.56) = 1/11.  Alpha: n_0 = 14, n_1 = 6,
# four disagreements: 1 - 19 * 8 / (2 * 14 * 6) = 2/21 (the published .095).
BINARY_HAND = {("exact_agreement", None): 0.6, ("cohen_kappa", "unweighted"): 1 / 11,
               ("krippendorff_alpha", "nominal"): 2 / 21, ("mean_difference", None): 0.2}


def _values(estimates: list[Any]) -> dict[tuple[str, str | None], float | None]:
    return {(e.metric, e.form): e.value for e in estimates}


def test_the_module_examples_hold() -> None:
    result = doctest.testmod(agreement_module)
    assert result.attempted >= 6 and result.failed == 0


def test_kappa_alpha_and_the_rest_match_the_hand_worked_example() -> None:
    estimates = agreement(GRADES_A, GRADES_B, 0, 2)
    assert _values(estimates) == pytest.approx(HAND)
    assert cohen_kappa(GRADES_A, GRADES_B, 0, 2) == pytest.approx(29 / 37)
    assert cohen_kappa(GRADES_A, GRADES_B, 0, 2, "unweighted") == pytest.approx(
        (8 / 12 - (5 * 3 + 3 * 3 + 4 * 6) / 144) / (1 - (5 * 3 + 3 * 3 + 4 * 6) / 144))
    for e in estimates:  # every interval brackets its value, from the same 2000 draws
        assert e.n == 12 and e.reason is None
        assert e.ci_low is not None and e.ci_high is not None
        assert e.ci_low <= e.value <= e.ci_high  # type: ignore[operator]
        assert 0.95 * RESAMPLES <= e.resamples <= RESAMPLES
    assert agreement(GRADES_A, GRADES_B, 0, 2) == estimates  # fixed seed: the same intervals
    # on 0-5 the same scores agree the same (quadratic weights and alpha are scale-free)
    assert _values(agreement(GRADES_A, GRADES_B, 0, 5)) == pytest.approx(HAND)


def test_alpha_reproduces_krippendorffs_published_examples() -> None:
    published = {"nominal": 0.743, "ordinal": 0.815, "interval": 0.849}
    for metric, value in published.items():
        assert round(krippendorff_alpha(KRIPPENDORFF_2011, metric), 3) == value  # type: ignore[arg-type]
    binary = agreement(BINARY_A, BINARY_B, 0, 1)
    assert _values(binary) == pytest.approx(BINARY_HAND)
    assert round(BINARY_HAND["krippendorff_alpha", "nominal"], 3) == 0.095


def test_undefined_values_are_none_with_a_reason() -> None:
    constant = _by_metric(agreement([1, 1, 1, 1], [0, 1, 2, 1], 0, 2))
    kappa = constant["cohen_kappa"]
    assert kappa.value is None and kappa.ci_low is None
    assert "judge A gives one score only (1)" in (kappa.reason or "")
    assert constant["krippendorff_alpha"].value is not None  # pooled: still defined
    same = _by_metric(agreement([2, 2, 2], [2, 2, 2], 0, 2))
    assert same["krippendorff_alpha"].value is None
    assert "every score is 2" in (same["krippendorff_alpha"].reason or "")
    assert same["exact_agreement"].value == 1.0
    one = _by_metric(agreement([1], [2], 0, 2))
    assert one["mean_difference"].value == 1.0 and one["mean_difference"].ci_low is None
    assert "fewer than 2 items" in (one["mean_difference"].reason or "")
    assert all(e.value is None and e.reason == "no item scored by both judges"
               for e in agreement([], [], 0, 1))
    with pytest.raises(ValueError, match="outside the scale"):
        agreement([3], [0], 0, 2)


def _by_metric(estimates: list[Any]) -> dict[str, Any]:
    return {e.metric: e for e in estimates}


# -- pairing -----------------------------------------------------------------------------------

def _record(event: str, score: int | None, model: str, dimension: str = "instruction",
            prompt: str = "mtr.instruction", version: int = 1) -> ContentRecord:
    return ContentRecord(event_id=event, dimension=dimension, score=score,
                         score_100=None if score is None else score * 100.0,
                         unscored_reason=None if score is not None else "no JSON object",
                         judge_model=model, prompt_id=prompt, prompt_version=version,
                         raw=None, reason=None, sample_id="d1", language="en", domain="chat")


def _binary_files() -> tuple[list[ContentRecord], list[ContentRecord]]:
    """Krippendorff's binary example as two judges' records, and one item of each exclusion."""
    a = [_record(f"e{i}", s, "big") for i, s in enumerate(BINARY_A)]
    b = [_record(f"e{i}", s, "small") for i, s in enumerate(BINARY_B)]
    a += [_record("rule", 0, "rule"), _record("ua", None, "big"), _record("ub", 1, "big"),
          _record("both", None, "big"), _record("onlya", 1, "big"),
          _record("v", 1, "big", version=1)]
    b += [_record("rule", 0, "rule"), _record("ua", 1, "small"), _record("ub", None, "small"),
          _record("both", None, "small"), _record("onlyb", 0, "small"),
          _record("v", 1, "small", version=2)]
    return a, b


def test_pairs_are_counted_and_every_exclusion_has_its_reason() -> None:
    a, b = _binary_files()
    (dim,) = compare_records(a, b)
    assert (dim.dimension, dim.scale, dim.score_min, dim.score_max) == ("instruction",
                                                                       "binary", 0, 1)
    assert (dim.items, len(dim.a)) == (17, 10) and dim.excluded.total == 7
    ex = dim.excluded
    assert (ex.no_call, ex.unscored_a, ex.unscored_b, ex.unscored_both, ex.only_a, ex.only_b,
            ex.other_prompt) == (1, 1, 1, 1, 1, 1, 1)
    assert _values(dim.estimates) == pytest.approx(BINARY_HAND)
