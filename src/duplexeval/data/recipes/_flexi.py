"""``duplexeval data import flexi SOURCE -o DATASET_DIR``: FLEXI's released data in the M3
layout (:mod:`.m3`).  Nothing is downloaded: SOURCE is a local copy.

Source layout (FLEXI, Ge et al. 2025; its inference clients read ``*/input.wav`` and its
evaluators the annotation files next to it, ``ChristineCHEN274/FLEXI`` @2247b0d)::

    SOURCE/                      a scenario folder, or a folder of scenario folders
      turn_taking/dialog_N/      input.wav, input.json, *turn_taking.json
      pause_handing/dialog_N/    input.wav, input.json, pause.json {"timestamp": [s, e]}
      user_interruption/...      input.wav, input.json, interrupt.json [{"timestamp": [s, e],
                                 "context", "interrupt"}]
      user_backchannel/...       input.wav, input.json, metadata.json {"user_backchannel_times"}
      model_interruption/...     input.wav, input.json
      model_backchannel/...      input.wav, input.json

A scenario folder is recognised by its name (``turn``+``taking``, ``pause``, ``user``/``model``
+ ``interrupt``, ``user``/``model`` + ``backchannel``, any case and separator) or named with
``--scenario``.  ``input.json`` (the user's words, FLEXI's ``asr.py`` format) is optional;
without it the user's speech comes from an energy VAD of ``input.wav`` and no words are written.

What is written, per ``dialog_N`` (id ``flexi_{scenario}_{dialog_N}``):

* ``audio/{id}.wav``: stereo at the source rate, channel 0 the user (``input.wav``, channels
  averaged), channel 1 the system (silent: FLEXI ships no system audio);
* ``txt_align/{id}.txt``: the user's words on channel 0;
* events: the user's TURN/BC/SHORTPAUSE/TURN_HOLD from the annotation rules
  (:func:`~duplexeval.events.annotate_spans`), plus the scenario's event::

      turn_taking        TURN_SHIFT on 1 at the user's end ([t, t]; t from *turn_taking.json,
                         else the last word's end)
      pause_handling     TURN_HOLD on 0 over pause.json's span (derived holds overlapping it
                         are replaced), and TURN_SHIFT on 1 at the user's end
      user_interrupt     BARGE_IN on 0 over interrupt.json's span
      user_backchannel   BC on 0 from the backchannel time to the end of the word there
                         (FLEXI's rule: the first word after a > 1.5 s gap, else
                         metadata.json's first user_backchannel_times)
      model_interrupt    TURN_SHIFT on 1 at the user's end (an early start is the interruption)
      model_backchannel  TURN_SHIFT on 1 at the user's end (the user's holds are where the
                         system may backchannel)

* ``extra["flexi"]``: the scenario, the source folder name and FLEXI's annotation values
  (``user_end``, ``pause``, ``interrupt`` with ``context`` and ``interrupt_text``,
  ``backchannel_time``), for FLEXI's own
  rules.

Caveat: FLEXI has no reference system turn, so M3's protocols, which need the system inside a
TURN at a BC or BARGE_IN, filter the user-interrupt and user-backchannel events out; the
FLEXI variant reads ``extra["flexi"]`` instead.
"""

from __future__ import annotations

import itertools
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from duplexeval._audio import AudioReadError, read_audio, write_audio
from duplexeval._fileio import read_json, safe_name
from duplexeval.data._dialogue import AudioInfo, Dialogue, Word
from duplexeval.data._m3 import audio_path, write_dataset
from duplexeval.errors import DuplexevalError
from duplexeval.events import AnnotationRules, Event, EventKind, annotate_spans, sort_events
from duplexeval.timeline import Span

__all__ = ["SCENARIOS", "find_scenarios", "import_flexi", "scenario_of", "summary"]

SCENARIOS = ("turn_taking", "pause_handling", "user_interrupt", "model_interrupt",
             "user_backchannel", "model_backchannel")
