"""Japanese text: word segmentation and kana normalisation.

Word segmentation
-----------------
Japanese is written without spaces.  :func:`segment_words` (and :func:`word_spans`, which gives
the same words as character offsets) uses the OpenJTalk front end of ``pyopenjtalk-plus``
(extra ``[tts]``): its NJD word nodes, short dictionary units of NAIST-jdic (IPADIC-like)::

    今日はいい天気ですね。     ->  今日 | は | いい | 天気 | です | ね
    聞いてると思います         ->  聞い | てる | と | 思い | ます

with two adjustments:

* Kanji numerals: NJD splits them per character; a digit followed by a unit (十, 百, 千) is joined,
  as in the M3 toy word alignments (二千十七年 -> 二千 | 十 | 七 | 年, 千九百二十一 -> 千 | 九百 |
  二十 | 一).
* Words are always substrings of the input.  OpenJTalk rewrites some text (arabic digits to kanji,
  half-width to full-width latin); such a rewritten stretch is mapped back onto the input as one
  word (``3時`` -> ``3 | 時``, ``1,000円`` -> ``1,000 | 円``).

Punctuation, symbols and spaces (Unicode categories P*, S*, Z*, C*) are never part of a word.
Without pyopenjtalk the text is split at punctuation and at script changes (kanji, hiragana,
katakana, latin letters and digits), a coarse fallback (天気ですね -> 天気 | ですね).

Agreement with the official M3 toy alignments (``txt_align`` words re-segmented from their
concatenated IPU texts, 1,466 words): see ``tests/test_asr.py::test_segmentation_agrees_with_toy``.
The toy data mixes two conventions (chat: verb + auxiliary joined, 聞いてる; task: split,
あり | ます), so full agreement is impossible for any one segmenter.

Kana
----
:func:`to_kana` converts text to its katakana pronunciation (OpenJTalk, ``pyopenjtalk.g2p(text,
kana=True)``) without punctuation, for a Japanese character error rate that does not depend on
the script chosen (3時 and 三時 both become サンジ).
"""

from __future__ import annotations

import functools
import unicodedata
from importlib.util import find_spec
from types import ModuleType

from duplexeval._environment import installed_version
from duplexeval.errors import DuplexevalError

__all__ = ["is_ignorable", "normalized", "normalized_key", "segment_words", "segmenter", "to_kana",
           "word_spans"]

_DIGITS = set("一二三四五六七八九")
_UNITS = set("十百千")
_RESYNC_LOOKAHEAD = 8  # NJD nodes searched to re-align after a rewritten stretch


@functools.lru_cache(maxsize=1)
def _openjtalk_found() -> bool:
    """Whether pyopenjtalk is installed, found without importing it: the import takes about
    0.4 s, and every analysis names the segmenter (:func:`segmenter`, the ASR settings), while
    only a Japanese one uses it."""
    return find_spec("pyopenjtalk") is not None


def _openjtalk() -> ModuleType | None:
    return _import_openjtalk() if _openjtalk_found() else None


@functools.lru_cache(maxsize=1)
def _import_openjtalk() -> ModuleType | None:
    try:
        import pyopenjtalk
    except ImportError:
        return None
    return pyopenjtalk


def segmenter() -> str:
    """The segmenter in use, with its version (for results provenance)."""
    if not _openjtalk_found():
        return "script-fallback"
    return f"pyopenjtalk-plus {installed_version('pyopenjtalk-plus')}"


def is_ignorable(ch: str) -> bool:
    """True for characters never part of a word: punctuation, symbols, spaces, controls."""
    return unicodedata.category(ch)[0] in "PSZC" and ch not in "ー々〆"


def segment_words(text: str) -> list[str]:
    """The words of ``text`` in order, punctuation dropped (each a substring of ``text``)."""
    return [text[a:b] for a, b in word_spans(text)]


def word_spans(text: str) -> list[tuple[int, int]]:
    """Character offsets ``[start, end)`` into ``text`` of its words, in order.

    Spans do not overlap, and no span starts or ends with an ignorable character.
    """
    jtalk = _openjtalk()
    if jtalk is None:
        spans = _script_spans(text)
    else:
        surfaces = _njd_surfaces(jtalk, text)
        spans = _join_numbers(text, _align(text, surfaces))
    return [s for span in spans for s in _trim(text, span)]


def to_kana(text: str) -> str:
    """Katakana pronunciation of ``text`` with punctuation, symbols and spaces removed.

    ``"3時に行きます！"`` -> ``"サンジニイキマス"``.  Latin letters are spelt out
    (ABC -> エイビーシー).
    Needs pyopenjtalk-plus (extra ``[tts]``).
    """
    jtalk = _openjtalk()
    if jtalk is None:
        raise DuplexevalError(
            "Japanese kana conversion needs pyopenjtalk-plus: pip install 'duplexeval[tts]'")
    if not text.strip():
        return ""
    kana = jtalk.g2p(text, kana=True)
    return "".join(ch for ch in str(kana) if not is_ignorable(ch))


