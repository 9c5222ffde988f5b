"""Dialogue specs: the text a synthesized dialogue is built from (JSON or YAML, one per file).

A spec names its speakers (one per channel) and lists turns in order.  Positions inside a turn
are given after a number of words (``after_word``: whitespace-separated tokens, 1-based count of
words spoken before the event) or, for languages written without spaces, after a number of
characters (``after_char``).  See ``duplexeval/suites/specs/README.md`` for the format in full.

Times are seconds.  Validation errors name the file and the field (exit code 2).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from duplexeval._fileio import loads_json, name_problem
from duplexeval.data._flexi_record import SCENARIOS
from duplexeval.errors import DatasetInvalid, Problem
from duplexeval.synth._mtr_spec import MtrSpec

__all__ = ["FLEXI_SCENARIOS", "Backchannel", "Background", "DialogueSpec", "FlexiSpec", "MtrSpec",
           "Pause", "Speaker", "Turn", "TurnPosition", "load_spec", "load_specs", "mtr_layout",
           "mtr_problem", "spec_files"]


def _spoken(text: str) -> str:
    if not text.strip():
        raise ValueError("must hold words, not only spaces or line breaks")
    return text


SpokenText = Annotated[str, Field(min_length=1), AfterValidator(_spoken)]
"""Text a voice says: at least one character that is not white space."""

FLEXI_SCENARIOS = SCENARIOS
"""The six FLEXI scenarios, in the paper's order (FLEXI section 2.2)."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class _Position(_Strict):
    after_word: int | None = Field(default=None, ge=1)
    after_char: int | None = Field(default=None, ge=1)

    @model_validator(mode="after")
    def _one_position(self) -> _Position:
        if (self.after_word is None) == (self.after_char is None):
            raise ValueError("give exactly one of after_word and after_char")
        return self


class Pause(_Position):
    """The speaker stops for ``seconds`` after the position, then continues the same turn."""

    seconds: float = Field(gt=0, le=10)


class Backchannel(_Position):
    """The other speaker says ``text`` (a short backchannel) starting after the position."""

    text: SpokenText


class Speaker(_Strict):
    id: str = Field(min_length=1)
    channel: Literal[0, 1]
    voice: str | None = None
    """A voice of the language's engine; None lets the synthesizer pick distinct voices."""


class Turn(_Strict):
    speaker: str
    text: SpokenText
    answer: str | None = None
    """Reference answer to this question (QA suites)."""
    gap: float | None = Field(default=None, ge=-1.0, le=10.0)
    """Silence before the turn (negative: overlap); None samples a natural gap."""
    pause: Pause | None = None
    pauses: tuple[Pause, ...] = ()
    backchannels: tuple[Backchannel, ...] = ()
    interrupted_after_word: int | None = Field(default=None, ge=1)
    interrupted_after_char: int | None = Field(default=None, ge=1)
    """The next turn (the other speaker) starts here, overlapping the rest of this one."""

    def all_pauses(self) -> tuple[Pause, ...]:
        return ((self.pause,) if self.pause else ()) + self.pauses

    def interruption(self) -> _Position | None:
        if self.interrupted_after_word is None and self.interrupted_after_char is None:
            return None
        return _Position(after_word=self.interrupted_after_word,
                         after_char=self.interrupted_after_char)


class Background(_Strict):
    """Speech in the background of one channel (a TV, a passer-by): another voice, quieter,
    not aligned as words and not part of the dialogue's events unless loud enough to be heard
    as speech by an annotator working from audio."""

    channel: Literal[0, 1]
    text: SpokenText
    at_turn: int = Field(default=0, ge=0)
    """Index of the turn whose start the background speech is placed against."""
    offset: float = Field(default=0.0, ge=-30, le=30)
    """Seconds after (negative: before) that turn's start."""
    gain_db: float = Field(default=-20.0, ge=-60, le=0)
    """Level relative to the synthesized voice (dB)."""
    voice: str | None = None
    """A voice of the language's engine; None picks one that neither speaker uses."""