INPUT_WAV = "input.wav"
BACKCHANNEL_GAP = 1.5
"""FLEXI's gap (seconds) before the user's backchannel (``eval_user_backchannel.py`` l. 30)."""


def scenario_of(name: str) -> str | None:
    """The scenario a folder name stands for, or ``None``."""
    parts = set(re.split(r"[^a-z]+", name.lower()))
    text = name.lower()
    if ("turn" in parts and "taking" in parts) or "turntaking" in text:
        return "turn_taking"
    if "pause" in text:
        return "pause_handling"
    for kind in ("interrupt", "backchannel"):
        if kind in text:
            who = "user" if "user" in parts else "model" if "model" in parts else None
            return f"{who}_{kind}" if who else None
    return None


def find_scenarios(source: Path, scenario: str | None = None) -> list[tuple[str, Path]]:
    """``(scenario, folder)`` pairs under ``source`` (itself, or its scenario folders)."""
    if not source.is_dir():
        raise DuplexevalError(f"{source}: not a folder (expected FLEXI's data)")
    if scenario is not None:
        if scenario not in SCENARIOS:
            raise DuplexevalError(f"unknown FLEXI scenario {scenario!r} (one of: "
                                  f"{', '.join(SCENARIOS)})")
        return [(scenario, source)]
    own = scenario_of(source.name)
    if own is not None:
        return [(own, source)]
    found = [(s, p) for p in sorted(source.iterdir()) if p.is_dir()
             and (s := scenario_of(p.name)) is not None]
    if not found:
        raise DuplexevalError(f"{source}: no FLEXI scenario folder found (name them like "
                              f"turn_taking, pause_handing, user_interruption, ... or pass "
                              f"--scenario)")
    return found


# -- reading one dialog --------------------------------------------------------------------------

def _user_audio(folder: Path) -> tuple[np.ndarray, int]:
    wav = folder / INPUT_WAV
    if not wav.is_file():
        raise DuplexevalError(f"{wav}: required file not found")
    try:
        x, rate = read_audio(wav)
    except AudioReadError as exc:
        raise DuplexevalError(f"{wav}: not a readable audio file ({exc.reason})") from None
    return x.mean(axis=1), int(rate)


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def _user_words(folder: Path, duration: float) -> list[Word] | None:
    """The words of ``input.json`` (chunks with two numeric times), ordered, made
    non-overlapping and clipped to the audio; ``None`` without the file."""
    path = folder / "input.json"
    if not path.is_file():
        return None
    data = read_json(path, "FLEXI transcript")
    chunks = data.get("chunks") if isinstance(data, dict) else None
    if not isinstance(chunks, list):
        raise DuplexevalError(f"{path}: expected {{\"chunks\": [{{\"text\", \"timestamp\"}}]}}")
    timed = []
    for chunk in chunks:
        stamp = chunk.get("timestamp") if isinstance(chunk, dict) else None
        if isinstance(stamp, list) and len(stamp) >= 2:
            start, end = _number(stamp[0]), _number(stamp[1])
            text = str(chunk.get("text", "")).strip()
            if start is not None and end is not None and text:
                timed.append((start, end, text))
    words: list[Word] = []
    for start, end, text in sorted(timed):
        start = max(start, words[-1].end if words else 0.0)
        end = min(max(end, start), duration)
        if start <= end:
            words.append(Word(0, start, end, text))
    return words


def _activity(x: np.ndarray, rate: int) -> list[Span]:
    from duplexeval.speech._activity import ActivityOptions, detect_activity

    return detect_activity(x, rate, ActivityOptions())


@dataclass(frozen=True)
class _Source:
    folder: Path
    scenario: str
    audio: np.ndarray
    rate: int
    words: list[Word] | None
    spans: list[Span]

    @property
    def duration(self) -> float:
        return len(self.audio) / self.rate

    @property
    def user_end(self) -> float:
        return max((s.end for s in self.spans), default=0.0)