# -- NJD words ----------------------------------------------------------------------------------
def _njd_surfaces(jtalk: ModuleType, text: str) -> list[str]:
    """Surfaces of the NJD word nodes, kanji numerals regrouped (digit + unit joined)."""
    if not text.strip():
        return []
    out: list[str] = []
    numeral_open = False  # the last surface is a lone digit that a unit may join
    for node in jtalk.run_frontend(text):
        surface = str(node["string"])
        is_number = node.get("pos_group1") == "数"
        if is_number and numeral_open and surface in _UNITS:
            out[-1] += surface
            numeral_open = False
            continue
        out.append(surface)
        numeral_open = is_number and surface in _DIGITS
    return out


def normalized_key(text: str) -> str:
    """``text`` NFKC-normalised and casefolded: the form word surfaces are matched in."""
    return unicodedata.normalize("NFKC", text).casefold()


def normalized(text: str) -> tuple[str, list[int]]:
    """NFKC + casefolded ``text`` (:func:`normalized_key`, character by character) and, per
    normalised character, its index in ``text``."""
    chars: list[str] = []
    index: list[int] = []
    for i, ch in enumerate(text):
        for c in normalized_key(ch):
            chars.append(c)
            index.append(i)
    return "".join(chars), index


def _align(text: str, surfaces: list[str]) -> list[tuple[int, int]]:
    """Map word surfaces (possibly rewritten by the front end) onto ``text`` offsets.

    Surfaces matching the text in order take their own characters; a stretch that matches none
    (rewritten by the front end) becomes one span, up to where the next surfaces match again.
    """
    norm, index = normalized(text)
    keys = [normalized_key(s) for s in surfaces]
    keys = [k for k in keys if k]
    spans: list[tuple[int, int]] = []  # in normalised offsets
    i = k = 0
    n = len(norm)
    while k < len(keys) and i < n:
        while i < n and is_ignorable(norm[i]):
            i += 1
        if i >= n:
            break
        if norm.startswith(keys[k], i):
            spans.append((i, i + len(keys[k])))
            i += len(keys[k])
            k += 1
            continue
        if all(is_ignorable(c) for c in keys[k]):
            k += 1  # a symbol node the text does not have (e.g. a normalised one)
            continue
        best: tuple[int, int] | None = None  # (position, node)
        for k2 in range(k + 1, min(len(keys), k + 1 + _RESYNC_LOOKAHEAD)):
            j = norm.find(keys[k2], i + 1)
            if j != -1 and (best is None or j < best[0]):
                best = (j, k2)
        if best is None:
            spans.append((i, n))
            i = n
            break
        spans.append((i, best[0]))
        i, k = best
    if i < n and any(not is_ignorable(c) for c in norm[i:]):
        spans.append((i, n))  # text the front end dropped at the end
    return [(index[a], index[b - 1] + 1) for a, b in spans if b > a]


def _separator(text: str, pos: int) -> bool:
    """An ignorable character, except a digit group or decimal mark (1,000 and 2.5 stay whole)."""
    if not is_ignorable(text[pos]):
        return False
    if text[pos] in ",.，．" and 0 < pos < len(text) - 1:
        return not (text[pos - 1].isdigit() and text[pos + 1].isdigit())
    return True


def _join_numbers(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Join spans separated only by a digit group or decimal mark (1 , 000 -> 1,000)."""
    out: list[tuple[int, int]] = []
    for span in spans:
        if (out and span[0] == out[-1][1] + 1 and is_ignorable(text[out[-1][1]])
                and not _separator(text, out[-1][1])):
            out[-1] = (out[-1][0], span[1])
        else:
            out.append(span)
    return out


def _trim(text: str, span: tuple[int, int]) -> list[tuple[int, int]]:
    """``span`` split at ignorable characters (which are dropped)."""
    out: list[tuple[int, int]] = []
    start: int | None = None
    for pos in range(span[0], span[1]):
        if _separator(text, pos):
            if start is not None:
                out.append((start, pos))
                start = None
        elif start is None:
            start = pos
    if start is not None:
        out.append((start, span[1]))
    return out


# -- fallback without pyopenjtalk --------------------------------------------------------------
def _script(ch: str) -> str:
    code = ord(ch)
    if 0x3040 <= code <= 0x309F:
        return "hiragana"
    if 0x30A0 <= code <= 0x30FF or 0xFF66 <= code <= 0xFF9F or 0x31F0 <= code <= 0x31FF:
        return "katakana"
    if (0x4E00 <= code <= 0x9FFF or 0x3400 <= code <= 0x4DBF or 0xF900 <= code <= 0xFAFF
            or 0x20000 <= code <= 0x2FFFF or ch in "々〆〇ヶ"):
        return "kanji"
    if unicodedata.normalize("NFKC", ch).isalnum():
        return "latin"
    return "other"


def _script_spans(text: str) -> list[tuple[int, int]]:
    """Runs of one script; the prolonged sound mark ー extends the run before it."""
    spans: list[tuple[int, int]] = []
    start: int | None = None
    current = ""
    for pos, ch in enumerate(text):
        if _separator(text, pos):
            if start is not None:
                spans.append((start, pos))
                start = None
            continue
        script = _script(ch)
        if start is not None and (script == current or ch == "ー" or is_ignorable(ch)):
            continue
        if start is not None:
            spans.append((start, pos))
        start, current = pos, script
    if start is not None:
        spans.append((start, len(text)))
    return spans
