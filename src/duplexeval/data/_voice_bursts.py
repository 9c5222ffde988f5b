"""``duplexeval data voice-bursts``: stereo audio for a dataset that has only annotations.

Every word span of the alignments is filled, on its channel, with speech from the packaged clip
bank (a clip cut or repeated to the span's exact length, 5 ms fades), so that voice activity
and the annotation rules see the official timing.  The words are not what the clips say: this
audio exercises timing, not ASR.  The clip for a word is chosen deterministically from the
dialogue id and the word's position.
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import numpy as np

from duplexeval._audio import write_audio
from duplexeval.data._dialogue import Dataset, Dialogue
from duplexeval.data._m3 import METADATA_FILE, alignment_path, audio_path, write_dataset
from duplexeval.errors import DuplexevalError
from duplexeval.speech._clipbank import ClipBank, fill_span

__all__ = ["voice_bursts", "voice_dialogue"]


def _index(dialogue_id: str, position: int) -> int:
    digest = hashlib.sha256(f"{dialogue_id}:{position}".encode()).digest()
    return int.from_bytes(digest[:4], "little")


def voice_dialogue(dialogue: Dialogue, language: str, sample_rate: int = 16000,
                   tail: float = 1.0) -> np.ndarray:
    """Stereo float32 audio (samples, 2) of a dialogue's word spans voiced with clips."""
    if not dialogue.words:
        raise DuplexevalError(f"dialogue {dialogue.id}: no word alignments to voice")
    bank = ClipBank.load()
    if language not in bank.languages():
        language = "en"
    n = round((dialogue.annotation_end + tail) * sample_rate)
    audio = np.zeros((n, 2), dtype=np.float32)
    for position, word in enumerate(dialogue.words):
        a, b = round(word.start * sample_rate), round(word.end * sample_rate)
        if b <= a:
            continue
        clip = bank.pick(language, _index(dialogue.id, position)).resampled(sample_rate)
        audio[a:b, word.channel] = fill_span(clip, b - a, sample_rate)
    return audio


def voice_bursts(dataset: Dataset, out: Path, sample_rate: int = 16000) -> list[Path]:
    """Write ``dataset`` with voiced audio into ``out`` (M3 layout); returns the wav paths."""
    if out.resolve() == dataset.root.resolve():
        raise DuplexevalError(f"{out}: write the voiced dataset to another folder")
    language = dataset.language or "en"
    written = []
    for dialogue in dataset.dialogues:
        audio = voice_dialogue(dialogue, dialogue.language or language, sample_rate)
        target = audio_path(out, dialogue.id)
        write_audio(target, audio, sample_rate, subtype="PCM_16")
        written.append(target)
    stripped = [Dialogue(d.id, d.events, d.channel_order, d.words, None, d.language, d.domain,
                         d.extra) for d in dataset.dialogues]
    write_dataset(out, dataset.split, stripped)
    if (dataset.root / METADATA_FILE).exists():
        shutil.copyfile(dataset.root / METADATA_FILE, out / METADATA_FILE)
    for d in dataset.dialogues:
        assert alignment_path(out, d.id).exists()
    return written
