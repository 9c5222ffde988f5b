"""The paper-style tables: M3 Table 5 and Table 6 reproduced from the paper's own numbers, cell
by cell, and the tables of hand-made results (best marking, †, n, unscored, oracle rows,
protocol rows, the dataset check)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from duplexeval.errors import DuplexevalError
from duplexeval.report._render_csv import render_csv
from duplexeval.report._render_md import render_markdown
from duplexeval.report._render_tex import render_latex
from duplexeval.report._table_data import label_runs, merge_rows, row_sources
from duplexeval.report._tables import CellValue, RowSource, table5, table6
from duplexeval.results import (
    AggregateRow,
    DatasetRef,
    EventResult,
    Results,
    SourceInfo,
    VariantInfo,
)
from duplexeval.results._content import ContentAggregate, ContentResults

PAPER = json.loads((Path(__file__).parent / "fixtures" / "m3_paper" / "tables.json")
                   .read_text(encoding="utf-8"))

HEADER5 = ["Lang", "Model", "Chat SHIFT TOR↑", "Chat SHIFT Latency↓", "Chat SHIFT MAE↓",
           "Chat PAUSE TOR↓", "Chat PAUSE Latency↑", "Chat BC Stop Latency↑",
           "Chat BARGE Stop Latency↓", "MT-QA SHIFT TOR↑", "MT-QA SHIFT Latency↓",
           "MT-QA BARGE Stop Latency↓", "MT-QA Rel.↑", "MT-QA Cons.↑", "MT-QA QA↑"]

BEST = {
    "en": {"chat/shift_tor": "Moshi-RL", "chat/shift_latency": "Moshi-RL",
           "chat/shift_mae": "BayLing-Duplex", "chat/pause_tor": "DuplexCascade",
           "chat/pause_latency": "DuplexCascade", "chat/bc_stop": "PersonaPlex-RL",
           # DuplexCascade's 0.35† is lower, but † estimates are excluded (the caption)
           "chat/barge_stop": "Moshi",
           "task/shift_tor": "Moshi-RL", "task/shift_latency": "PersonaPlex-RL",
           "task/barge_stop": "PersonaPlex", "task/relevance": "Moshi-RL",
           "task/consistency": "PersonaPlex", "task/qa": "PersonaPlex-RL"},
    "ja": {"chat/shift_tor": "LLM-jp-Moshi", "chat/shift_latency": "J-Moshi",
           "chat/shift_mae": "J-Moshi", "chat/pause_tor": "J-Moshi",
           "chat/pause_latency": "J-Moshi", "chat/bc_stop": "LLM-jp-Moshi",
           "chat/barge_stop": "J-Moshi", "task/shift_tor": "LLM-jp-Moshi",
           "task/shift_latency": "J-Moshi", "task/barge_stop": "J-Moshi",
           "task/relevance": "J-Moshi", "task/consistency": "J-Moshi", "task/qa": "J-Moshi"},
}
"""The bold cells of Table 5, worked out by hand from the caption's rule: the best value
within each language, excluding estimates marked †, by each column's arrow."""


def _parse(text: str) -> tuple[float, float | None, bool]:
    few = text.endswith("†")
    mean, _, half = text.rstrip("†").partition("±")
    return float(mean), float(half) if half else None, few


def _paper_rows() -> list[RowSource]:
    table = PAPER["table5"]
    rows = []
    for language, system, *cells in table["rows"]:
        values = {}
        for key, text in zip(table["columns"], cells, strict=True):
            mean, half, few = _parse(text)
            domain, column = key.split("/")
            values[(domain, column)] = CellValue(mean, half, few=few)
        rows.append(RowSource(system, language, values, "multi-gen"))
    return rows


def _md_cells(markdown: str) -> list[list[str]]:
    lines = [x for x in markdown.splitlines() if x.startswith("|")]
    return [[c.strip() for c in line.strip("|").split(" | ")] for line in lines]


