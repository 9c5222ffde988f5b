"""Write the bundled ``sample-en`` dataset (annotations and word alignments, no audio).

A developer tool, run once; its output is committed under src/duplexeval/bundled/sample-en.
Word durations follow a simple length model (0.12 s + 0.055 s per letter); utterances are
placed relative to the previous one (see QA and CHAT), and ``|`` inside an utterance is a
0.3 s within-turn pause.
Usage: python scripts/make_sample_data.py
"""

from __future__ import annotations

import json
from pathlib import Path

from duplexeval.data import write_dataset
from duplexeval.data._annotate import annotate_alignment_files

OUT = Path(__file__).resolve().parents[1] / "src" / "duplexeval" / "bundled" / "sample-en"

# (channel, placement, seconds, text).  QA: channel 1 asks (user), channel 0 answers (system).
# "after": start that many seconds after the previous main utterance ends (negative: overlap);
# "during": start that many seconds after the previous main utterance starts (a backchannel,
# which does not become the previous main utterance, or with "barge" a barge-in, which does).
QA = [
    (1, "after", 0.40, "Hi, can you tell me which planet is closest to the sun?"),
    (0, "after", 0.35, "Sure. | Mercury is the closest planet to the sun."),
    (1, "after", 0.60, "How long is a year there?"),
    (0, "after", 0.25, "A year on Mercury lasts about eighty eight Earth days."),
    (1, "during", 1.50, "mm-hm"),
    (1, "after", 0.15, "And does it have any moons?"),
    (0, "after", 0.80, "No, Mercury has no moons at all, | and neither does Venus."),
    (1, "barge", 2.20, "Wait, what about Venus, is it hotter?"),
    (0, "after", -0.20, "Yes. Venus is hotter because its thick atmosphere traps heat."),
    (1, "after", 0.45, "Which of the two is larger?"),
    (0, "after", 0.30, "Venus is much larger, almost the size of Earth."),
    (0, "after", 1.10, "Its diameter is about twelve thousand kilometres."),
    (1, "after", 0.50, "Thanks, that is really helpful."),
]

CHAT = [
    (0, "after", 0.30, "So what did you do over the weekend?"),
    (1, "after", 0.25, "Oh, I went hiking up in the hills with my sister."),
    (0, "during", 1.20, "yeah"),
    (1, "after", 0.70, "It was cold in the morning | but the view from the top was great."),
    (0, "after", -0.30, "That sounds lovely, how long did it take you?"),
    (1, "after", 0.20, "About four hours there and back."),
    (0, "after", 0.55, "Four hours? I would be exhausted after that."),
    (1, "during", 0.90, "right"),
    (0, "after", 1.40, "Last time I tried a long walk I had to stop halfway."),
    (1, "barge", 1.60, "You should come with us next time, we go slowly."),
    (1, "after", 0.90, "We stop a lot for photos anyway."),
    (0, "after", 0.10, "Maybe I will, if the weather is good."),
    (1, "after", 0.35, "Great, I will send you the details."),
]


def words_of(channel: int, start: float, text: str) -> tuple[list[str], float]:
    lines = []
    t = start
    for index, chunk in enumerate(text.split("|")):
        if index:
            t = round(t + 0.3, 2)
        for word in chunk.split():
            letters = sum(ch.isalnum() for ch in word)
            dur = round(0.12 + 0.055 * letters, 2)
            lines.append(f"{channel}\t{round(t, 2)}\t{round(t + dur, 2)}\t{word}")
            t = round(t + dur, 2)
    return lines, t


def place(turns: list[tuple[int, str, float, str]]) -> dict[int, list[str]]:
    lines: dict[int, list[str]] = {0: [], 1: []}
    prev_start = prev_end = 0.0
    for channel, how, offset, text in turns:
        start = round((prev_end if how == "after" else prev_start) + offset, 2)
        words, end = words_of(channel, start, text)
        lines[channel] += words
        if how != "during":
            prev_start, prev_end = start, end
    return lines


def main() -> None:
    align = OUT / "txt_align"
    align.mkdir(parents=True, exist_ok=True)
    for name, turns in (("sample_qa_0001", QA), ("sample_chat_0001", CHAT)):
        by_channel = place(turns)
        lines = by_channel[0] + by_channel[1]
        (align / f"{name}.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    dialogues = annotate_alignment_files(sorted(align.glob("*.txt")))
    write_dataset(OUT, "test", dialogues)
    meta = {"name": "sample-en", "language": "en", "domain": "mixed",
            "description": "Two short English dialogues (QA and chat) with hand-timed words; "
                           "no audio. A planning and annotation fixture."}
    (OUT / "dataset.json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