def _read_source(folder: Path, scenario: str) -> _Source:
    audio, rate = _user_audio(folder)
    words = _user_words(folder, len(audio) / rate)
    spans = [w.span for w in words] if words is not None else _activity(audio, rate)
    return _Source(folder, scenario, audio, rate, words, spans)


# -- the scenario's events -----------------------------------------------------------------------

def _annotation(path: Path, what: str) -> Any:
    if not path.is_file():
        raise DuplexevalError(f"{path}: required file not found ({what})")
    return read_json(path, what)


def _span_of(value: Any, path: Path, where: str, duration: float) -> tuple[float, float]:
    """``[start, end]`` numbers, the end clipped to the audio."""
    start = _number(value[0]) if isinstance(value, list) and len(value) >= 2 else None
    end = _number(value[1]) if start is not None else None
    if start is None or end is None or not 0 <= start <= end or start > duration:
        raise DuplexevalError(f"{path}: {where} must be [start, end] inside the audio, got "
                              f"{value!r}")
    return start, min(end, duration)


def _shift_at(t: float) -> Event:
    return Event(EventKind.TURN_SHIFT, 1, t, t)


def _turn_taking(src: _Source) -> tuple[list[Event], dict[str, Any]]:
    found = sorted(p for p in src.folder.glob("*turn_taking.json") if p.is_file())
    user_end = src.user_end
    if found:
        data = read_json(found[0], "FLEXI turn-taking annotation")
        first = data[0] if isinstance(data, list) and data and isinstance(data[0], dict) else {}
        stamp = first.get("timestamp")
        t = _number(stamp[0]) if isinstance(stamp, list) and stamp else None
        if t is None:
            raise DuplexevalError(f"{found[0]}: expected [{{\"timestamp\": [t, ...]}}]")
        user_end = min(t, src.duration)
    return [_shift_at(user_end)], {"user_end": user_end}


def _pause(src: _Source) -> tuple[list[Event], dict[str, Any]]:
    path = src.folder / "pause.json"
    data = _annotation(path, "FLEXI pause annotation")
    stamp = data.get("timestamp") if isinstance(data, dict) else None
    start, end = _span_of(stamp, path, "timestamp", src.duration)
    return ([Event(EventKind.TURN_HOLD, 0, start, end), _shift_at(src.user_end)],
            {"pause": [start, end], "user_end": src.user_end})


def _user_interrupt(src: _Source) -> tuple[list[Event], dict[str, Any]]:
    path = src.folder / "interrupt.json"
    data = _annotation(path, "FLEXI interruption annotation")
    first = data[0] if isinstance(data, list) and data and isinstance(data[0], dict) else {}
    start, end = _span_of(first.get("timestamp"), path, "[0].timestamp", src.duration)
    texts = {name: first[key] for key, name in (("context", "context"),
                                                ("interrupt", "interrupt_text"))
             if isinstance(first.get(key), str)}
    return [Event(EventKind.BARGE_IN, 0, start, end)], {"interrupt": [start, end], **texts}


def _backchannel_time(src: _Source) -> float:
    """FLEXI's rule (``for_backchannel_time``): the first word after a > 1.5 s gap in the
    user's words, else ``metadata.json``'s first ``user_backchannel_times``."""
    spans = sorted(src.spans)
    for prev, cur in itertools.pairwise(spans):
        if cur.start - prev.end > BACKCHANNEL_GAP:
            return cur.start
    path = src.folder / "metadata.json"
    data = _annotation(path, "FLEXI backchannel times (no > 1.5 s gap in the user's speech)")
    times = data.get("user_backchannel_times") if isinstance(data, dict) else None
    t = _number(times[0]) if isinstance(times, list) and times else None
    if t is None or not 0 <= t <= src.duration:
        raise DuplexevalError(f"{path}: user_backchannel_times[0] must be a time inside the "
                              f"audio, got {times!r}")
    return t