def test_table5_reproduces_the_paper_cell_by_cell() -> None:
    rows = _md_cells(render_markdown(table5(_paper_rows())))
    assert rows[0] == HEADER5
    assert rows[1] == ["---", "---"] + ["---:"] * 13
    body = rows[2:]
    assert len(body) == len(PAPER["table5"]["rows"]) == 9
    previous = None
    for got, (language, system, *cells) in zip(body, PAPER["table5"]["rows"], strict=True):
        assert got[0] == ("" if language == previous else language.capitalize())
        previous = language
        assert got[1] == system
        for key, published, rendered in zip(PAPER["table5"]["columns"], cells, got[2:],
                                            strict=True):
            expected = f"**{published}**" if BEST[language][key] == system else published
            assert rendered == expected, (system, key)


def test_table5_bold_count_and_dagger_cells() -> None:
    markdown = render_markdown(table5(_paper_rows()))
    cells = [c for row in _md_cells(markdown)[2:] for c in row[2:]]
    assert sum(c.startswith("**") for c in cells) == 26  # 13 columns x 2 languages, no ties
    assert [c for c in cells if "†" in c] == ["0.41±0.25†", "0.35±0.21†"]
    assert "excluding estimates marked †" in markdown


def test_table6_reproduces_the_paper_cell_by_cell() -> None:
    spec = PAPER["table6"]
    sources = []
    for language, system, *cells in spec["rows"]:
        for p, protocol in enumerate(spec["protocols"]):
            values = {}
            for c, key in enumerate(spec["columns"]):
                text = cells[c * 3 + p].rstrip("+–")
                if text:
                    domain, column = key.split("/")
                    values[(domain, column)] = CellValue(float(text))
            if values:
                sources.append(RowSource(system, language, values, protocol))
    rows = _md_cells(render_markdown(table6(sources, show_ci=False)))
    assert rows[0][2:5] == ["MT-QA Rel.↑ Single", "MT-QA Rel.↑ Gen.", "MT-QA Rel.↑ Ref."]
    assert [r[1:] for r in rows[2:]] == [r[1:] for r in spec["rows"]]


# -- tables of hand-made results --------------------------------------------------------------

def _agg(event_type: str, metric: str, mean: float, half: float, n: int) -> AggregateRow:
    return AggregateRow(language="all", domain="all", official=True, event_type=event_type,
                        dimension="d", metric=metric, n=n, mean=mean, std=None,
                        ci95_low=mean - half, ci95_high=mean + half, ci95_half_width=half,
                        few_events=n < 20)


def make_results(system: str, tor: float, latency: float, n: int = 30,
                 protocol: str = "multi-gen", domain: str = "chat", language: str = "en",
                 oracle: tuple[str, ...] = (), dataset: str = "h1",
                 relevance: tuple[float, int, int] | None = None) -> Results:
    """Results of one run with a SHIFT TOR, a SHIFT latency and optionally relevance
    (mean, n, unscored); round-1 rows, listed first, are no table cells."""
    event = EventResult(event_id="e1", sample_id="s1", event_type="TURN_SHIFT",
                        language=language, domain=domain, dimension="d", values={},
                        extras={}, info={})
    content = None
    if relevance is not None:
        mean, k, unscored = relevance
        content = ContentResults(settings={}, not_computed=[], aggregates=[ContentAggregate(
            language="all", domain="all", kind="judged", dimension="relevance",
            scale="0-100", n=k, unscored=unscored, mean=mean, std=None, ci95_low=None,
            ci95_high=None, ci95_half_width=4.0, few_events=k < 20), ContentAggregate(
            language="all", domain="all", kind="judged", dimension="relevance",
            scale="0-100", n=5, unscored=0, mean=1.0, std=None, ci95_low=None,
            ci95_high=None, ci95_half_width=None, few_events=True, round=1)])
    return Results(
        source=SourceInfo(kind="run", path=f"runs/{system}-{protocol}", metadata="m",
                          system=system, oracle=list(oracle), protocol=protocol,
                          dataset=DatasetRef(name="d", content_hash=dataset,
                                             language=language, domain=domain)),
        variant=VariantInfo(name="m3", version="1", source="", settings={}), analysis=None,
        events=[event], content=content,
        aggregates=[_agg("TURN_SHIFT", "tor ↑", 0.0, 0.0, 2).model_copy(update={"round": 1}),
                    _agg("TURN_SHIFT", "tor ↑", tor, 0.05, n),
                    _agg("TURN_SHIFT", "latency ↓", latency, 0.1, n)])


