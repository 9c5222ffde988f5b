"""Tiny sources in the exact formats of /work/shared/references/datasets.md (CANDOR,
MagicData, TopiOCQA), with the words and utterances each one defines."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import soundfile as sf

from duplexeval.data import Word

UUID = "0020a0c5-1658-4747-99c1-2839e736b481"
SPEAKER_L = "5e531b2205acdb33c0f5f24c"
SPEAKER_R = "8e123"
"""A hex-like id that pandas would read as the float 8e+123: it must stay text."""

CANDOR_WORDS = [
    Word(0, 0.30, 0.50, "So"), Word(0, 0.55, 0.80, "where"), Word(0, 0.85, 1.00, "are"),
    Word(0, 1.05, 1.20, "you"), Word(0, 1.25, 1.60, "from"),
    Word(1, 0.90, 1.20, "Yeah"),                                  # BC inside the L turn
    Word(1, 1.80, 2.30, "Ohio"), Word(1, 2.40, 2.90, "you"),      # shift after a 0.2 s gap
    Word(0, 2.70, 3.40, "Cleveland"), Word(0, 3.45, 4.00, "actually"),  # 0.2 s overlap
    Word(0, 4.80, 5.00, "and"), Word(0, 5.05, 5.70, "you"),       # hold after 0.8 s
]
CANDOR_SECONDS = 6.0
CANDOR_RATE = 48000

AUDIOPHILE = [  # turn_id, speaker, start, stop, utterance, interval, delta, q, endq, ovl, n
    [0, SPEAKER_L, 0.30, 1.60, "So where are you from?", "", 1.30, 1, True, False, 5],
    [1, SPEAKER_R, 0.90, 1.20, "Yeah", -0.70, 0.30, 0, False, True, 1],
    [2, SPEAKER_R, 1.80, 2.90, "Ohio, you?", 0.60, 1.10, 1, True, False, 2],
    [3, SPEAKER_L, 2.70, 5.70, "Cleveland actually. And you?", -0.20, 3.00, 1, True, True, 4],
]
HEADER = ["turn_id", "speaker", "start", "stop", "utterance", "interval", "delta", "questions",
          "end_question", "overlap", "n_words"]
BC_COLUMNS = ["backchannel", "backchannel_count", "backchannel_speaker", "backchannel_start",
              "backchannel_stop"]


def _speechy(rate: int, seconds: float, words: list[Word], channel: int) -> np.ndarray:
    """Noise bursts where the channel's words are, silence elsewhere."""
    x = np.zeros(round(rate * seconds), dtype=np.float32)
    rng = np.random.default_rng(channel)
    for w in words:
        if w.channel == channel:
            a, b = round(w.start * rate), round(w.end * rate)
            x[a:b] = 0.3 * rng.standard_normal(b - a).astype(np.float32)
    return x


def _write_csv(path: Path, header: list[str], rows: list[list[object]]) -> None:
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)


def aws_items(words: list[Word]) -> list[dict[str, object]]:
    """AWS Transcribe ``results.items``: string times, a punctuation item after each turn end."""
    items: list[dict[str, object]] = []
    for w in sorted(words, key=lambda w: w.start):
        items.append({"start_time": f"{w.start:.2f}", "end_time": f"{w.end:.2f}",
                      "alternatives": [{"confidence": "0.99", "content": w.text}],
                      "type": "pronunciation"})
        if w.text in ("from", "actually"):
            items.append({"alternatives": [{"confidence": "0.0", "content": "?"}],
                          "type": "punctuation"})
    return items


def make_candor(root: Path, mp3: bool = True) -> Path:
    """``root/<uuid>/`` with a stereo 48 kHz MP3 (WAV when ``mp3`` is false), channel_map.json,
    metadata.json, the three transcript CSVs and a minimal AWS Transcribe JSON."""
    folder = root / UUID
    (folder / "processed").mkdir(parents=True)
    (folder / "transcription").mkdir()
    audio = np.stack([_speechy(CANDOR_RATE, CANDOR_SECONDS, CANDOR_WORDS, ch) for ch in (0, 1)],
                     axis=1)
    suffix = "mp3" if mp3 else "wav"
    sf.write(str(folder / "processed" / f"{UUID}.{suffix}"), audio, CANDOR_RATE)
    (folder / "processed" / "channel_map.json").write_text(
        json.dumps({"L": SPEAKER_L, "R": SPEAKER_R}))
    (folder / "metadata.json").write_text(json.dumps({
        "id": UUID, "sessionId": UUID, "createdAt": 1600000000000,
        "speakers": [{"user_id": SPEAKER_L, "channel": "L"},
                     {"user_id": SPEAKER_R, "channel": "R"}]}))
    tr = folder / "transcription"
    _write_csv(tr / "transcript_audiophile.csv", HEADER, AUDIOPHILE)
    _write_csv(tr / "transcript_cliffhanger.csv", HEADER, AUDIOPHILE)
    backbiter = [[*r[:5], "Yeah", 1, SPEAKER_R, 0.90, 1.20, *r[5:]] if r[0] == 0 else
                 [*r[:5], "", 0, "", "", "", *r[5:]] for r in AUDIOPHILE if r[0] != 1]
    _write_csv(tr / "transcript_backbiter.csv", HEADER[:5] + BC_COLUMNS + HEADER[5:], backbiter)
    text = " ".join(w.text for w in sorted(CANDOR_WORDS, key=lambda w: w.start))
    (tr / "transcribe_output.json").write_text(json.dumps({
        "jobName": UUID, "accountId": "1", "status": "COMPLETED",
        "results": {"transcripts": [{"transcript": text}], "items": aws_items(CANDOR_WORDS)}}))
    return folder


