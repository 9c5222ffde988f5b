"""The judge-agreement report (:mod:`duplexeval.metrics._judge_agreement`) as a terminal table
and as strict JSON.

Text: the two judges, then per judged dimension a header line (prompt, version, scale, items
and how many were paired), a table ``metric, value, 95% CI, n`` (``-`` where undefined), the
excluded items by reason, and one note per undefined value or missing interval.  JSON: the same
numbers, ``null`` with a ``reason`` where a value or an interval is undefined, and never a
``NaN`` token (:func:`agreement_json_text` refuses one).
"""

from __future__ import annotations

import json
from typing import Any

from duplexeval.metrics._judge_agreement import AgreementReport
from duplexeval.metrics._stats import RESAMPLES, SEED
from duplexeval.metrics.content._agreement import Estimate
from duplexeval.metrics.content._judge_pairs import DimensionAgreement, Exclusions
from duplexeval.report._text import format_table

__all__ = ["agreement_json", "agreement_json_text", "agreement_lines"]

_NAMES = {"exact_agreement": "exact agreement", "cohen_kappa": "Cohen's kappa",
          "krippendorff_alpha": "Krippendorff's alpha", "mean_difference": "mean difference"}

_EXCLUDED = (("no_call", "decided without a call (rule)"), ("unscored_a", "unscored by A"),
             ("unscored_b", "unscored by B"), ("unscored_both", "unscored by both"),
             ("only_a", "only in A's records"), ("only_b", "only in B's records"),
             ("other_prompt", "asked with different prompts"))


def _label(e: Estimate) -> str:
    if e.metric == "mean_difference":
        return "mean difference (B - A)"
    return _NAMES[e.metric] + (f" ({e.form})" if e.form else "")


def _number(x: float, signed: bool) -> str:
    return f"{x:+.3f}" if signed else f"{x:.3f}"


def _row(e: Estimate) -> list[object]:
    signed = e.metric == "mean_difference"
    value = "-" if e.value is None else _number(e.value, signed)
    ci = "-" if e.ci_low is None or e.ci_high is None else \
        f"[{_number(e.ci_low, signed)}, {_number(e.ci_high, signed)}]"
    return [_label(e), value, ci, e.n]


def _excluded_text(ex: Exclusions) -> str | None:
    parts = [f"{getattr(ex, key)} {text}" for key, text in _EXCLUDED if getattr(ex, key)]
    return f"excluded: {', '.join(parts)}" if parts else None


def _dimension_lines(d: DimensionAgreement, confidence: float) -> list[str]:
    head = (f"{d.dimension} ({d.prompt_id} v{d.prompt_version}, {d.score_min}-{d.score_max}, "
            f"{d.scale}): {d.items} item(s), {len(d.a)} paired")
    lines = ["", head]
    lines += ["  " + s for s in format_table(
        ["metric", "value", f"{confidence:.0%} CI", "n"], [_row(e) for e in d.estimates])]
    excluded = _excluded_text(d.excluded)
    if excluded:
        lines.append(f"  {excluded}")
    lines += [f"  note: {_label(e)}: {e.reason}" for e in d.estimates if e.reason]
    return lines


def agreement_lines(report: AgreementReport) -> list[str]:
    """The report as terminal lines."""
    lines = [f"judge agreement ({report.mode}: {report.source})"]
    for side in report.judges:
        lines.append(f"judge {side.label}: {side.model} ({side.source})")
        if side.usage:
            lines.append(f"  {side.usage}")
        if side.first_unscored:
            lines.append(f"  first unscored item: {side.first_unscored}")
    for d in report.dimensions:
        lines += _dimension_lines(d, report.confidence)
    lines += ["", f"intervals: percentile bootstrap over items (pairs kept), {RESAMPLES} "
                  f"resamples, seed {SEED}; mean difference on the prompt's own scale"]
    return lines


def _estimate_json(e: Estimate) -> dict[str, Any]:
    return {"metric": e.metric, "form": e.form, "value": e.value, "ci_low": e.ci_low,
            "ci_high": e.ci_high, "n": e.n, "resamples": e.resamples, "reason": e.reason}


def _dimension_json(d: DimensionAgreement) -> dict[str, Any]:
    excluded: dict[str, int] = {key: getattr(d.excluded, key) for key, _ in _EXCLUDED}
    return {"dimension": d.dimension, "prompt_id": d.prompt_id,
            "prompt_version": d.prompt_version, "scale": d.scale, "score_min": d.score_min,
            "score_max": d.score_max, "items": d.items, "paired": len(d.a),
            "excluded": {**excluded, "total": d.excluded.total},
            "metrics": [_estimate_json(e) for e in d.estimates]}


def agreement_json(report: AgreementReport) -> dict[str, Any]:
    """The report as a JSON-ready dict."""
    return {"mode": report.mode, "source": report.source, "confidence": report.confidence,
            "interval": {"method": "percentile bootstrap over items", "resamples": RESAMPLES,
                         "seed": SEED},
            "judges": [{"label": s.label, "model": s.model, "source": s.source,
                        "usage": s.usage, "first_unscored": s.first_unscored}
                       for s in report.judges],
            "dimensions": [_dimension_json(d) for d in report.dimensions]}


def agreement_json_text(report: AgreementReport) -> str:
    """Strict JSON text of the report (``ValueError`` rather than a ``NaN`` token)."""
    return json.dumps(agreement_json(report), indent=2, ensure_ascii=False, allow_nan=False)