def _table(*results: Results) -> list[RowSource]:
    runs = [(r.source.path, r) for r in results]
    labels = label_runs(runs)
    return merge_rows([row for label, (path, r) in zip(labels, runs, strict=True)
                       for row in row_sources(label, r, path)])


def test_cells_from_results_show_ci_n_dagger_unscored_and_oracle() -> None:
    rows = _table(make_results("cascade", 0.8, 1.234, relevance=(70.0, 25, 3)),
                  make_results("reference", 1.0, 0.3, oracle=("reference_audio",)),
                  make_results("silence", 0.95, 2.0, n=10))
    md = _md_cells(render_markdown(table5(rows)))
    assert md[0] == ["Lang", "Model", "Chat SHIFT TOR↑", "Chat SHIFT Latency↓", "Chat Rel.↑"]
    # silence's 95.0 is the highest TOR but has n < 20 (†); reference is an oracle row
    assert md[2] == ["En", "cascade", "**80.0±5.0** (n=30)", "**1.23±0.10** (n=30)",
                     "**70.0±4.0** (n=25, 3 unscored)"]
    assert md[3] == ["", "reference◆", "100.0±5.0 (n=30)", "0.30±0.10 (n=30)", "–"]
    assert md[4] == ["", "silence", "95.0±5.0† (n=10)", "2.00±0.10† (n=10)", "–"]


def test_equal_displayed_values_are_all_best_and_languages_are_grouped() -> None:
    rows = _table(make_results("a", 0.801, 1.0), make_results("b", 0.8, 1.5, language="ja"),
                  make_results("c", 0.7999, 1.0))
    md = _md_cells(render_markdown(table5(rows, show_n=False)))
    assert [r[:3] for r in md[2:]] == [["En", "a", "**80.1±5.0**"], ["", "c", "80.0±5.0"],
                                       ["Ja", "b", "**80.0±5.0**"]]
    rows = _table(make_results("a", 0.8, 1.0), make_results("c", 0.8, 1.0))
    md = _md_cells(render_markdown(table5(rows, show_n=False)))
    assert [r[2] for r in md[2:]] == ["**80.0±5.0**"] * 2


def test_runs_of_one_system_in_two_domains_share_a_row() -> None:
    rows = _table(make_results("moshi", 0.7, 1.0, domain="chat", dataset="chat"),
                  make_results("moshi", 0.9, 0.5, domain="task", dataset="task"))
    md = _md_cells(render_markdown(table5(rows, show_n=False)))
    assert md[0][2:] == ["Chat SHIFT TOR↑", "Chat SHIFT Latency↓", "MT-QA SHIFT TOR↑",
                         "MT-QA SHIFT Latency↓"]
    assert len(md) == 3 and md[2][1] == "moshi"


def test_two_runs_of_one_system_on_one_dataset_are_labelled_by_run() -> None:
    a, b = make_results("cascade", 0.7, 1.0), make_results("cascade", 0.9, 0.5)
    runs = [("cascade-eot0.2", a), ("cascade", b)]
    assert label_runs(runs) == ["cascade-eot0.2", "cascade"]


