"""A griffe extension for the docs site: duplexeval's docstrings in the reST idioms they use,
shown as Markdown by mkdocstrings.

The docstrings are written to be read in the source and by ``help()``: literal blocks after
``::`` (the ASCII timelines), simple tables ruled with ``====``, section titles underlined with
``----`` and roles such as ``:func:`load```.  Markdown would show a ruled table as a heading
and a role as text, so, on every object griffe loads, this rewrites the docstring's text (not
the source):

* a paragraph ending in ``::`` followed by an indented block: the block becomes a fenced
  ``text`` block (its indentation kept relative to its first line), ``::`` becomes ``:``;
* a simple table (a ``====  ====`` rule, a header, a rule, rows, a rule): a fenced ``text``
  block, as it is;
* a title underlined with ``---`` or ``===``: a bold line;
* ``:role:`~a.b.c``` and ``:role:`a.b.c```: ```c``` and ```a.b.c```;
* a line that starts with ``>`` (a comparison wrapped onto a new line): ``\\>``, not a quote.

It is loaded by ``mkdocs.yml`` (``extensions: [scripts/griffe_rst.py:RstLite]``) and tested by
``tests/test_docs.py``.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

__all__ = ["RstLite", "rst_to_markdown"]

_ROLE = re.compile(r":(?:py:)?(?:func|meth|class|mod|data|attr|obj|exc|const|ref|term)"
                   r":`(~?)([^`]+)`")
_TABLE_RULE = re.compile(r"^\s*=+(\s+=+)+\s*$")
_UNDERLINE = re.compile(r"^\s*(-{3,}|={3,})\s*$")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _role(match: re.Match[str]) -> str:
    target = match.group(2)
    if match.group(1):
        target = target.rsplit(".", 1)[-1]
    return f"`{target}`"


def rst_to_markdown(text: str) -> str:
    """The docstring ``text`` with its reST idioms in Markdown (see the module docstring)."""
    lines = text.splitlines()
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        # a simple table: from its first rule to its third
        if _TABLE_RULE.match(line):
            rules, j = 0, i
            while j < len(lines) and rules < 3:
                if _TABLE_RULE.match(lines[j]):
                    rules += 1
                j += 1
            base = _indent(line)
            out += ["```text", *(row[base:] for row in lines[i:j]), "```"]
            i = j
            continue
        # a title underlined with --- or ===
        if (i + 1 < len(lines) and line.strip() and _UNDERLINE.match(lines[i + 1])
                and len(lines[i + 1].strip()) >= len(line.strip()) - 2):
            out.append(f"**{line.strip()}**")
            i += 2
            continue
        # a literal block: a line ending in ::, a blank line, an indented block
        if line.rstrip().endswith("::"):
            stripped = line.rstrip()[:-2].rstrip()
            j = i + 1
            while j < len(lines) and not lines[j].strip():
                j += 1
            if j < len(lines) and _indent(lines[j]) > _indent(line):
                base = _indent(lines[j])
                block: list[str] = []
                k = j
                while k < len(lines) and (not lines[k].strip() or _indent(lines[k]) >= base):
                    block.append(lines[k][base:] if lines[k].strip() else "")
                    k += 1
                while block and not block[-1]:
                    block.pop()
                if stripped:
                    out += [_ROLE.sub(_role, stripped) + ":", ""]
                pad = " " * _indent(line)
                out += [f"{pad}```text", *(f"{pad}{row}" if row else "" for row in block),
                        f"{pad}```", ""]
                i = k
                continue
        # a line that starts with ">" (a comparison wrapped onto a new line) is no quote
        out.append(_ROLE.sub(_role, re.sub(r"^(\s*)>", r"\1\\>", line)))
        i += 1
    return "\n".join(out)


class RstLite(griffe.Extension):
    """Rewrites every docstring griffe loads with :func:`rst_to_markdown`."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        """Griffe's hook for each object it loads (module, class, function, attribute)."""
        if obj.docstring is not None:
            obj.docstring.value = rst_to_markdown(obj.docstring.value)
