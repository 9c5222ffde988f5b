"""The dialogue synthesizer: specs -> stereo audio, word alignments and events (M3 layout).

Per turn, the speaker's text is synthesized once (:mod:`duplexeval.speech._tts`), resampled to
the dataset rate (soxr) and trimmed to its speech; its words come from the engine's own timing
(ASR word timestamps for engines without any), fitted to its audio so that its pauses are where
the audio is silent (:mod:`duplexeval.synth._word_timing`).  Then it is placed on the
speaker's channel:

::

    user    |==turn==|        |==turn====....pause....===turn===|
    system             <gap>  ...              |bc|     <gap>|==turn==...
                       sampled from the reference gaps (stratified, seeded)

* **gap** - the silence between the end of the floor holder's speech and the start of a turn;
  the spec's ``gap`` if given, otherwise drawn from the reference turn-shift gaps (default: the
  gaps of the M3 chat toy annotations, ``timing_reference.json``) by stratified sampling, so
  that a dialogue's gaps follow the reference distribution closely.  A turn by the same speaker
  as the previous one follows after a drawn hold pause instead.
* **pause** - silence inserted after a word so that the pause lasts exactly ``seconds``.
* **backchannel** - the other speaker's short utterance, starting 0.05-0.25 s after the word,
  sped up to at most 0.8 s.
* **interruption** - the next turn starts 0.05-0.2 s after the word while this one goes on.
* **background** - another voice (one neither speaker uses, where the engine has one) mixed
  into a channel ``gain_db`` below the speakers, placed against a turn's start; it is not in
  the word alignments (its placement is recorded in the record's ``background_speech``).
* **FLEXI items** (a spec with ``flexi``) - the record's ``flexi`` field holds the scenario's
  annotations measured on the placed turns (:mod:`duplexeval.synth._flexi_record`).

Times are seconds from the start of the dialogue; the dialogue starts with ``lead`` seconds of
silence and ends with ``tail``.  Events come from the words by the annotation rules
(:func:`duplexeval.events.annotate_spans`), as for any other dataset.  Everything is
deterministic given the spec, the settings and the seed.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import soxr

from duplexeval._audio import write_audio
from duplexeval.data._dialogue import AudioInfo, Dialogue, Word
from duplexeval.data._flexi_record import FLEXI_FIELD
from duplexeval.data._m3 import audio_path, write_dataset
from duplexeval.errors import DuplexevalError
from duplexeval.events import annotate_spans
from duplexeval.speech._tts import TimedWord, TtsEngine, Utterance, load_engine
from duplexeval.synth._flexi_record import flexi_record
from duplexeval.synth._placement import PlacedTurn, _boundary, _Piece, _span_of
from duplexeval.synth._spec import DialogueSpec, Turn
from duplexeval.synth._utterance_cache import UtteranceCache, default_utterance_cache
from duplexeval.synth._word_timing import fit_words, speech_bounds
from duplexeval.timeline import Span

__all__ = [
    "DEFAULT_ENGINES",
    "PlacedTurn",
    "SynthSettings",
    "SynthesizedDialogue",
    "Synthesizer",
    "reference_gaps",
    "speech_bounds",
]

DEFAULT_ENGINES: dict[str, str] = {"en": "piper", "ja": "openjtalk"}
"""Language -> TTS engine used when the settings name none."""

DEFAULT_VOICES: dict[str, tuple[str, ...]] = {"en": ("joe-high", "joe"),
                                              "ja": ("mei-high", "mei")}
"""Per language, the voices given to channel 0 and channel 1 when a spec names none (distinct
where the engine has more than one).  English: the user (channel 0 of every bundled suite)
speaks with ``joe-high`` (derived from piper's ``joe``, see
:mod:`duplexeval.speech.engines._piper`), the system with ``joe`` itself, and background speech
takes the first voice neither uses (``joe-low``).  The derived voice goes to the user because
the user speaks less than the system in every suite (the shift costs about twice the
synthesis), as Japanese gives the user ``mei-high``."""

BC_MAX_SECONDS = 0.78
BC_MIN_SECONDS = 0.28
"""Shortest backchannel clip (seconds of speech) the synthesizer places: a shorter one is
synthesized again, slower, until it lasts this long.  OpenJTalk says a lone うん in 0.14 s,
which Silero (threshold 0.5) does not detect at all, so the audio did not carry the BC its
word alignment claims (2 of 9 BCs of m3-chat-ja's quick subset recovered from the audio);
at 0.18 s and longer Silero finds it."""
BC_SLOWER_SPEEDS = (0.75, 0.6, 0.5, 0.4, 0.3)
"""Speeds (engine ``speed``, < 1 = slower) tried in turn for a backchannel under
:data:`BC_MIN_SECONDS`."""
SELF_GAP = 0.6
"""Least silence (seconds) between two utterances placed on the same channel that the spec did
not join (more than the 0.5 s that separates IPUs)."""


def reference_gaps(name: str = "chat") -> tuple[float, ...]:
    """Turn-shift gaps (seconds) of a packaged timing reference: ``chat`` (M3 chat toy set) or
    ``task`` (M3 QA toy set); see ``timing_reference.json`` for the provenance."""
    data = json.loads((resources.files("duplexeval.synth") / "timing_reference.json")
                      .read_text(encoding="utf-8"))
    try:
        return tuple(float(x) for x in data["turn_shift_gaps"][name])
    except KeyError:
        raise DuplexevalError(f"no timing reference {name!r}; available: "
                              f"{', '.join(sorted(data['turn_shift_gaps']))}") from None


def reference_holds() -> tuple[float, ...]:
    data = json.loads((resources.files("duplexeval.synth") / "timing_reference.json")
                      .read_text(encoding="utf-8"))
    return tuple(float(x) for x in data["turn_hold_pauses"])


@dataclass(frozen=True)
class SynthSettings:
    """What a synthesized dataset depends on besides its specs."""

    sample_rate: int = 16000
    seed: int = 0
    engines: dict[str, str] = field(default_factory=lambda: dict(DEFAULT_ENGINES))
    gaps: tuple[float, ...] = field(default_factory=reference_gaps)
    """Reference turn-shift gaps to draw from (seconds; negative = overlap)."""
    holds: tuple[float, ...] = field(default_factory=reference_holds)
    """Reference pauses between two turns of the same speaker (seconds, > 0.5)."""
    lead: float = 0.5
    tail: float = 1.0

    def to_json(self) -> dict[str, Any]:
        return {"sample_rate": self.sample_rate, "seed": self.seed, "engines": self.engines,
                "gaps": list(self.gaps), "holds": list(self.holds), "lead": self.lead,
                "tail": self.tail}


@dataclass(frozen=True)
class SynthesizedDialogue:
    """A built dialogue: stereo audio (samples, 2) at ``sample_rate``, words, and the spec."""

    spec: DialogueSpec
    audio: np.ndarray
    sample_rate: int
    words: tuple[Word, ...]
    turn_shift_gaps: tuple[float, ...]
    """The gaps the placement drew (for the quality report)."""
    background: tuple[dict[str, Any], ...] = ()
    """Where background speech was placed (channel, start, end, text, gain_db)."""
    turns: tuple[PlacedTurn, ...] = ()
    """Where each spec turn was placed, in spec order."""

    @property
    def duration(self) -> float:
        """Length of the audio in seconds."""
        return len(self.audio) / self.sample_rate

    def dialogue(self, audio: AudioInfo | None = None) -> Dialogue:
        """The :class:`Dialogue` with events annotated from the words."""
        spans: dict[int, list[Span]] = {0: [], 1: []}
        for w in self.words:
            spans[w.channel].append(w.span)
        answers = [{"turn": i, "question": t.text, "answer": t.answer}
                   for i, t in enumerate(self.spec.turns) if t.answer]
        extra: dict[str, Any] = {"title": self.spec.title} if self.spec.title else {}
        if answers:
            extra["qa_references"] = answers
        if self.background:
            extra["background_speech"] = list(self.background)
        events = tuple(annotate_spans(spans))
        if self.spec.flexi is not None:
            extra[FLEXI_FIELD] = flexi_record(self.spec, self.turns, events, self.duration)
        return Dialogue(id=self.spec.id, events=events,
                        words=self.words, audio=audio, language=self.spec.language,
                        domain=self.spec.domain, extra=extra)


def _seed(*parts: object) -> int:
    digest = hashlib.sha256("\x1f".join(str(p) for p in parts).encode()).digest()
    return int.from_bytes(digest[:8], "little")


def _mix(placed: list[tuple[int, float, np.ndarray, list[TimedWord]]], rate: int, tail: float,
         ) -> tuple[np.ndarray, list[Word]]:
    """The stereo mix of the placed clips (``tail`` s of silence after the last, peak-limited to
    0.99) and their words in dialogue time (ms-rounded, sorted by start, channel, end).

    A clip ends at its last word's end as stored (ms-rounded): the few samples of TTS tail
    after it (at most tens of milliseconds, below -38 dBFS on the suites) are dropped, so a
    channel is silent from the end of each turn as its alignment gives it.  A run that mutes
    the user from an event's start (multi-gen continuations) then hears exactly what the
    unmuted pass heard up to there."""
    end = max(s + len(a) / rate for _, s, a, _ in placed) + tail
    audio = np.zeros((round(end * rate), 2), dtype=np.float32)
    words: list[Word] = []
    for channel, start, clip, clip_words in placed:
        a = round(start * rate)
        stop = (round(round(start + clip_words[-1].end, 3) * rate) - a if clip_words
                else len(clip))
        audio[a:a + min(len(clip), stop), channel] += clip[:stop]
        words += [Word(channel, round(start + w.start, 3), round(start + w.end, 3), w.text)
                  for w in clip_words]
    peak = float(np.abs(audio).max())
    if peak > 0.99:
        audio *= 0.99 / peak
    words.sort(key=lambda w: (w.start, w.channel, w.end))
    return audio, words


class Synthesizer:
    """Builds dialogues from specs with one TTS engine per language (loaded once).

    ``cache_utterances``: speak each text through the utterance cache
    (:mod:`duplexeval.synth._utterance_cache`, ``cache_root()/utterances``), so that a text
    spoken by an earlier build, here or in another process, is not synthesized again (the
    same audio and words: the engines are deterministic); ``False`` always synthesizes."""

    def __init__(self, settings: SynthSettings = SynthSettings(),
                 cache_utterances: bool = True) -> None:
        self.settings = settings
        self._engines: dict[str, TtsEngine] = {}
        self._transcriber: Any = None
        self._utterances = UtteranceCache(default_utterance_cache()) if cache_utterances \
            else None

    def engine(self, language: str) -> TtsEngine:
        if language not in self._engines:
            name = self.settings.engines.get(language)
            if name is None:
                raise DuplexevalError(f"no TTS engine for language {language!r}; configured: "
                                      f"{', '.join(sorted(self.settings.engines))}")
            self._engines[language] = load_engine(name)
        return self._engines[language]

    def forget_reused(self) -> None:
        """Drop the utterances kept for reuse, if the synthesizer keeps any (this one does not;
        :class:`~duplexeval.synth._mtr_synthesizer.MtrSynthesizer` does).  The parallel build
        calls it between groups of dialogues that share no text."""

    def voice(self, spec: DialogueSpec, speaker_id: str) -> str:
        speaker = spec.speaker(speaker_id)
        engine = self.engine(spec.language)
        if speaker.voice is not None:
            return engine.resolve_voice(speaker.voice)
        voices = engine.voices()
        preferred = [v for v in DEFAULT_VOICES.get(spec.language, ()) if v in voices]
        if len(preferred) == 2:
            return preferred[speaker.channel]
        return voices[speaker.channel % len(voices)]

    # -- utterances ------------------------------------------------------------------------

    def _background_voice(self, spec: DialogueSpec, voice: str | None) -> str:
        engine = self.engine(spec.language)
        if voice is not None:
            return engine.resolve_voice(voice)
        used = {self.voice(spec, s.id) for s in spec.speakers}
        free = [v for v in engine.voices() if v not in used]
        return free[0] if free else engine.voices()[0]

    def _prepare(self, spec: DialogueSpec, speaker_id: str, text: str,
                 speed: float = 1.0) -> _Piece:
        return self._prepare_voice(spec, text, self.voice(spec, speaker_id), speed)

    def _prepare_voice(self, spec: DialogueSpec, text: str, voice: str,
                       speed: float = 1.0) -> _Piece:
        engine = self.engine(spec.language)
        utt = (self._utterances.synthesize(engine, text, voice, speed)
               if self._utterances is not None else engine.synthesize(text, voice, speed))
        words = list(utt.words) or self._asr_words(utt, spec.language)
        if not words:
            raise DuplexevalError(f"{spec.id}: no words found in the synthesized {text!r}")
        rate = self.settings.sample_rate
        audio = utt.audio if utt.sample_rate == rate else \
            soxr.resample(utt.audio, utt.sample_rate, rate).astype(np.float32)
        audio, out = fit_words(audio, words, rate)
        if not out:
            raise DuplexevalError(f"{spec.id}: the TTS engine produced silence for {text!r}")
        return _Piece(audio, out, text)

    def _asr_words(self, utt: Utterance, language: str) -> list[TimedWord]:
        if self._transcriber is None:
            from duplexeval.speech._asr import Transcriber

            self._transcriber = Transcriber()
        words = self._transcriber.transcribe(utt.audio, utt.sample_rate, language)
        return [TimedWord(w.start, w.end, w.text) for w in words if w.end > w.start]

    def _with_pauses(self, piece: _Piece, turn: Turn) -> _Piece:
        """Insert silence so that each pause lasts exactly its ``seconds``."""
        rate = self.settings.sample_rate
        for pause in sorted(turn.all_pauses(), key=lambda p: -_boundary(piece, p)):
            i = _boundary(piece, pause)
            natural = piece.words[i + 1].start - piece.words[i].end
            extra = max(0.0, pause.seconds - natural)
            cut = round(piece.words[i].end * rate)
            piece.audio = np.concatenate([piece.audio[:cut],
                                          np.zeros(round(extra * rate), np.float32),
                                          piece.audio[cut:]])
            shift = round(extra * rate) / rate
            piece.words = piece.words[:i + 1] + [
                TimedWord(w.start + shift, w.end + shift, w.text) for w in piece.words[i + 1:]]
        return piece

    # -- placement ---------------------------------------------------------------------------

    def _draw(self, values: Sequence[float], n: int, rng: np.random.Generator) -> list[float]:
        """``n`` draws from the empirical distribution of ``values``, stratified: one uniform
        draw per equal-probability stratum, in random order, through the quantile function."""
        if n == 0:
            return []
        ref = np.sort(np.asarray(values, dtype=float))
        u = (np.arange(n) + rng.uniform(0, 1, n)) / n
        rng.shuffle(u)
        positions = u * len(ref)
        idx = np.minimum(positions.astype(int), len(ref) - 1)
        return [float(round(ref[i], 3)) for i in idx]

    def build(self, spec: DialogueSpec) -> SynthesizedDialogue:
        """Synthesize one dialogue."""
        st = self.settings
        rate = st.sample_rate
        rng = np.random.default_rng(_seed(st.seed, spec.id))
        turns = spec.turns
        shifts = sum(1 for i in range(1, len(turns)) if turns[i].gap is None
                     and turns[i].speaker != turns[i - 1].speaker
                     and turns[i - 1].interruption() is None)
        holds = sum(1 for i in range(1, len(turns)) if turns[i].gap is None
                    and turns[i].speaker == turns[i - 1].speaker)
        gap_draws = iter(self._draw(st.gaps, shifts, rng))
        hold_draws = iter(self._draw(st.holds, holds, rng))
        placed: list[tuple[int, float, np.ndarray, list[TimedWord]]] = []
        drawn: list[float] = []
        turn_starts: list[float] = []
        placements: list[PlacedTurn] = []
        floor_end = st.lead  # end of the latest speech so far
        busy = [-SELF_GAP, -SELF_GAP]  # per channel: where its latest speech ends
        start_at: float | None = st.lead
        for i, turn in enumerate(turns):
            channel = spec.speaker(turn.speaker).channel
            piece = self._with_pauses(self._prepare(spec, turn.speaker, turn.text), turn)
            if start_at is None:  # not set by an interruption
                if turn.gap is not None:
                    gap = turn.gap
                elif turn.speaker == turns[i - 1].speaker:
                    gap = next(hold_draws)
                else:
                    gap = next(gap_draws)
                    drawn.append(gap)
                start_at = max(floor_end + gap, st.lead)
            # a speaker never overlaps itself (e.g. its own backchannel late in the other's
            # turn): the turn waits for it
            start = round(max(start_at, busy[channel] + SELF_GAP) * rate) / rate
            placed.append((channel, start, piece.audio, piece.words))
            turn_starts.append(start)
            floor_end = max(floor_end, start + piece.duration)
            busy[channel] = start + piece.duration
            bcs = self._backchannels(spec, turn, piece, start, channel, busy, rng)
            placed += bcs
            placements.append(PlacedTurn(i, channel, start, turn.text, tuple(piece.words),
                                         tuple(_span_of(at, w) for _, at, _, w in bcs)))
            interruption = turn.interruption()
            if interruption is not None:
                cut = piece.words[_boundary(piece, interruption)].end
                start_at = start + cut + float(rng.uniform(0.05, 0.2))
            else:
                start_at = None
        background = self._background(spec, turn_starts, placed)
        audio, words = _mix(placed, rate, st.tail)
        return SynthesizedDialogue(spec, audio, rate, tuple(words), tuple(drawn),
                                   tuple(background), tuple(placements))

    def _backchannels(self, spec: DialogueSpec, turn: Turn, piece: _Piece, start: float,
                      channel: int, busy: list[float], rng: np.random.Generator,
                      ) -> list[tuple[int, float, np.ndarray, list[TimedWord]]]:
        """The listener's backchannels in a turn placed at ``start`` on ``channel``: each
        50-250 ms after its word, slowed down to last ``BC_MIN_SECONDS`` or sped up to fit
        ``BC_MAX_SECONDS``, never over the listener's
        own speech (``busy``, updated) and dropped when it would outlast the turn."""
        rate = self.settings.sample_rate
        out = []
        for bc in turn.backchannels:
            at = start + piece.words[_boundary(piece, bc)].end + float(rng.uniform(.05, .25))
            other = next(s.id for s in spec.speakers if s.id != turn.speaker)
            bc_piece = self._prepare(spec, other, bc.text)
            for slower in BC_SLOWER_SPEEDS:
                if bc_piece.duration >= BC_MIN_SECONDS:
                    break
                bc_piece = self._prepare(spec, other, bc.text, slower)
            if bc_piece.duration > BC_MAX_SECONDS:
                speed = min(4.0, bc_piece.duration / BC_MAX_SECONDS * 1.05)
                bc_piece = self._prepare(spec, other, bc.text, speed)
            at = round(max(at, busy[1 - channel] + SELF_GAP) * rate) / rate
            if at + bc_piece.duration > start + piece.duration:
                continue  # the listener is still talking until past this turn: no room
            out.append((1 - channel, at, bc_piece.audio, bc_piece.words))
            busy[1 - channel] = at + bc_piece.duration
        return out

    def _background(self, spec: DialogueSpec, turn_starts: list[float],
                    placed: list[tuple[int, float, np.ndarray, list[TimedWord]]],
                    ) -> list[dict[str, Any]]:
        """Place the spec's background speech (appended to ``placed``, no words); returns
        its records."""
        rate = self.settings.sample_rate
        background = []
        for b in spec.background:
            piece = self._prepare_voice(spec, b.text, self._background_voice(spec, b.voice))
            at = round(max(0.0, turn_starts[b.at_turn] + b.offset) * rate) / rate
            placed.append((b.channel, at, piece.audio * np.float32(10 ** (b.gain_db / 20)), []))
            background.append({"channel": b.channel, "start": round(at, 3),
                               "end": round(at + len(piece.audio) / rate, 3), "text": b.text,
                               "gain_db": b.gain_db})
        return background

    def write(self, built: Sequence[SynthesizedDialogue], out: Path, split: str = "test",
              metadata: dict[str, Any] | None = None) -> list[Dialogue]:
        """Write built dialogues in the M3 layout (wav PCM_16, alignments, events)."""
        dialogues = []
        for b in built:
            target = audio_path(out, b.spec.id)
            target.parent.mkdir(parents=True, exist_ok=True)
            write_audio(target, b.audio, b.sample_rate, subtype="PCM_16")
            info = AudioInfo(target, b.sample_rate, len(b.audio), 2)
            dialogues.append(b.dialogue(info))
        langs = {b.spec.language for b in built}
        domains = {b.spec.domain for b in built}
        meta = {"language": langs.pop() if len(langs) == 1 else None,
                "domain": domains.pop() if len(domains) == 1 else None,
                "synth": self.settings.to_json(), **(metadata or {})}
        write_dataset(out, split, dialogues, meta)
        return dialogues
