"""Golden transcripts of a network adapter's messages (tests/golden/transcripts/*.json), for the
tests that catch protocol drift against an upstream server that cannot run here.

A golden file holds ``source`` (the upstream repository, commit and files the messages were read
from) and ``client``: the messages the adapter must send in one short session, in order.  Each
message is a *template*: a JSON value whose leaves are either a fixed value (compared as it is)
or a placeholder naming the leaf's type:

====================  =========================================================
``"<str>"``           any string
``"<base64>"``        a non-empty string that decodes as standard base64
``"<int>"``           a JSON integer (not a boolean)
``"<number>"``        a JSON integer or fraction (finite)
``"<bool>"``          ``true`` or ``false``
====================  =========================================================

A list of one template matches a non-empty list whose every element matches it (a PCM byte
array); a longer list is compared element by element.  A template ``{"repeat": T}`` stands for
one or more consecutive messages that match ``T`` (an audio stream); ``{"repeat": [T1, T2,
...]}`` for one or more consecutive messages that each match one of them, in any interleaving
(audio with acknowledgements whose timing is the wall clock's).

:func:`render` writes the actual messages in the template's vocabulary: a leaf under a
placeholder becomes the placeholder of its own type, everything else stays as it is,
and a run of messages that match one ``repeat`` becomes that one entry; so ``render(actual,
golden) == golden`` holds exactly when the messages conform, and when they do not the pytest
diff names the message and field that drifted (a new, missing or renamed field; another type;
another fixed value; another order).
"""

from __future__ import annotations

import base64
import binascii
import json
import math
from pathlib import Path
from typing import Any

__all__ = ["load_golden", "render"]

GOLDEN = Path(__file__).parent / "golden" / "transcripts"
PLACEHOLDERS = ("<str>", "<base64>", "<int>", "<number>", "<bool>")


def load_golden(name: str) -> dict[str, Any]:
    """The golden transcript ``tests/golden/transcripts/{name}.json``."""
    data: dict[str, Any] = json.loads((GOLDEN / f"{name}.json").read_text(encoding="utf-8"))
    assert {"source", "client"} <= set(data), f"{name}: needs 'source' and 'client'"
    return data


def _type_of(value: Any, wanted: str) -> str:
    """The placeholder ``value`` fills in the place of ``wanted`` (``wanted`` itself when it
    fits, else the closest name of what it is)."""
    if isinstance(value, bool):
        return "<bool>"
    if isinstance(value, int):
        return "<number>" if wanted == "<number>" else "<int>"
    if isinstance(value, float):
        return "<number>" if math.isfinite(value) else f"<non-finite {value}>"
    if isinstance(value, str):
        if wanted == "<base64>":
            try:
                ok = bool(value) and bool(base64.b64decode(value, validate=True))
            except (binascii.Error, ValueError):
                ok = False
            return "<base64>" if ok else "<str, not base64>"
        return "<str>"
    return f"<{type(value).__name__}: {json.dumps(value)[:40]}>"


def _render_value(actual: Any, template: Any) -> Any:
    if isinstance(template, str) and template in PLACEHOLDERS:
        return _type_of(actual, template)
    if isinstance(template, dict) and isinstance(actual, dict):
        return {k: _render_value(v, template.get(k)) for k, v in actual.items()}
    if isinstance(template, list) and isinstance(actual, list):
        if len(template) == 1 and actual:  # one template for every element
            rendered = [_render_value(v, template[0]) for v in actual]
            return template if all(r == template[0] for r in rendered) else rendered
        return [_render_value(v, t) for v, t in zip(actual, template, strict=False)] + \
            actual[len(template):]
    return actual


def _matches(actual: Any, template: Any) -> bool:
    return _render_value(actual, template) == template


def render(messages: list[Any], golden: list[Any]) -> list[Any]:
    """``messages`` in the vocabulary of the ``golden`` templates (module docstring)."""
    out: list[Any] = []
    i = 0
    for template in golden:
        if i >= len(messages):
            break
        if isinstance(template, dict) and set(template) == {"repeat"}:
            inner = template["repeat"]
            options = inner if isinstance(inner, list) else [inner]
            if not any(_matches(messages[i], t) for t in options):
                out.append(_render_value(messages[i], options[0]))
                i += 1
                continue
            while i < len(messages) and any(_matches(messages[i], t) for t in options):
                i += 1
            out.append(template)
        else:
            out.append(_render_value(messages[i], template))
            i += 1
    out.extend(messages[i:])  # messages the transcript does not have, as they are
    return out
