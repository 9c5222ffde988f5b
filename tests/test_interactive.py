"""The ``interactive`` protocol: a reactive simulated user against ``scripted``.

Roles: user channel 0, system channel 1; times in seconds; ``=`` speech, ``.`` silence.
The scripted system speaks 2 s (``duration``) ``delay`` s after the user falls silent.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from duplexeval.data import Dialogue
from duplexeval.errors import DuplexevalError
from duplexeval.events import Event, EventKind
from duplexeval.runs._driver import DialogueAudio
from duplexeval.runs._interactive import (
    output_digest,
    read_log,
    replay_log,
    run_interactive,
    write_interactive,
)
from duplexeval.runs._simulated_user import UserPolicy
from duplexeval.systems.builtin._scripted import ScriptedSystem

RATE = 24000
SPF = 480 / RATE  # scripted's default frame: 20 ms


def _dialogue(turns: list[tuple[str, int, float, float]], seconds: float = 10.0,
              ) -> tuple[Dialogue, DialogueAudio]:
    """Events as (KIND, channel, start, end); the user channel holds noise in its TURNs and
    BCs."""
    gen = np.random.default_rng(0)
    x = np.zeros((round(seconds * RATE), 2), np.float32)
    for kind, ch, a, b in turns:
        if ch == 0 and kind in ("TURN", "BC"):
            x[round(a * RATE):round(b * RATE), 0] = 0.1 * gen.standard_normal(
                round(b * RATE) - round(a * RATE))
    events = tuple(Event(EventKind(k), ch, a, b) for k, ch, a, b in turns)
    return Dialogue(id="d1", events=events), DialogueAudio(x, RATE)


TWO_TURNS = [("TURN", 0, 0.5, 2.0), ("TURN", 1, 2.4, 4.4), ("TURN", 0, 5.0, 6.5)]
POLICY = UserPolicy(gaps=(0.4,), patience=3.0)


def _starts(log: list[dict[str, object]]) -> dict[object, object]:
    return {r["item"]: r["frame"] for r in log if r.get("action") == "start"}


def test_slow_system_makes_user_wait_and_faster_gets_shorter_dialogue() -> None:
    """The second user turn starts a 0.4 s gap after the system's heard offset::

        fast (delay 0.3)  user |==1==|.......................|==2==|
                          sys          .3|======2 s=====|-25f-.4|
        slow (delay 1.5)  user |==1==|...................................|==2==|
                          sys          ..1.5..|======2 s=====|-25f-.4|

    the slow system's user waits 1.2 s (60 frames) longer, and the system answers turn 2
    1.2 s later too, so its realised dialogue is 2.4 s longer.
    """
    d, audio = _dialogue(TWO_TURNS)
    fast = run_interactive(ScriptedSystem(delay="0.3"), d, audio, 0, POLICY, 0)
    slow = run_interactive(ScriptedSystem(delay="1.5"), d, audio, 0, POLICY, 0)
    f, s = _starts(fast.log), _starts(slow.log)
    assert f[0] == s[0] == round(0.5 / SPF) - 1  # the first turn at its reference start
    assert isinstance(f[1], int) and isinstance(s[1], int)
    assert s[1] - f[1] == round(1.2 / SPF)
    assert abs((slow.duration - fast.duration) - 2.4) < 1e-6
    # gap: started 0.4 s after the frame the offset was declared
    start = next(r for r in fast.log if r.get("action") == "start" and r["item"] == 1)
    heard = start["heard"]
    assert isinstance(heard, dict)
    assert f[1] + 1 == heard["offset_frame"] + round(0.4 / SPF)
    # the realised timeline re-annotated: two user turns, each answered
    assert [e.kind for e in fast.events if e.kind is EventKind.TURN_SHIFT]
    assert len(fast.user_spans) == 2 and len(fast.system_spans) == 2


def test_silent_system_triggers_patience() -> None:
    """A system that never answers: the user's next turn comes ``patience`` after its last::

        user |==1==|.........3 s.........|==2==|
        sys   (silent)
    """
    d, audio = _dialogue(TWO_TURNS)
    run = run_interactive(ScriptedSystem(delay="1000"), d, audio, 0, POLICY, 0)
    starts = _starts(run.log)
    first_end = round(2.0 / SPF)  # frame at which the first turn ran out
    assert isinstance(starts[1], int)
    assert starts[1] + 1 == first_end - 1 + round(3.0 / SPF) or \
        abs((starts[1] + 1) * SPF - (run.user_spans[0].end + 3.0)) <= SPF + 1e-9
    why = next(r["why"] for r in run.log if r.get("action") == "start" and r["item"] == 1)
    assert isinstance(why, str) and why.startswith("patience")
    assert run.system_spans == []


BARGE = [("TURN", 0, 0.5, 2.0), ("TURN", 1, 2.4, 8.0), ("TURN", 0, 4.0, 5.5),
         ("BARGE_IN", 0, 4.0, 4.5)]


def test_talking_system_is_barged_in_at_scripted_point() -> None:
    """The user barges in ``barge_in_after`` (1 s) after the system's heard onset::

        user |==1==|.................|====barge====|
        sys          .3|===============6 s====================|   (stop_delay 100: ignores it)
                         ^onset  +1 s^
    """
    d, audio = _dialogue(BARGE)
    run = run_interactive(ScriptedSystem(delay="0.3", duration="6", stop_delay="100"), d,
                          audio, 0, POLICY, 0)
    start = next(r for r in run.log if r.get("action") == "start" and r["item"] == 1)
    heard = start["heard"]
    assert isinstance(heard, dict) and heard["system_speaking"]
    assert start["frame"] == heard["onset_frame"] + round(1.0 / SPF)
    # the system talked over the whole barge-in: overlap of the realised spans
    barge = run.user_spans[1]
    assert any(s.start < barge.start and s.end > barge.end for s in run.system_spans)


def test_system_yielding_to_barge_in_lets_user_go_on() -> None:
    """A system that stops 0.2 s after the user starts: the user's turn plays out whole::

        user |==1==|.................|====barge 1.5 s====|
        sys          .3|=====|.2^stops
    """
    d, audio = _dialogue(BARGE)
    run = run_interactive(ScriptedSystem(delay="0.3", duration="6", stop_delay="0.2"), d,
                          audio, 0, POLICY, 0)
    barge = run.user_spans[1]
    assert abs(barge.duration - 1.5) < SPF + 1e-9
    sys_turn = run.system_spans[0]
    assert barge.start < sys_turn.end < barge.start + 0.2 + 2 * SPF
    # re-annotated: the user takes the floor with an overlap of about 0.2 s (< 0.4 s, so an
    # overlapping TURN_SHIFT by the annotation rules, not a BARGE_IN)
    shifts = [e for e in run.events if e.kind is EventKind.TURN_SHIFT and e.channel == 0]
    assert any(e.start > e.end and abs(e.end - barge.start) < 1e-6 for e in shifts)


def test_user_yields_when_system_barges_in_if_dialogue_says_so() -> None:
    """The reference has a system BARGE_IN inside the user's turn, so the user yields::

        user |==1==|.32|=====2 (3 s)....       cut 0.2 s after the system's heard onset
        sys          .3|=======2 s=======|      starts 0.02 s before the user (patience 0.32),
                         ^onset heard 3 frames later, user still talking: it yields
    """
    turns = [("TURN", 0, 0.5, 1.0), ("TURN", 0, 1.2, 4.2), ("TURN", 1, 1.6, 3.6),
             ("BARGE_IN", 1, 1.6, 2.0)]
    d, audio = _dialogue(turns)
    policy = UserPolicy(gaps=(0.0,), patience=0.32)
    run = run_interactive(ScriptedSystem(delay="0.3", duration="2", stop_delay="100"), d,
                          audio, 0, policy, 0)
    yields = [r for r in run.log if r.get("action") == "yield"]
    assert len(yields) == 1
    heard = yields[0]["heard"]
    assert isinstance(heard, dict)
    assert yields[0]["frame"] == heard["onset_frame"] + round(0.2 / SPF)
    assert run.user_spans[1].duration < 3.0 - 0.5


def test_reruns_bit_identical_and_replay_reproduces() -> None:
    """Same dialogue, system and seed: identical audio and log; the log alone replays the
    system's output; a different system diverges at a logged decision."""
    d, audio = _dialogue(TWO_TURNS)
    policy = UserPolicy(gaps=(0.2, 0.5, 0.9), patience=3.0)
    system = ScriptedSystem(delay="0.3", jitter="0.1")
    a = run_interactive(system, d, audio, 0, policy, 7)
    b = run_interactive(ScriptedSystem(delay="0.3", jitter="0.1"), d, audio, 0, policy, 7)
    assert a.user.tobytes() == b.user.tobytes() and a.system.tobytes() == b.system.tobytes()
    assert a.log_jsonl() == b.log_jsonl()
    log = [json.loads(line) for line in a.log_jsonl().splitlines()]
    out, diverged = replay_log(ScriptedSystem(delay="0.3", jitter="0.1"), d, audio, log)
    assert diverged is None
    assert out.tobytes() == a.system.tobytes()
    _, other = replay_log(ScriptedSystem(delay="1.0"), d, audio, log)
    assert other is not None


