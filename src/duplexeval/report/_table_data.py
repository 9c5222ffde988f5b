"""A scored run's values for the paper-style tables: :class:`~.tables.RowSource` rows from a
:class:`~duplexeval.results._model.Results`.

A run gives one row per language it has events in.  Its (language, domain) pairs come from its
events (else its dataset); a run of a single pair reads the ``all``/``all`` aggregates, a run
that mixes pairs reads each pair's breakdown rows.  Timing values are the aggregates'
``(event_type, metric)`` means and half-widths times the column's scale; content values are
the content aggregates (already 0-100 or percent) with their unscored counts, over all rounds
(the per-round rows of timing and content aggregates are not table cells).
"""

from __future__ import annotations

from collections.abc import Sequence

from duplexeval.report._columns import MetricColumn, domain_columns
from duplexeval.report._provenance import Provenance, content_provenance, timing_provenance
from duplexeval.report._tables import CellValue, RowSource
from duplexeval.results._intervals import IntervalFields
from duplexeval.results._model import Results

__all__ = ["label_runs", "m3_timing", "merge_rows", "row_sources"]


def _pairs(results: Results) -> list[tuple[str, str]]:
    pairs = sorted({(e.language, e.domain) for e in results.events})
    if not pairs and results.content is not None:
        pairs = sorted({(a.language, a.domain) for a in results.content.aggregates
                        if a.language != "all"})
    if not pairs:
        dataset = results.source.dataset
        pairs = [(dataset.language, dataset.domain) if dataset else ("", "")]
    return pairs


def _value(row: IntervalFields, scale: float, provenance: Provenance,
           unscored: int = 0) -> CellValue:
    """A row's estimate in display units, with its provenance; an asymmetric interval keeps
    its ends."""
    def scaled(x: float | None) -> float | None:
        return None if x is None else x * scale

    asymmetric = row.ci_method != "t"
    return CellValue(scaled(row.mean), scaled(row.ci95_half_width), row.n, unscored=unscored,
                     low=scaled(row.ci95_low) if asymmetric else None,
                     high=scaled(row.ci95_high) if asymmetric else None,
                     definition=provenance.definition, data=provenance.data,
                     synthetic=provenance.synthetic)


def _timing(results: Results, key: tuple[str, str], column: MetricColumn) -> CellValue | None:
    for row in results.aggregates:
        if (row.language, row.domain, row.event_type, row.metric) == (
                *key, column.event_type, column.metric) and row.round is None:
            return _value(row, column.scale, timing_provenance(results))
    return None


def _content(results: Results, key: tuple[str, str], column: MetricColumn) -> CellValue | None:
    if results.content is None:
        return None
    for row in results.content.aggregates:
        if (row.language, row.domain, row.dimension) == (*key, column.content) \
                and row.round is None:
            return _value(row, 1.0, content_provenance(results), row.unscored)
    return None


def m3_timing(results: Results) -> bool:
    """Whether the results' timing values are M3's: scored by the ``m3`` variant, or an
    official M3 output folder.  Only those fill the timing columns of Tables 5 and 6; a
    FLEXI or MTR run gives its content columns only (its own tables are its benchmark's)."""
    return results.variant.name == "m3" or results.source.kind == "m3-official"


def row_sources(label: str, results: Results, path: str = "") -> list[RowSource]:
    """One row per language of the run (see the module docstring)."""
    pairs = _pairs(results)
    dataset = results.source.dataset
    identity = dataset.identity() if dataset is not None else ""
    rows = []
    for language in dict.fromkeys(lang for lang, _ in pairs):
        values: dict[tuple[str, str], CellValue] = {}
        for lang, domain in pairs:
            if lang != language:
                continue
            key = ("all", "all") if len(pairs) == 1 else (lang, domain)
            for column in domain_columns(domain):
                if not column.content and not m3_timing(results):
                    continue  # another variant's latency is not M3's (same metric names)
                read = _content if column.content else _timing
                value = read(results, key, column)
                if value is not None:
                    values[(domain, column.key)] = value
        domains = {d for lang, d in pairs if lang == language}
        rows.append(RowSource(label, language, values, results.source.protocol,
                              tuple(results.source.oracle),
                              dict.fromkeys(domains, identity) if identity else {},
                              path or results.source.path))
    return rows


def label_runs(runs: Sequence[tuple[str, Results]]) -> list[str]:
    """A row label per run: its system's name, or the run's name (``runs[i][0]``, e.g. its
    folder) where two runs of one system under one protocol share a language and domain (they
    would fill the same cells)."""
    counts: dict[tuple[str, str, str, str], int] = {}
    for _, results in runs:
        for pair in _pairs(results):
            key = (results.source.system, results.source.protocol, *pair)
            counts[key] = counts.get(key, 0) + 1
    labels = []
    for name, results in runs:
        source = results.source
        shared = any(counts[(source.system, source.protocol, *pair)] > 1
                     for pair in _pairs(results))
        labels.append(source.system if source.system and not shared else name)
    return labels


def merge_rows(rows: Sequence[RowSource]) -> list[RowSource]:
    """Rows of one label, language and protocol (e.g. a system's Chat run and its MT-QA run)
    become one row, as in the paper's Table 5; the first row's place is kept."""
    merged: dict[tuple[str, str, str], RowSource] = {}
    for row in rows:
        key = (row.language, row.label, row.protocol)
        if key not in merged:
            merged[key] = row
            continue
        first = merged[key]
        merged[key] = RowSource(
            row.label, row.language, {**first.values, **row.values}, row.protocol,
            tuple(dict.fromkeys((*first.oracle, *row.oracle))),
            {**first.datasets, **row.datasets},
            first.path if row.path in (first.path, "") else f"{first.path}, {row.path}")
    return list(merged.values())