MAGIC_ID = "A0022_S0003"
MAGIC_TXT = (  # the last column of the gender field is RAMC-style on one line
    "[0.300,1.500]\tG0001\t女\tゴルフですか\n"
    "[0.800,1.100]\tG0002\t男\tうん\n"                 # overlapping backchannel
    "[1.700,3.000]\tG0002\t男\tはいそうです[+]\n"      # a marker to strip
    "[3.100,3.400]\t0\t无\t[NPS]\n"                    # non-speech: skipped
    "[3.500,3.900]\tG0001\t女\t[*]\n"                  # unintelligible: dropped
    "[4.000,5.200]\tG0001\t女,普通话\t楽しいですね\n"
)
MAGIC_UTTERANCES = [(0, 0.3, 1.5, "ゴルフですか"), (1, 0.8, 1.1, "うん"),
                    (1, 1.7, 3.0, "はいそうです"), (0, 4.0, 5.2, "楽しいですね")]
MAGIC_SECONDS = 6.0


def make_magicdata(root: Path, per_speaker: bool = False) -> Path:
    """``root/TXT/<id>.txt`` and its audio: a stereo 16 kHz WAV, or one mono WAV per speaker
    (16 kHz and 8 kHz, so that one is resampled)."""
    (root / "TXT").mkdir(parents=True)
    (root / "WAV").mkdir()
    (root / "TXT" / f"{MAGIC_ID}.txt").write_text(MAGIC_TXT, encoding="utf-8")
    words = [Word(ch, s, e, t) for ch, s, e, t in MAGIC_UTTERANCES]
    if per_speaker:
        for ch, (spk, rate) in enumerate((("G0001", 16000), ("G0002", 8000))):
            sf.write(str(root / "WAV" / f"{MAGIC_ID}_{spk}.wav"),
                     _speechy(rate, MAGIC_SECONDS, words, ch), rate)
    else:
        audio = np.stack([_speechy(16000, MAGIC_SECONDS, words, ch) for ch in (0, 1)], axis=1)
        sf.write(str(root / "WAV" / f"{MAGIC_ID}.wav"), audio, 16000)
    return root


TOPIOCQA = [
    {"Conversation_no": 1, "Turn_no": 1, "Question": "what is dunkirk about?",
     "Answer": "The 1940 evacuation of Allied soldiers from the beaches of Dunkirk.",
     "Topic": "Dunkirk (2017 film)", "Topic_section": "Introduction", "Rationale": "...",
     "is_nq": False, "Context": [], "Additional_answers": [],
     "Gold_passage": {"id": "1", "title": "Dunkirk (2017 film)", "text": "..."}},
    {"Conversation_no": 1, "Turn_no": 2, "Question": "when was it released on dvd?",
     "Answer": "December 18, 2017", "Topic": "Dunkirk (2017 film)", "Topic_section": "Release",
     "Rationale": "...released on DVD on 18 December 2017.", "is_nq": False,
     "Context": ["what is dunkirk about?", "The 1940 evacuation."],
     "Additional_answers": [{"Answer": "18 December 2017", "Topic": "Dunkirk (2017 film)",
                             "Topic_section": "Release", "Rationale": "..."}],
     "Gold_passage": {"id": "123", "title": "Dunkirk (2017 film)", "text": "..."}},
    {"Conversation_no": 2, "Turn_no": 1, "Question": "who painted the night watch?",
     "Answer": "Rembrandt", "Topic": "The Night Watch", "Topic_section": "Introduction",
     "Rationale": "...", "is_nq": True, "Context": [], "Additional_answers": []},
    {"Conversation_no": 2, "Turn_no": 2, "Question": "what did he eat that day?",
     "Answer": "UNANSWERABLE", "Topic": "The Night Watch", "Topic_section": "Introduction",
     "Rationale": "", "is_nq": False, "Context": ["who painted the night watch?", "Rembrandt"],
     "Additional_answers": []},
]


def make_topiocqa(root: Path, jsonl: bool = False) -> Path:
    """The Zenodo ``topiocqa_dev.json`` (a JSON array, one key a line) or the HF
    ``topiocqa_valid.jsonl``."""
    root.mkdir(parents=True, exist_ok=True)
    if jsonl:
        path = root / "topiocqa_valid.jsonl"
        path.write_text("".join(json.dumps(t) + "\n" for t in TOPIOCQA), encoding="utf-8")
    else:
        path = root / "topiocqa_dev.json"
        path.write_text(json.dumps(TOPIOCQA, indent=1), encoding="utf-8")
    return path