def test_run_directory_files_replay_from_the_log_file(tmp_path: Path) -> None:
    """The realised wav, timeline and log are written; the log file alone replays the run;
    a bad log line is one error naming the file and line."""
    d, audio = _dialogue(TWO_TURNS)
    run = run_interactive(ScriptedSystem(delay="0.3"), d, audio, 0, POLICY, 3)
    folder = write_interactive(tmp_path, run, "d1", 0)
    timeline = json.loads((folder / "d1_ch0.timeline.json").read_text())
    assert timeline["user"] == [[s.start, s.end] for s in run.user_spans]
    assert {e["role"] for e in timeline["events"]} == {"user", "system"}
    x, rate = sf.read(folder / "d1_ch0.wav")
    assert rate == RATE and x.shape == (len(run.user), 2)
    log = read_log(folder / "d1_ch0.decisions.jsonl")
    _, diverged = replay_log(ScriptedSystem(delay="0.3"), d, audio, log)
    assert diverged is None
    bad = tmp_path / "bad.jsonl"
    bad.write_text((folder / "d1_ch0.decisions.jsonl").read_text() + "{oops\n")
    with pytest.raises(DuplexevalError, match=r"bad\.jsonl:\d+: not valid JSON"):
        read_log(bad)


def test_replay_cli_reproduces_and_reports_divergence(
        sample_voiced: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``duplexeval replay RUN --dataset D``: exit 0 and "reproduced" for the system the log
    names; a log edited to name a slower system: exit 1, "diverges at frame"; no logs: exit 2,
    one line."""
    from duplexeval.cli import main
    from duplexeval.data import load_dataset
    from duplexeval.runs._units import load_dialogue_audio

    dataset, _ = load_dataset(sample_voiced)
    dialogue = dataset.dialogues[0]
    user = dataset.user_channels[0]
    run = run_interactive(ScriptedSystem(delay="0.3"), dialogue, load_dialogue_audio(dialogue),
                          user, POLICY, 0)
    folder = write_interactive(tmp_path / "run", run, dialogue.id, user)
    assert main(["replay", str(tmp_path / "run"), "--dataset", str(sample_voiced)]) == 0
    assert "reproduced" in (out := capsys.readouterr().out) and "bit-identical" in out
    log_path = next(folder.glob("*.decisions.jsonl"))
    lines = log_path.read_text().splitlines()
    head = json.loads(lines[0])
    assert head["system_sha256"] == output_digest([run.system])
    # the same decisions over another output: the recorded digest tells them apart
    log_path.write_text("\n".join([json.dumps({**head, "system_sha256": "0" * 64}),
                                   *lines[1:]]) + "\n")
    assert main(["replay", str(tmp_path / "run"), "--dataset", str(sample_voiced)]) == 1
    assert "not bit-identical" in capsys.readouterr().out
    head["system_args"] = {"delay": "1.2"}
    log_path.write_text("\n".join([json.dumps(head), *lines[1:]]) + "\n")
    assert main(["replay", str(tmp_path / "run"), "--dataset", str(sample_voiced)]) == 1
    assert "diverges at frame" in capsys.readouterr().out
    assert main(["replay", str(tmp_path), "--dataset", str(sample_voiced)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "not an interactive run" in err


def test_run_protocol_interactive_then_replay(sample_voiced: Path, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """``run --protocol interactive`` writes one log per dialogue and user channel (gaps from
    the suite's reference gaps); rerun bit-identical; ``replay`` reproduces every one."""
    from duplexeval.cli import main

    def go(out: Path) -> int:
        return main(["run", "--system", "scripted", "--dataset", str(sample_voiced),
                     "--protocol", "interactive", "--seed", "5", "--out", str(out)])

    assert go(tmp_path / "a") == 0 and go(tmp_path / "b") == 0
    logs = sorted((tmp_path / "a" / "interactive").glob("*.decisions.jsonl"))
    assert len(logs) >= 2
    for path in logs:
        twin = tmp_path / "b" / "interactive" / path.name
        assert path.read_bytes() == twin.read_bytes()
        wav = path.with_name(path.name.replace(".decisions.jsonl", ".wav"))
        assert wav.read_bytes() == twin.with_name(wav.name).read_bytes()
    capsys.readouterr()
    assert main(["replay", str(tmp_path / "a"), "--dataset", str(sample_voiced)]) == 0
    assert capsys.readouterr().out.count("reproduced") == len(logs)
    # the same --out with another seed: refused, one line, nothing rewritten
    before = logs[0].read_bytes()
    assert main(["run", "--system", "scripted", "--dataset", str(sample_voiced),
                 "--protocol", "interactive", "--seed", "6", "--out", str(tmp_path / "a")]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "changed: seed" in err
    assert logs[0].read_bytes() == before


def test_backchannel_falls_inside_the_system_turn() -> None:
    """The user's backchannel comes ``bc_after`` (1 s) into the system's heard turn, which
    goes on (``ignore_shorter`` 0.5 s: the system treats 0.3 s as a backchannel)::

        user |==1==|..........|bc|...............|==2==|
        sys          .3|=onset=+1 s=====4 s=======|
    """
    turns = [("TURN", 0, 0.5, 2.0), ("TURN", 1, 2.4, 6.4), ("BC", 0, 3.5, 3.8),
             ("TURN", 0, 7.0, 8.0)]
    d, audio = _dialogue(turns)
    run = run_interactive(ScriptedSystem(delay="0.3", duration="4", ignore_shorter="0.5"), d,
                          audio, 0, POLICY, 0)
    start = next(r for r in run.log if r.get("action") == "start" and r["item"] == 1)
    heard = start["heard"]
    assert isinstance(heard, dict) and heard["system_speaking"]
    assert start["frame"] == heard["onset_frame"] + round(1.0 / SPF)
    bc = run.user_spans[1]
    assert abs(bc.duration - 0.3) < SPF + 1e-9
    turn = run.system_spans[0]
    assert turn.start < bc.start and bc.end < turn.end and turn.duration > 3.5
    assert any(e.kind is EventKind.BC and e.channel == 0 for e in run.events)


def test_an_executor_other_than_local_is_refused_under_interactive(
        sample_voiced: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An interactive run is one session per dialogue and user channel in this process, so
    ``--executor processes`` or ``dask`` would be ignored: it is refused in one line instead,
    before anything is written."""
    from duplexeval.cli import main

    for executor in ("processes", "dask"):
        out = tmp_path / executor
        assert main(["run", "--system", "scripted", "--dataset", str(sample_voiced),
                     "--protocol", "interactive", "--executor", executor,
                     "--out", str(out)]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and f"--executor {executor} does not apply" in err[0]
        assert not out.exists()
