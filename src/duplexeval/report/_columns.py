"""The metric columns of the paper-style tables (M3 Table 5 and Table 6), per domain.

A column names where its values come from (a timing aggregate ``(event_type, metric)`` of
``results.json`` or a content dimension), its display scale and digits, and its better
direction (``↑`` higher is better, ``↓`` lower is better), which the best-value marking and the
``+``/``-`` of Table 6 read.  The per-domain sets follow M3-DuplexBench's Table 5:

=========  ==========================================================================
Chat       Smooth Turn-Taking TOR ↑, Latency ↓, MAE ↓; Pause Handling TOR ↓,
           Latency ↑; User Backchannel Stop Latency ↑; User Barge-in Stop Latency ↓
           (and, beyond the paper, Rel. ↑ and Cons. ↑ when judged)
MT-QA      Smooth Turn-Taking TOR ↑, Latency ↓; User Barge-in Stop Latency ↓;
           Response Quality Rel. ↑, Cons. ↑, QA ↑ (and, beyond the paper, the offline
           QA F1 ↑)
=========  ==========================================================================

Pause-handling latency is the official value (10 s for a system silent over the whole window),
as the paper's appendix defines it ("the mean over all evaluated samples").  A table shows a
column only when some row has a value for it.  The timing columns read the ``m3`` variant's
metric names: runs scored with another variant (``fdb-v1``, ``mtr``) leave them empty.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["DOMAIN_TITLES", "LANGUAGE_TITLES", "PROTOCOL_TITLES", "MetricColumn",
           "domain_columns", "domain_order", "domain_title", "language_order",
           "language_title", "protocol_order", "protocol_title"]

Better = Literal["higher", "lower"]


@dataclass(frozen=True)
class MetricColumn:
    """One metric column; values are shown ×``scale`` with ``digits`` decimals."""

    key: str
    group: str
    """The paper's column group (``Smooth Turn-Taking``, ``Response Quality``, ...)."""
    short_group: str
    """The group's short name in one-line headers (``SHIFT``, ``PAUSE``, ...)."""
    header: str
    better: Better
    digits: int
    event_type: str = ""
    """Timing columns: the aggregate's event type and metric name."""
    metric: str = ""
    content: str = ""
    """Content columns: the content dimension (``relevance``, ``qa_f1``, ...)."""
    scale: float = 1.0

    @property
    def arrow(self) -> str:
        return "↑" if self.better == "higher" else "↓"

    @property
    def title(self) -> str:
        """``SHIFT TOR↑``: the one-line header."""
        return f"{self.short_group} {self.header}{self.arrow}".strip()


def _timing(key: str, group: str, short: str, header: str, better: Better, event_type: str,
            metric: str, percent: bool = False) -> MetricColumn:
    return MetricColumn(key, group, short, header, better, 1 if percent else 2,
                        event_type=event_type, metric=metric, scale=100.0 if percent else 1.0)


def _content(key: str, header: str, dimension: str) -> MetricColumn:
    return MetricColumn(key, "Response Quality", "", header, "higher", 1, content=dimension)


SHIFT_TOR = _timing("shift_tor", "Smooth Turn-Taking", "SHIFT", "TOR", "higher", "TURN_SHIFT",
                    "tor ↑", percent=True)
SHIFT_LATENCY = _timing("shift_latency", "Smooth Turn-Taking", "SHIFT", "Latency", "lower",
                        "TURN_SHIFT", "latency ↓")
SHIFT_MAE = _timing("shift_mae", "Smooth Turn-Taking", "SHIFT", "MAE", "lower", "TURN_SHIFT",
                    "latency_abs_err_to_human")
PAUSE_TOR = _timing("pause_tor", "Pause Handling", "PAUSE", "TOR", "lower", "TURN_HOLD",
                    "tor ↓", percent=True)
PAUSE_LATENCY = _timing("pause_latency", "Pause Handling", "PAUSE", "Latency", "higher",
                        "TURN_HOLD", "latency ↑")
BC_STOP = _timing("bc_stop", "User Backchannel", "BC", "Stop Latency", "higher", "BC",
                  "stop_latency ↑")
BARGE_STOP = _timing("barge_stop", "User Barge-in", "BARGE", "Stop Latency", "lower",
                     "BARGE_IN", "stop_latency ↓")
RELEVANCE = _content("relevance", "Rel.", "relevance")
CONSISTENCY = _content("consistency", "Cons.", "consistency")
QA = _content("qa", "QA", "qa")
QA_F1 = _content("qa_f1", "QA F1", "qa_f1")

_DOMAIN_COLUMNS: dict[str, tuple[MetricColumn, ...]] = {
    "chat": (SHIFT_TOR, SHIFT_LATENCY, SHIFT_MAE, PAUSE_TOR, PAUSE_LATENCY, BC_STOP,
             BARGE_STOP, RELEVANCE, CONSISTENCY),
    "task": (SHIFT_TOR, SHIFT_LATENCY, BARGE_STOP, RELEVANCE, CONSISTENCY, QA, QA_F1),
}
_OTHER_DOMAIN = (SHIFT_TOR, SHIFT_LATENCY, SHIFT_MAE, PAUSE_TOR, PAUSE_LATENCY, BC_STOP,
                 BARGE_STOP, RELEVANCE, CONSISTENCY, QA, QA_F1)

DOMAIN_TITLES = {"chat": "Chat", "task": "MT-QA"}
LANGUAGE_TITLES = {"en": "En", "ja": "Ja"}
PROTOCOL_TITLES = {"single": "Single", "multi-gen": "Gen.", "multi-ref": "Ref.",
                   "interactive": "Inter."}
"""Table 6's column names (Gen.: Multi (gen); Ref.: Multi (ref); Inter.: the simulated user's
realised dialogue, :mod:`duplexeval.runs._interactive`)."""


def domain_columns(domain: str) -> tuple[MetricColumn, ...]:
    """The candidate columns of a domain, in the paper's order."""
    return _DOMAIN_COLUMNS.get(domain, _OTHER_DOMAIN)


def _order(known: dict[str, str], value: str) -> tuple[int, str]:
    keys = list(known)
    return (keys.index(value), "") if value in known else (len(keys), value)


def domain_order(domain: str) -> tuple[int, str]:
    """Sort key: Chat, MT-QA, then other domains by name."""
    return _order(DOMAIN_TITLES, domain)


def language_order(language: str) -> tuple[int, str]:
    """Sort key: En, Ja, then other languages by code."""
    return _order(LANGUAGE_TITLES, language)


def protocol_order(protocol: str) -> tuple[int, str]:
    """Sort key: Single, Gen., Ref., Inter., then others."""
    return _order(PROTOCOL_TITLES, protocol)


def domain_title(domain: str) -> str:
    return DOMAIN_TITLES.get(domain, domain or "?")


def language_title(language: str) -> str:
    return LANGUAGE_TITLES.get(language, language.capitalize() or "?")


def protocol_title(protocol: str) -> str:
    return PROTOCOL_TITLES.get(protocol, protocol or "?")


PROTOCOL_NAMES = {"single": "Single", "multi-gen": "Multi (gen)", "multi-ref": "Multi (ref)",
                  "interactive": "Interactive"}
"""The protocols as the seeds name them in text."""


def protocol_name(protocol: str) -> str:
    """``multi-gen`` -> ``Multi (gen)``; '' -> ``run``."""
    return PROTOCOL_NAMES.get(protocol, protocol or "run")
