"""Write the dialogue specs of the ``flexi-en`` suite from the text tables beside this script.

    python scripts/make_flexi_specs.py [OUT_DIR]   (default: src/duplexeval/suites/specs/flexi-en)

The text (``flexi_text_a.py``, ``flexi_text_b.py``) is original, written for duplexeval.  This
script only turns it into spec JSON: positions marked ``|`` become ``after_word`` counts, the
user-interrupt answers are cut off 4 words before their end, and ids are ``NN-scenario`` so that
files sorted by name take the scenarios in turn (a prefix of the suite covers all six).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from flexi_text_a import PAUSE_HANDLING, TURN_TAKING, USER_INTERRUPT
from flexi_text_b import MODEL_BACKCHANNEL, MODEL_INTERRUPT, USER_BACKCHANNEL

SPEAKERS = [{"id": "user", "channel": 0}, {"id": "system", "channel": 1}]
TRAILING_WORDS = 4
"""Words the system still says after the user starts to interrupt it."""


def gap(n: int, turn: int = 0) -> float:
    """The reference system's silence before answering item ``n`` (seconds, 0.3-0.85 s in
    0.05 s steps, spread over the items): explicit and positive, because an answer that
    overlapped the user's turn would make the M3 plan drop the item's turn-shift sample."""
    return round(0.3 + 0.05 * ((7 * n + 5 * turn) % 12), 2)


def _marks(text: str) -> tuple[str, list[int]]:
    """The text without ``|`` and, per mark, the number of words before it."""
    positions, words = [], []
    for token in text.split():
        if token.endswith("|"):
            words.append(token[:-1])
            positions.append(len(words))
        else:
            words.append(token)
    return " ".join(words), positions


def _spec(n: int, scenario: str, title: str, turns: list[dict[str, Any]],
          **flexi: Any) -> dict[str, Any]:
    return {"id": f"{n:02d}-{scenario}", "language": "en", "domain": "flexi", "title": title,
            "speakers": SPEAKERS, "turns": turns, "flexi": {"scenario": scenario, **flexi}}


def specs() -> list[dict[str, Any]]:
    out = []
    for n, (title, query, answer) in enumerate(TURN_TAKING, 1):
        out.append(_spec(n, "turn_taking", title, [
            {"speaker": "user", "text": query},
            {"speaker": "system", "text": answer, "gap": gap(n)}]))
    for n, (title, first, second, seconds, answer) in enumerate(PAUSE_HANDLING, 1):
        out.append(_spec(n, "pause_handling", title, [
            {"speaker": "user", "text": f"{first} {second}",
             "pause": {"after_word": len(first.split()), "seconds": seconds}},
            {"speaker": "system", "text": answer, "gap": gap(n)}]))
    for n, (title, query, answer, question, answer2) in enumerate(USER_INTERRUPT, 1):
        out.append(_spec(n, "user_interrupt", title, [
            {"speaker": "user", "text": query},
            {"speaker": "system", "text": answer,
             "interrupted_after_word": len(answer.split()) - TRAILING_WORDS, "gap": gap(n)},
            {"speaker": "user", "text": question},
            {"speaker": "system", "text": answer2, "gap": gap(n, 3)}]))
    for n, (title, kind, hazard, text, response) in enumerate(MODEL_INTERRUPT, 1):
        clean, (key,) = _marks(text)
        out.append(_spec(n, "model_interrupt", title, [
            {"speaker": "user", "text": clean},
            {"speaker": "system", "text": response, "gap": gap(n)}],
            hazard=hazard, hazard_kind=kind, recognisable={"turn": 0, "after_word": key}))
    for n, (title, query, answer, bc) in enumerate(USER_BACKCHANNEL, 1):
        clean, (at,) = _marks(answer)
        out.append(_spec(n, "user_backchannel", title, [
            {"speaker": "user", "text": query},
            {"speaker": "system", "text": clean, "gap": gap(n),
             "backchannels": [{"after_word": at, "text": bc}]}]))
    for n, (title, story, bcs, response) in enumerate(MODEL_BACKCHANNEL, 1):
        clean, positions = _marks(story)
        assert len(positions) == len(bcs), title
        out.append(_spec(n, "model_backchannel", title, [
            {"speaker": "user", "text": clean,
             "backchannels": [{"after_word": k, "text": t}
                              for k, t in zip(positions, bcs, strict=True)]},
            {"speaker": "system", "text": response, "gap": gap(n)}]))
    return out


def main() -> None:
    root = Path(__file__).resolve().parents[1]
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else \
        root / "src" / "duplexeval" / "suites" / "specs" / "flexi-en"
    out.mkdir(parents=True, exist_ok=True)
    for spec in specs():
        (out / f"{spec['id']}.json").write_text(
            json.dumps(spec, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
