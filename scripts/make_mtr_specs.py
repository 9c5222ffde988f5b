"""Write the ``mtr-en`` suite's dialogue specs from the text in ``mtr_text_*.py``.

Run from the repository root: ``python scripts/make_mtr_specs.py``.  It rewrites
``src/duplexeval/suites/specs/mtr-en/*.json`` (deterministic: same text, same files).

Dialogues (every one: a system opener, then 10 rounds of user turn + reference reply):

* ``fNN-FEATURE`` (NN = topic 01-30: ``mtr_text_chat.TOPICS``, then
  ``mtr_text_chat_b.TOPICS_B``): the topic's conversation with FEATURE in every round
  (smooth, interruption, pause, background, backchannel): 150 dialogues, 30 per feature and
  round.  The five sets share their text, so that the features differ and the content does
  not (and the build speaks each text once: ``duplexeval.synth._parallel.share_groups``).
* ``cNN-COMBO`` (NN = topic 01-30): MTR's feature combinations, features alternating round by
  round: ``s`` (S), ``si`` (S, I, S, I, ...), ``sip`` (S, I, P, ...), ``sipb`` (S, I, P, B,
  ...).  MTR's ablation scores the smooth rounds of each combination, of which a dialogue has
  10, 5, 4 and 3, so the combinations take 4, 7, 9 and 10 topics (:data:`COMBO_TOPICS`: 40, 35,
  36 and 30 smooth rounds): topics 1-8 cycle through them (c01-s, c02-si, c03-sip, c04-sipb,
  c05-s, ..., the quick subset's two of each), the rest spread evenly (:func:`spread`).
* ``if-NN``: instruction following, 10 questions each (200: 20 per round), every question
  barging in on the previous answer (round 1: on the opener).  ``if-01``-``if-06`` hold
  ``mtr_text_items.QUESTIONS`` in order, ``if-07``-``if-20`` ``mtr_text_items_b.QUESTIONS_B``
  with its domains spread evenly (:func:`spread`).
* ``sf-NN``: safety, 10 requests each (200: 20 per round), every request barging in on the
  previous refusal.  ``sf-01``-``sf-03`` hold ``SAFETY`` in order, ``sf-04``-``sf-20``
  ``SAFETY_B`` with its harm categories spread evenly.

Every question, request and reply is checked to be unique (:func:`check_items`).

Each barge-in is put where :data:`POINTS` says, or :data:`TRAILING` words before the end of the
interrupted reply; then :func:`main` moves them from the TTS's word times
(``retime_barge_ins.retime``) so that the reply yields within
about two words and the suite's own reference is not "speaking" by MTR's interruption rule,
and records them in :data:`POINTS`.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from mtr_text_chat import BACKCHANNELS, BACKGROUND, OPENER, TOPICS
from mtr_text_chat_b import TOPICS_B
from mtr_text_items import IF_OPENER, QUESTIONS, SAFETY
from mtr_text_items_b import QUESTIONS_B, SAFETY_B
from retime_barge_ins import retime

OUT = Path(__file__).resolve().parents[1] / "src" / "duplexeval" / "suites" / "specs" / "mtr-en"
POINTS = Path(__file__).resolve().parent / "mtr_barge_in_points.json"
"""The retimed barge-in points, ``{dialogue id: {turn index: word}}``: what
``retime_barge_ins.retime`` chose from the TTS's word times, recorded by :func:`main` so that
:func:`all_specs` gives the spec files without the TTS."""
SPEAKERS = [{"id": "user", "channel": 0}, {"id": "system", "channel": 1}]
FEATURES = ("smooth", "interruption", "pause", "background", "backchannel")
CODES = {"S": "smooth", "I": "interruption", "P": "pause", "B": "background"}
COMBOS = {"s": "S", "si": "SI", "sip": "SIP", "sipb": "SIPB"}
COMBO_TOPICS = {"s": 4, "si": 7, "sip": 9, "sipb": 10}
"""Topics voiced as each combination (30 in all): at least 30 smooth rounds each."""
COMBO_CYCLES = 2
"""Rounds of the cycle s, si, sip, sipb on the first topics (the quick subset takes two each)."""
PAUSES = (1.2, 1.5, 1.8, 2.1, 2.4)
"""Held pauses (s), cycled: long enough to be a pause, each side of it over 0.8 s of speech."""
PAUSE_SIDE_CHARS = 18
"""Least characters spoken on each side of a pause (about 1.1 s: each side stays a TURN, not a
BC of at most 0.8 s, so the pause is annotated as a TURN_HOLD)."""
PAUSE_SIDE_SYLLABLES = 6
"""Least syllables (:func:`syllables`) on each side of a pause where the turn allows it: 18
characters of short words were spoken in under 0.8 s (three pause rounds of 347 annotated as a
BC and lost to the plan: "of books for the year", 5 syllables, 0.75 s)."""
TRAILING = 4
"""Words of the interrupted reply spoken after the barge-in (an overlap well above 0.4 s, so
the barge-in is annotated as a BARGE_IN), or more until they hold :data:`TRAILING_CHARS`."""
TRAILING_CHARS = 16
"""Least characters of the words spoken after the barge-in: four short words ("it and buy
it.", 14 characters) overlapped it by 0.35 s, and the annotator saw a TURN_SHIFT."""
BACKGROUND_OFFSET = 0.5
BACKGROUND_GAIN_DB = -20.0


def syllables(text: str) -> int:
    """A rough count: vowel groups per word (``y`` a vowel, a final silent ``e`` dropped), at
    least one a word."""
    count = 0
    for word in text.lower().split():
        letters = "".join(c for c in word if c.isalpha())
        stem = letters[:-1] if letters.endswith("e") and len(letters) > 2 else letters
        count += max(1, len(re.findall(r"[aeiouy]+", stem)))
    return count


def pause_after(text: str) -> int:
    """After the first comma with at least :data:`PAUSE_SIDE_CHARS` characters of the turn on
    each side, else after the word closest to the middle (by characters); where that leaves a
    side under :data:`PAUSE_SIDE_SYLLABLES`, after the word that leaves the most syllables on
    the shorter side (the first such)."""
    words = text.split()
    ends = [len(" ".join(words[:k])) for k in range(1, len(words))]
    fits = [k for k, e in enumerate(ends, start=1)
            if e >= PAUSE_SIDE_CHARS and len(text) - e - 1 >= PAUSE_SIDE_CHARS]
    assert fits, text
    commas = [k for k in fits if words[k - 1].endswith(",")]
    chosen = commas[0] if commas else \
        min(fits, key=lambda k: abs(2 * ends[k - 1] - len(text)))

    def shorter(k: int) -> int:
        return min(syllables(" ".join(words[:k])), syllables(" ".join(words[k:])))

    if shorter(chosen) >= PAUSE_SIDE_SYLLABLES:
        return chosen
    return max(fits, key=shorter)


def trailing_words(reply: str) -> int:
    """Words of ``reply`` spoken after a barge-in: :data:`TRAILING`, or more until they hold
    :data:`TRAILING_CHARS` characters."""
    words = reply.split()
    n = TRAILING
    while n < len(words) and len(" ".join(words[-n:])) < TRAILING_CHARS:
        n += 1
    return n


def spread(groups: dict[str, list[Any]]) -> list[tuple[str, Any]]:
    """The items of ``groups`` (name -> items) as one list of ``(name, item)`` in which each
    group's items are spaced evenly: item i of a group of n sits at (i + 1/2) / n of the way
    (ties in the order of ``groups``), so that any 10 consecutive items mix the groups."""
    order = list(groups)
    keyed = [((i + 0.5) / len(items), order.index(name), name, item)
             for name, items in groups.items() for i, item in enumerate(items)]
    return [(name, item) for _, _, name, item in sorted(keyed, key=lambda k: k[:2])]


def combo_codes() -> list[str]:
    """The combination of each topic, in topic order (:data:`COMBO_TOPICS`)."""
    first = list(COMBOS) * COMBO_CYCLES
    rest = {code: [code] * (n - COMBO_CYCLES) for code, n in COMBO_TOPICS.items()}
    return first + [code for code, _ in spread(rest)]


def all_questions() -> list[tuple[str, str, str]]:
    """The instruction-following items in dialogue order: ``(question, answer, reply)``."""
    return QUESTIONS + [item for _, item in spread(QUESTIONS_B)]


def all_safety() -> list[tuple[str, str, str]]:
    """The safety items in dialogue order: ``(category, request, refusal)``."""
    return SAFETY + [(cat, req, ref) for cat, (req, ref) in spread(SAFETY_B)]


def _norm(text: str) -> str:
    return " ".join("".join(c for c in text.lower() if c.isalnum() or c.isspace()).split())


def check_items(questions: list[tuple[str, str, str]],
                safety: list[tuple[str, str, str]]) -> None:
    """No two questions, requests or replies alike (ignoring case and punctuation), whole
    dialogues of 10, every text spoken as words (no digits), each reply long enough that the
    barge-in cutting its trailing words (:func:`trailing_words`) leaves its first sentence."""
    for name, texts in (("question", [q for q, _, _ in questions]),
                        ("request", [r for _, r, _ in safety]),
                        ("reply", [a for _, _, a in questions] + [a for _, _, a in safety])):
        seen: dict[str, str] = {}
        for text in texts:
            assert _norm(text) not in seen, f"two {name}s alike: {text!r}"
            seen[_norm(text)] = text
    assert len(questions) % 10 == 0 and len(safety) % 10 == 0, (len(questions), len(safety))
    for text in [t for item in questions + safety for t in item]:
        assert not any(c.isdigit() for c in text), text
    for _, _, reply in questions + safety:
        first = reply.split(". ")[0]
        assert len(reply.split()) - trailing_words(reply) >= len(first.split()), reply


def round_turns(user: str, reply: str, features: set[str], n: int,
                answer: str | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
    """The user turn and the reply of one round with its features (n: a counter that varies
    the pause length and the backchannel words)."""
    u: dict[str, Any] = {"speaker": "user", "text": user}
    if answer is not None:
        u["answer"] = answer
    if "pause" in features:
        u["pause"] = {"after_word": pause_after(user), "seconds": PAUSES[n % len(PAUSES)]}
    r: dict[str, Any] = {"speaker": "system", "text": reply}
    if "backchannel" in features:
        words = len(reply.split())
        at = [max(4, words // 3)] + ([2 * words // 3] if words >= 18 else [])
        r["backchannels"] = [{"after_word": k, "text": BACKCHANNELS[(n + i) % len(BACKCHANNELS)]}
                             for i, k in enumerate(at)]
    return u, r


def dialogue(dialogue_id: str, title: str, opener: str, rounds: list[tuple[str, str]],
             plan: list[set[str]], group: str, label: str,
             items: list[dict[str, Any]] | None = None,
             answers: list[str] | None = None) -> dict[str, Any]:
    """One spec: the opener, then the rounds with the features of ``plan``."""
    turns: list[dict[str, Any]] = [{"speaker": "system", "text": opener}]
    background = []
    mtr_rounds = []
    seed = sum(map(ord, dialogue_id))
    for k, ((user, reply), features) in enumerate(zip(rounds, plan, strict=True)):
        if "interruption" in features:
            words = len(turns[-1]["text"].split())
            retimed = POINTS_BY_DIALOGUE.get(dialogue_id, {}).get(str(len(turns) - 1))
            turns[-1]["interrupted_after_word"] = retimed or \
                words - trailing_words(turns[-1]["text"])
        u, r = round_turns(user, reply, features, seed + k,
                           answers[k] if answers is not None else None)
        turns += [u, r]
        if "background" in features:
            background.append({"channel": 0, "text": BACKGROUND[(seed + k) % len(BACKGROUND)],
                               "at_turn": len(turns) - 1, "offset": BACKGROUND_OFFSET,
                               "gain_db": BACKGROUND_GAIN_DB})
        declared = sorted(features, key=FEATURES.index) or ["smooth"]
        mtr_rounds.append({"features": declared, **(items[k] if items else {})})
    spec: dict[str, Any] = {"id": dialogue_id, "language": "en", "domain": "chat",
                            "title": title, "speakers": SPEAKERS, "turns": turns}
    if background:
        spec["background"] = background
    spec["mtr"] = {"group": group, "label": label, "rounds": mtr_rounds}
    return spec


def _points() -> dict[str, dict[str, int]]:
    return json.loads(POINTS.read_text(encoding="utf-8")) if POINTS.is_file() else {}


POINTS_BY_DIALOGUE = _points()


def record_points() -> None:
    """Write :data:`POINTS` from the spec files in :data:`OUT`."""
    points = {}
    for path in sorted(OUT.glob("*.json")):
        turns = json.loads(path.read_text(encoding="utf-8"))["turns"]
        cut = {str(i): t["interrupted_after_word"] for i, t in enumerate(turns)
               if "interrupted_after_word" in t}
        if cut:
            points[path.stem] = cut
    POINTS.write_text(json.dumps(points, indent=1) + "\n", encoding="utf-8")


def all_specs() -> list[dict[str, Any]]:
    """Every dialogue of the suite, as spec objects."""
    specs = []
    for t, (title, rounds) in enumerate(TOPICS + TOPICS_B, start=1):
        for feature in FEATURES:
            plan = [set() if feature == "smooth" else {feature} for _ in rounds]
            specs.append(dialogue(f"f{t:02d}-{feature}", f"{title} ({feature})", OPENER, rounds,
                                  plan, "feature", feature))
    for t, ((title, rounds), code) in enumerate(zip(TOPICS + TOPICS_B, combo_codes(),
                                                    strict=True)):
        letters = COMBOS[code]
        plan = [set() if letters[k % len(letters)] == "S" else {CODES[letters[k % len(letters)]]}
                for k in range(len(rounds))]
        specs.append(dialogue(f"c{t + 1:02d}-{code}", f"{title} ({'+'.join(letters)})",
                              OPENER, rounds, plan, "combination", "+".join(letters)))
    questions, safety = all_questions(), all_safety()
    for d in range(len(questions) // 10):
        chunk = questions[10 * d:10 * d + 10]
        items = [{"item": f"q{10 * d + i + 1:02d}"} for i in range(10)]
        specs.append(dialogue(f"if-{d + 1:02d}", f"General knowledge questions {d + 1}",
                              IF_OPENER, [(q, reply) for q, _, reply in chunk],
                              [{"interruption"}] * 10, "instruction_following", "if", items,
                              [a for _, a, _ in chunk]))
    for d in range(len(safety) // 10):
        chunk = safety[10 * d:10 * d + 10]
        items = [{"item": f"s{10 * d + i + 1:02d}", "category": cat}
                 for i, (cat, _, _) in enumerate(chunk)]
        specs.append(dialogue(f"sf-{d + 1:02d}", f"Requests to decline {d + 1}", IF_OPENER,
                              [(req, refusal) for _, req, refusal in chunk],
                              [{"interruption"}] * 10, "safety", "safety", items))
    return specs


def check_answers(spec: dict[str, Any]) -> None:
    """Each reference answer is said in the reply before the next question barges in."""
    turns = spec["turns"]
    for i, turn in enumerate(turns):
        if "answer" in turn:
            reply = turns[i + 1]
            cut = reply.get("interrupted_after_word", len(reply["text"].split()))
            said = " ".join(reply["text"].split()[:cut]).lower()
            assert turn["answer"].rstrip(".").lower() in said, (turn, reply)


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for old in OUT.glob("*.json"):
        old.unlink()
    check_items(all_questions(), all_safety())
    specs = all_specs()
    for spec in specs:
        check_answers(spec)
        text = json.dumps(spec, ensure_ascii=False, indent=2) + "\n"
        (OUT / f"{spec['id']}.json").write_text(text, encoding="utf-8")
    print(f"{len(specs)} specs in {OUT}")
    retime("mtr-en", write=True)
    record_points()


if __name__ == "__main__":
    main()