def _user_backchannel(src: _Source) -> tuple[list[Event], dict[str, Any]]:
    t = _backchannel_time(src)
    ends = [s.end for s in src.spans if s.start <= t + 1e-6 < s.end or abs(s.start - t) < 1e-6]
    end = ends[0] if ends else min(t + 0.5, src.duration)
    return [Event(EventKind.BC, 0, t, end)], {"backchannel_time": t}


def _model_turn(src: _Source) -> tuple[list[Event], dict[str, Any]]:
    return [_shift_at(src.user_end)], {"user_end": src.user_end}


SCENARIO_EVENTS = {
    "turn_taking": _turn_taking, "pause_handling": _pause, "user_interrupt": _user_interrupt,
    "user_backchannel": _user_backchannel, "model_interrupt": _model_turn,
    "model_backchannel": _model_turn,
}


def _events(src: _Source) -> tuple[list[Event], dict[str, Any]]:
    """The user's derived events and the scenario's, without duplicates; a scenario event
    replaces derived events of the same kind on its channel that overlap it."""
    derived = annotate_spans({0: src.spans}, AnnotationRules())
    added, values = SCENARIO_EVENTS[src.scenario](src)
    kept = [e for e in derived if not any(
        a.kind == e.kind and a.channel == e.channel and e.span.overlaps(a.span) for a in added)]
    if src.scenario == "pause_handling":
        pause = added[0].span
        kept = [e for e in kept if not (e.kind == EventKind.SHORTPAUSE and e.span.overlaps(pause))]
    return sort_events(kept + added), values


# -- writing -------------------------------------------------------------------------------------

def _dialogue(src: _Source, root: Path) -> Dialogue:
    dialogue_id = safe_name(f"flexi_{src.scenario}_{src.folder.name}", "dialogue id")
    events, values = _events(src)
    stereo = np.stack([src.audio, np.zeros_like(src.audio)], axis=1)
    target = audio_path(root, dialogue_id)
    write_audio(target, stereo, src.rate, subtype="FLOAT")
    info = AudioInfo(target, src.rate, len(src.audio), 2)
    flexi = {"scenario": src.scenario, "source": src.folder.name, **values}
    words = tuple(src.words) if src.words is not None else None
    return Dialogue(id=dialogue_id, events=tuple(events), words=words, audio=info,
                    language="en", extra={"flexi": flexi})


def _dialog_folders(folder: Path) -> list[Path]:
    def key(p: Path) -> list[Any]:
        return [int(x) if x.isdigit() else x for x in re.split(r"(\d+)", p.name)]

    return sorted((p for p in folder.iterdir() if p.is_dir() and (p / INPUT_WAV).is_file()),
                  key=key)


def import_flexi(source: Path, out: Path, split: str = "test", scenario: str | None = None,
                 force: bool = False) -> list[Dialogue]:
    """Import FLEXI's data under ``source`` into the dataset folder ``out`` (see the module
    docstring); returns the dialogues written."""
    if (out / f"{split}.jsonl").exists() and not force:
        raise DuplexevalError(f"{out} already holds a dataset; pass --force to overwrite")
    pairs = find_scenarios(Path(source), scenario)
    sources = [_read_source(d, name) for name, folder in pairs for d in _dialog_folders(folder)]
    if not sources:
        raise DuplexevalError(f"{source}: no dialog folder with {INPUT_WAV} found")
    dialogues = [_dialogue(src, out) for src in sources]
    write_dataset(out, split, dialogues, metadata={
        "name": out.resolve().name, "language": "en", "domain": "flexi",
        "source": "FLEXI (Ge et al. 2025, arXiv 2509.22243), imported by duplexeval"})
    return dialogues


def summary(dialogues: list[Dialogue]) -> str:
    """``"N dialogue(s): turn_taking 3, ..."`` for the command line."""
    counts: dict[str, int] = {}
    for d in dialogues:
        name = str(d.extra.get("flexi", {}).get("scenario", "?"))
        counts[name] = counts.get(name, 0) + 1
    return f"{len(dialogues)} dialogue(s): " + json.dumps(counts)[1:-1].replace('"', "")