def _protocol_runs(mixed: bool = False) -> list[RowSource]:
    return _table(make_results("moshi", 0.7, 1.0, protocol="single"),
                  make_results("moshi", 0.8, 1.2, protocol="multi-gen"),
                  make_results("moshi", 0.7, 0.5, protocol="multi-ref",
                               dataset="other" if mixed else "h1"))


def test_table6_marks_against_single_with_the_metric_direction() -> None:
    md = _md_cells(render_markdown(table6(_protocol_runs(), show_ci=False, show_n=False)))
    assert md[0][2:] == ["Chat SHIFT TOR↑ Single", "Chat SHIFT TOR↑ Gen.",
                         "Chat SHIFT TOR↑ Ref.", "Chat SHIFT Latency↓ Single",
                         "Chat SHIFT Latency↓ Gen.", "Chat SHIFT Latency↓ Ref."]
    # TOR 80.0 > 70.0: better (+); latency 1.20 > 1.00: worse (–); 70.0 = 70.0: no mark
    assert md[2] == ["En", "moshi", "70.0", "80.0+", "70.0", "1.00", "1.20–", "0.50+"]


def test_table6_refuses_mixed_datasets_unless_allowed() -> None:
    with pytest.raises(DuplexevalError, match=r"dataset differs .*--allow-mixed"):
        table6(_protocol_runs(mixed=True))
    assert len(table6(_protocol_runs(mixed=True), allow_mixed=True).rows) == 1


def test_table5_names_the_protocol_when_runs_span_several() -> None:
    md = _md_cells(render_markdown(table5(_protocol_runs())))
    assert [r[1] for r in md[2:]] == ["moshi (Single)", "moshi (Gen.)", "moshi (Ref.)"]


def test_csv_is_one_row_per_cell_with_full_precision() -> None:
    rows = _table(make_results("cascade", 0.8123456, 1.0),
                  make_results("silence", 0.9, 2.0, n=10))
    text = render_csv(table5(rows))
    lines = text.splitlines()
    assert lines[0].startswith("table,language,model,protocol,domain,group,metric,better")
    assert len(lines) == 1 + 2 * 2
    first = lines[1].split(",")
    assert "81.23456" in first and "true" in first  # best, full precision


def test_latex_marks_bold_dagger_and_escapes() -> None:
    rows = _table(make_results("a_b&c", 0.8, 1.0), make_results("silence", 0.9, 2.0, n=10))
    tex = render_latex(table5(rows))
    assert r"\textbf{80.0$\pm$5.0}" in tex
    assert r"90.0$\pm$5.0$^{\dagger}$" in tex
    assert r"a\_b\&c" in tex
    assert r"\begin{tabular}" in tex and r"\bottomrule" in tex


def test_latex_domain_header_spans_the_metric_columns() -> None:
    tex = render_latex(table5(_paper_rows()))
    assert r" &  & \multicolumn{7}{c}{Chat} & \multicolumn{6}{c}{MT-QA} \\" in tex
    assert r"\cmidrule(lr){3-9} \cmidrule(lr){10-15}" in tex


def test_table5_lines_for_the_demo() -> None:
    from duplexeval.report._paper_tables import table5_lines

    lines = table5_lines([("cascade", make_results("cascade", 0.8, 1.0)),
                          ("silence", make_results("silence", 0.0, 2.0, n=10))])
    assert lines[0].startswith("| Lang | Model | Chat SHIFT TOR↑")
    assert lines[2].startswith("| En | cascade | **80.0±5.0** (n=30)")
    assert any("excluding estimates marked †" in line for line in lines)
    assert table5_lines([]) == []


def test_latex_table6_spans_each_metric_over_its_protocols() -> None:
    tex = render_latex(table6(_protocol_runs()))
    assert r"Lang & Model & \multicolumn{3}{c}{SHIFT TOR$\uparrow$} & " in tex
    assert r" & & Single & Gen. & Ref. & Single & Gen. & Ref. \\" in tex
    assert r"80.0$\pm$5.0+ {\scriptsize n=30}" in tex