class TurnPosition(_Position):
    """A position inside one turn: ``turn`` (0-based index) and ``after_word``/``after_char``."""

    turn: int = Field(ge=0)


class FlexiSpec(_Strict):
    """The FLEXI scenario of a one-item dialogue (suite ``flexi-en``).

    The synthesizer writes the scenario's annotations into the record's ``flexi`` field (see
    :mod:`duplexeval.synth._flexi_record`); the turn structure each scenario needs is checked here.
    """

    scenario: Literal["turn_taking", "pause_handling", "user_interrupt", "model_interrupt",
                      "user_backchannel", "model_backchannel"]
    hazard: str = ""
    """model_interrupt: the danger a good system should cut in on, in a few words."""
    hazard_kind: Literal["emergency", "false_claim"] | None = None
    """model_interrupt: an emergency the user reports, or a dangerous false claim."""
    recognisable: TurnPosition | None = None
    """model_interrupt: the earliest point where the danger is recognisable (after its key
    word); recorded as the end time of that word."""


_FLEXI_SHAPES: dict[str, tuple[str, ...]] = {
    "turn_taking": ("user", "system"),
    "pause_handling": ("user", "system"),
    "user_interrupt": ("user", "system", "user", "system"),
    "model_interrupt": ("user", "system"),
    "user_backchannel": ("user", "system"),
    "model_backchannel": ("user", "system"),
}
"""The speakers of each scenario's turns, in order."""


def _flexi_problem(spec: DialogueSpec) -> str | None:
    """What is wrong with a FLEXI item's turn structure (``None`` when it fits its scenario):
    the speakers in order, a held pause in the pause-handling query, the system turn that the
    user interrupts or backchannels over, the narrative's backchannels, the emergency cue."""
    flexi = spec.flexi
    assert flexi is not None
    name = flexi.scenario
    roles = tuple(t.speaker for t in spec.turns)
    if roles != _FLEXI_SHAPES[name]:
        return f"flexi {name}: turns by {list(roles)}, expected {list(_FLEXI_SHAPES[name])}"
    first, second = spec.turns[0], spec.turns[1]
    checks = {
        "pause_handling": len(first.all_pauses()) == 1 and first.all_pauses()[0].seconds >= 0.6,
        "user_interrupt": second.interruption() is not None and not first.backchannels,
        "user_backchannel": len(second.backchannels) == 1 and second.interruption() is None,
        "model_backchannel": len(first.backchannels) >= 2 and not first.all_pauses(),
        "model_interrupt": flexi.recognisable is not None and flexi.recognisable.turn == 0
        and flexi.hazard_kind is not None and bool(flexi.hazard),
        "turn_taking": True,
    }
    if not checks[name]:
        return f"flexi {name}: the turns lack what the scenario needs (see the specs README)"
    if name != "model_interrupt" and (flexi.recognisable or flexi.hazard or flexi.hazard_kind):
        return f"flexi {name}: hazard and recognisable belong to model_interrupt only"
    if name in ("turn_taking", "model_interrupt") and (
            first.all_pauses() or first.backchannels or first.interruption()):
        return f"flexi {name}: the user turn has no pause, backchannel or interruption"
    return None


