"""Two judges' content records of the same items, paired per judged dimension, and their
agreement (:mod:`.agreement`).

Conventions:

* An item is one (event, dimension), the judge item id ``{event_id}::{dimension}``; judge A's
  and judge B's records of it are paired.
* Paired: both records scored by a judge with the same prompt id and version.  Everything else
  is excluded and counted (:class:`Exclusions`), never dropped silently:

  - ``no_call``: either record was decided without a call (``judge_model = "rule"``: an empty
    response scored 0, a QA event without a reference answer).  No judge was asked, so the
    two agree by construction and would inflate every statistic;
  - ``unscored_a``, ``unscored_b``, ``unscored_both``: a judge was asked but gave no score (a
    malformed answer, a call that finally failed);
  - ``only_a``, ``only_b``: the item is in one judge's records only (two files of different
    runs, or of different dimensions);
  - ``other_prompt``: the two were asked with different prompts or prompt versions.
* The scale is the prompt's declared range (``judge.load_prompt(prompt_id)``): binary on two
  points (kappa unweighted, alpha nominal), ordinal on more (kappa quadratic, alpha interval
  and ordinal).
* Dimensions come out in the order of their first record (judge A's, then B's).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from duplexeval.judge._templates import load_prompt
from duplexeval.metrics.content._agreement import Estimate, agreement
from duplexeval.metrics.content._judged import RULE_MODEL
from duplexeval.results._content import ContentRecord

__all__ = ["DimensionAgreement", "Exclusions", "compare_records"]


@dataclass
class Exclusions:
    """Items of one dimension left out of the agreement, by reason (module docstring)."""

    no_call: int = 0
    unscored_a: int = 0
    unscored_b: int = 0
    unscored_both: int = 0
    only_a: int = 0
    only_b: int = 0
    other_prompt: int = 0

    @property
    def total(self) -> int:
        return (self.no_call + self.unscored_a + self.unscored_b + self.unscored_both
                + self.only_a + self.only_b + self.other_prompt)


@dataclass
class DimensionAgreement:
    """One judged dimension: its prompt and scale, the paired scores, what was excluded and
    the agreement estimates."""

    dimension: str
    prompt_id: str
    prompt_version: int
    score_min: int
    score_max: int
    step: float = 1.0
    """The prompt's score resolution: scores are paired in steps from ``score_min`` (half
    points: two steps a point), and the mean difference is given back on the prompt's
    scale."""
    items: int = 0
    """Items of this dimension in either judge's records."""
    item_ids: list[str] = field(default_factory=list)
    a: list[int] = field(default_factory=list)
    b: list[int] = field(default_factory=list)
    excluded: Exclusions = field(default_factory=Exclusions)
    estimates: list[Estimate] = field(default_factory=list)

    @property
    def scale(self) -> str:
        """``binary`` (two points) or ``ordinal``."""
        return "binary" if self.score_max - self.score_min == 1 else "ordinal"


def _key(r: ContentRecord) -> tuple[str, str]:
    return r.event_id, r.dimension


def _pair(dim: DimensionAgreement, ra: ContentRecord | None, rb: ContentRecord | None) -> None:
    """Add one item to ``dim``: paired, or counted under its exclusion."""
    dim.items += 1
    ex = dim.excluded
    if ra is None or rb is None:
        ex.only_b += ra is None
        ex.only_a += rb is None
    elif RULE_MODEL in (ra.judge_model, rb.judge_model):
        ex.no_call += 1
    elif (ra.prompt_id, ra.prompt_version) != (rb.prompt_id, rb.prompt_version):
        ex.other_prompt += 1
    elif ra.score is None or rb.score is None:
        ex.unscored_both += ra.score is None and rb.score is None
        ex.unscored_a += ra.score is None and rb.score is not None
        ex.unscored_b += ra.score is not None and rb.score is None
    else:
        dim.item_ids.append(f"{ra.event_id}::{ra.dimension}")
        dim.a.append(round((ra.score - dim.score_min) / dim.step))
        dim.b.append(round((rb.score - dim.score_min) / dim.step))


def compare_records(a: Sequence[ContentRecord], b: Sequence[ContentRecord],
                    confidence: float = 0.95) -> list[DimensionAgreement]:
    """The agreement of judge A's records ``a`` and judge B's ``b``, per dimension (each
    record's score already within its prompt's range; ``ValueError`` otherwise)."""
    by_a, by_b = {_key(r): r for r in a}, {_key(r): r for r in b}
    dims: dict[str, DimensionAgreement] = {}
    for key in dict.fromkeys([*by_a, *by_b]):
        ra, rb = by_a.get(key), by_b.get(key)
        first = ra if ra is not None else rb
        assert first is not None
        if first.dimension not in dims:
            prompt = load_prompt(first.prompt_id).prompt
            dims[first.dimension] = DimensionAgreement(
                first.dimension, first.prompt_id, first.prompt_version, prompt.score_min,
                prompt.score_max, prompt.score_step)
        _pair(dims[first.dimension], ra, rb)
    for dim in dims.values():
        top = round((dim.score_max - dim.score_min) / dim.step)
        dim.estimates = [_on_scale(e, dim.step)
                         for e in agreement(dim.a, dim.b, 0, top, confidence)]
    return list(dims.values())


def _on_scale(estimate: Estimate, step: float) -> Estimate:
    """A mean difference in steps back on the prompt's scale (the others have no unit)."""
    if estimate.metric != "mean_difference" or step == 1.0:
        return estimate
    def scaled(x: float | None) -> float | None:
        return None if x is None else x * step
    return replace(estimate, value=scaled(estimate.value), ci_low=scaled(estimate.ci_low),
                   ci_high=scaled(estimate.ci_high))
