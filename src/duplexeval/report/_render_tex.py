"""LaTeX for a :class:`~.tables.Table`: a ``table`` float with a booktabs ``tabular``.

Two header rows as in the paper: the domain over its columns (``\\multicolumn``, with
``\\cmidrule``), then each metric with its arrow (in Table 6 over its protocols, with a third
row: Single / Gen. / Ref.).  Cells: ``mean$\\pm$half``, ``\\textbf{}`` for the best,
``$^{\\dagger}$``, Table 6's ``+``/``--``, ``{\\scriptsize n=…}``; ``--`` where there is no
value; ``\\midrule`` between languages.  The notes become the caption.  Needs
``\\usepackage{booktabs}`` (and ``amssymb`` for the oracle mark); labels and notes are
escaped (``& % $ # _ { } ~ ^ \\``).
"""

from __future__ import annotations

from itertools import groupby

from duplexeval.report._columns import domain_title, language_title, protocol_title
from duplexeval.report._tables import CellText, Table, cell_text

__all__ = ["escape", "render_latex"]

_SPECIAL = {"&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{",
            "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
            "\\": r"\textbackslash{}", "↑": r"$\uparrow$", "↓": r"$\downarrow$",
            "†": r"$^{\dagger}$", "±": r"$\pm$", "◆": r"$\blacklozenge$", "§": r"\S{}", "–": "--"}


def escape(text: str) -> str:
    """``text`` safe in LaTeX text mode."""
    return "".join(_SPECIAL.get(ch, ch) for ch in text)


def _cell(parts: CellText) -> str:
    if parts.empty:
        return "--"
    value = parts.value("$\\pm$")
    if parts.best:
        value = f"\\textbf{{{value}}}"
    if parts.dagger:
        value += "$^{\\dagger}$"
    if parts.synthetic:
        value += "\\S{}"
    value += {"+": "+", "-": "--"}.get(parts.delta, "")
    extra = ", ".join(x for x in (f"n={parts.n}" if parts.n else "", parts.unscored) if x)
    return f"{value} {{\\scriptsize {extra}}}" if extra else value


def _header(table: Table) -> list[str]:
    spans = [(d, len(list(g))) for d, g in groupby(c.domain for c in table.columns)]
    top, rules, start = ["", ""], [], 3
    for domain, width in spans:
        top.append(f"\\multicolumn{{{width}}}{{c}}{{{escape(domain_title(domain))}}}")
        rules.append(f"\\cmidrule(lr){{{start}-{start + width - 1}}}")
        start += width
    lines = [" & ".join(top) + r" \\", " ".join(rules)]
    metrics = [(m, len(list(g))) for m, g in groupby(
        (c.domain, c.metric) for c in table.columns)]
    lines.append("Lang & Model & " + " & ".join(
        escape(m.title) if width == 1 else f"\\multicolumn{{{width}}}{{c}}{{{escape(m.title)}}}"
        for (_, m), width in metrics) + r" \\")
    if table.kind == "table6":
        lines.append(" & & " + " & ".join(
            escape(protocol_title(c.protocol)) for c in table.columns) + r" \\")
    return lines


def render_latex(table: Table, caption: str = "") -> str:
    """The ``table`` environment (see the module docstring)."""
    spec = "ll" + "r" * len(table.columns)
    lines = [r"\begin{table*}[t]", r"\centering", r"\footnotesize",
             f"\\begin{{tabular}}{{{spec}}}", r"\toprule", *_header(table), r"\midrule"]
    previous = None
    for row in table.rows:
        if previous is not None and row.language != previous:
            lines.append(r"\midrule")
        language = escape(language_title(row.language)) if row.language != previous else ""
        previous = row.language
        cells = [_cell(cell_text(c, col.metric, table))
                 for c, col in zip(row.cells, table.columns, strict=True)]
        lines.append(" & ".join([language, escape(row.label), *cells]) + r" \\")
    text = " ".join(escape(n) for n in ([caption] if caption else []) + list(table.notes))
    lines += [r"\bottomrule", r"\end{tabular}", f"\\caption{{{text}}}", r"\end{table*}"]
    return "\n".join(lines) + "\n"