class DialogueSpec(_Strict):
    """One dialogue to synthesize."""

    id: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.\-]+$")
    language: str = Field(min_length=2)
    domain: str = "chat"
    title: str = ""
    speakers: tuple[Speaker, Speaker]
    turns: tuple[Turn, ...] = Field(min_length=1)
    background: tuple[Background, ...] = ()
    flexi: FlexiSpec | None = None
    """The FLEXI scenario of this item (``None``: not a FLEXI item)."""
    mtr: MtrSpec | None = None
    """An MTR-DuplexBench multi-round dialogue: its rounds and their features (suite
    ``mtr-en``; see :mod:`duplexeval.synth._mtr_spec`)."""

    @field_validator("id")
    @classmethod
    def _id_is_a_file_name(cls, value: str) -> str:
        problem = name_problem(value)  # the id names the dialogue's audio and alignment files
        if problem is not None:
            raise ValueError(f"{value!r} cannot be used in a file name: {problem}")
        return value

    @model_validator(mode="after")
    def _consistent(self) -> DialogueSpec:
        for i, b in enumerate(self.background):
            if b.at_turn >= len(self.turns):
                raise ValueError(f"background[{i}]: at_turn {b.at_turn} but the dialogue has "
                                 f"{len(self.turns)} turns")
        ids = [s.id for s in self.speakers]
        if len(set(ids)) != 2 or {s.channel for s in self.speakers} != {0, 1}:
            raise ValueError("speakers: two distinct ids on channels 0 and 1")
        for i, turn in enumerate(self.turns):
            where = f"turns[{i}]"
            if turn.speaker not in ids:
                raise ValueError(f"{where}: unknown speaker {turn.speaker!r}")
            if turn.interruption() is not None:
                nxt = self.turns[i + 1] if i + 1 < len(self.turns) else None
                if nxt is None or nxt.speaker == turn.speaker:
                    raise ValueError(f"{where}: interrupted, but the next turn is not by the "
                                     "other speaker")
            words = len(turn.text.split())
            chars = len(turn.text)
            positions: list[_Position] = [*turn.all_pauses(), *turn.backchannels]
            if turn.interruption() is not None:
                positions.append(turn.interruption())  # type: ignore[arg-type]
            if self.flexi is not None and self.flexi.recognisable is not None \
                    and self.flexi.recognisable.turn == i:
                positions.append(self.flexi.recognisable)
            for p in positions:
                if p.after_word is not None and p.after_word >= words:
                    raise ValueError(f"{where}: after_word {p.after_word} must be below the "
                                     f"turn's {words} words")
                if p.after_char is not None and p.after_char >= chars:
                    raise ValueError(f"{where}: after_char {p.after_char} must be below the "
                                     f"turn's {chars} characters")
        if self.flexi is not None:
            problem = _flexi_problem(self)
            if problem is not None:
                raise ValueError(problem)
        problem = mtr_problem(self) if self.mtr is not None else None
        if problem is not None:
            raise ValueError(problem)
        return self

    def speaker(self, speaker_id: str) -> Speaker:
        return next(s for s in self.speakers if s.id == speaker_id)


def mtr_layout(spec: DialogueSpec) -> list[tuple[int | None, int, int]]:
    """An MTR spec's rounds (:mod:`duplexeval.synth._mtr_spec`): per round, the indices of (the
    turn before the user's or ``None``, the user turn, the reply), from the layout that module
    describes (its shape is checked by :func:`mtr_problem`)."""
    user = next(s.id for s in spec.speakers if s.channel == 0)
    first = 0 if spec.turns[0].speaker == user else 1
    assert spec.mtr is not None
    return [(first + 2 * k - 1 if first + 2 * k > 0 else None, first + 2 * k, first + 2 * k + 1)
            for k in range(len(spec.mtr.rounds))]


def _present(spec: DialogueSpec, prev: Turn | None, user: Turn, reply_index: int) -> set[str]:
    reply = spec.turns[reply_index]
    found = set()
    if prev is not None and prev.interruption() is not None:
        found.add("interruption")
    if user.all_pauses():
        found.add("pause")
    if reply.backchannels:
        found.add("backchannel")
    if any(b.at_turn == reply_index and b.channel == 0 for b in spec.background):
        found.add("background")
    return found