def test_every_cell_carries_its_provenance_and_a_synthetic_suite_is_marked() -> None:
    """A run on a bundled suite's build (its name a suite's, under the cache's ``suites/``)
    gets § on every cell, a note saying it is not comparable with published numbers, and in
    the CSV the definition, the data and the synthetic flag; a user's own dataset does not."""
    suite = make_results("scripted", 0.9, 0.4)
    suite = suite.model_copy(update={
        "source": suite.source.model_copy(update={"dataset": DatasetRef(
            name="m3-chat-en", path="/cache/suites/m3-chat-en-quick-0123456789abcdef",
            content_hash="h1", language="en", domain="chat")}),
        "variant": suite.variant.model_copy(update={"definition": "official code"})})
    own = make_results("moshi", 0.8, 0.6, dataset="h2")
    table = table5(_table(suite, own))
    md = render_markdown(table)
    rows = {r[1]: r for r in _md_cells(md)}
    assert rows["scripted"][2] == "**90.0±5.0**§ (n=30)"
    assert "§" not in rows["moshi"][2]
    assert ("§ from a bundled synthetic suite: not comparable with published numbers. "
            "Data: m3-chat-en, quick subset.") in md
    assert "Definitions: m3 variant; m3 variant, official code (per cell in the CSV)." in md
    lines = list(csv.DictReader(io.StringIO(render_csv(table))))
    mine = [r for r in lines if r["model"] == "scripted"]
    assert {(r["definition"], r["data"], r["synthetic"]) for r in mine} == {
        ("m3 variant, official code", "m3-chat-en, quick subset", "true")}
    assert {r["synthetic"] for r in lines if r["model"] == "moshi"} == {"false"}


def test_another_variants_timing_never_fills_an_m3_column() -> None:
    """An ``mtr``-scored run has a ``latency ↓`` of TURN_SHIFT events too (floored at 0, from
    another window): it must not land in Table 5's SHIFT latency column, nor be bolded there;
    a run with nothing for M3's columns gives no row at all."""
    from duplexeval.report._paper_tables import sources_of, write_tables

    mtr = make_results("scripted", 0.9, 0.1)
    mtr = mtr.model_copy(update={"variant": mtr.variant.model_copy(update={"name": "mtr"})})
    m3 = make_results("moshi", 0.8, 0.6, dataset="h2")
    sources = sources_of([("a", mtr), ("b", m3)])
    assert [s.label for s in sources] == ["moshi"]
    assert sources_of([("a", mtr)]) == []
    assert write_tables([], Path("/nonexistent"), ["md"]) == []


def test_a_row_competes_for_bold_where_its_oracle_data_does_not_reach() -> None:
    """The cascade reads the reference text (content oracle): it competes on timing, not on
    content; the reference replays the reference audio (timing oracle): it competes on
    neither.  With both marked ◆, silence no longer wins SHIFT TOR by default::

        row          oracle                  SHIFT TOR   Rel.
        cascade◆     qa_references           90.0 bold   80.0 (not competing)
        reference◆   reference_audio         100.0       95.0 (not competing)
        silence      -                       0.0         10.0 bold
    """
    rows = _table(make_results("cascade", 0.9, 1.0, oracle=("qa_references",),
                               relevance=(80.0, 30, 0)),
                  make_results("reference", 1.0, 0.3, oracle=("reference_audio",),
                               relevance=(95.0, 30, 0)),
                  make_results("silence", 0.0, 2.0, relevance=(10.0, 30, 0)))
    md = {r[1]: r for r in _md_cells(render_markdown(table5(rows)))}
    assert md["cascade◆"][2].startswith("**90.0")
    assert not md["reference◆"][2].startswith("**") and not md["silence"][2].startswith("**")
    assert md["silence"][4].startswith("**10.0") and not md["cascade◆"][4].startswith("**")