def mtr_problem(spec: DialogueSpec) -> str | None:
    """What is wrong with the layout of an MTR dialogue (``None``: nothing)."""
    mtr = spec.mtr
    assert mtr is not None
    user = next(s.id for s in spec.speakers if s.channel == 0)
    first = 0 if spec.turns[0].speaker == user else 1
    if len(spec.turns) != first + 2 * len(mtr.rounds):
        return (f"mtr: {len(mtr.rounds)} rounds need {first + 2 * len(mtr.rounds)} turns "
                f"(optional opener, then user and reply per round), got {len(spec.turns)}")
    placed = {i for _, _, i in mtr_layout(spec)}
    if any(b.channel != 0 or b.at_turn not in placed for b in spec.background):
        return "mtr: background speech goes on the user channel, against a reply"
    for k, ((p, u, r), declared) in enumerate(zip(mtr_layout(spec), mtr.rounds, strict=True),
                                              start=1):
        user_turn, reply = spec.turns[u], spec.turns[r]
        if user_turn.speaker != user or reply.speaker == user:
            return f"mtr round {k}: turns {u} and {r} must be by the user and the system"
        if user_turn.backchannels or user_turn.interruption() is not None:
            return f"mtr round {k}: the user turn is neither backchannelled nor interrupted"
        present = _present(spec, spec.turns[p] if p is not None else None, user_turn, r)
        want = set(declared.features) - {"smooth"}
        if want != present or ("smooth" in declared.features) != (not present):
            return (f"mtr round {k}: declares {sorted(declared.features)} but the turns have "
                    f"{sorted(present) or ['smooth']}")
        if mtr.group == "instruction_following" and not (declared.item and user_turn.answer):
            return f"mtr round {k}: an instruction-following round needs an item and an answer"
        if mtr.group == "safety" and not (declared.item and declared.category):
            return f"mtr round {k}: a safety round needs an item and a category"
    return None


def _read(path: Path) -> Any:
    text = path.read_text(encoding="utf-8")
    if path.suffix.lower() in (".yaml", ".yml"):
        return yaml.safe_load(text)
    return loads_json(text)


def load_spec(path: Path) -> DialogueSpec:
    """Read and validate one spec file; problems raise :class:`DatasetInvalid` (file and
    field per line)."""
    try:
        return DialogueSpec.model_validate(_read(path))
    except FileNotFoundError:
        raise DatasetInvalid([Problem(path, None, "no such file")]) from None
    except (json.JSONDecodeError, yaml.YAMLError, UnicodeDecodeError) as exc:
        line = getattr(exc, "lineno", None)
        mark = getattr(exc, "problem_mark", None)
        if mark is not None:
            line = mark.line + 1
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise DatasetInvalid([Problem(path, line, f"cannot parse: {first}")]) from None
    except RecursionError:
        raise DatasetInvalid([Problem(path, None, "nested too deeply to read")]) from None
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            loc = ".".join(str(x) for x in err["loc"])
            problems.append(Problem(path, None, f"{loc}: {err['msg']}" if loc else err["msg"]))
        raise DatasetInvalid(problems) from None


def spec_files(folder: Path) -> list[Path]:
    """The dialogue spec files of a folder, sorted by name: ``*.json``, ``*.yaml``, ``*.yml``
    (any case), ``suite.json`` left out."""
    return sorted(p for p in folder.iterdir() if p.suffix.lower() in (".json", ".yaml", ".yml")
                  and p.name != "suite.json")


def load_specs(source: Path) -> list[DialogueSpec]:
    """Specs from a file or a folder (``*.json``, ``*.yaml``, ``*.yml``, sorted by name);
    ids must be unique."""
    files = [source] if source.is_file() else spec_files(source) if source.is_dir() else []
    if not files:
        raise DatasetInvalid([Problem(source, None, "no dialogue spec files (*.json, *.yaml)")])
    specs: list[DialogueSpec] = []
    problems: list[Problem] = []
    seen: dict[str, str] = {}
    for path in files:
        try:
            spec = load_spec(path)
        except DatasetInvalid as exc:
            problems += exc.problems
            continue
        if spec.id in seen:
            problems.append(Problem(path, None, f"id {spec.id!r} already used by {seen[spec.id]}"))
        seen[spec.id] = path.name
        specs.append(spec)
    if problems:
        raise DatasetInvalid(problems)
    return specs
