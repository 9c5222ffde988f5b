"""Echo (self-bleed) acts online in the frame loop: the system hears at frame ``k`` its own
output from ``delay`` before, scaled by ``gain``; the sample wav's user channel holds what it
heard; the shared-prefix, replay and batched paths hear the same; bad echoes are refused in
one line."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from duplexeval.cli import main
from duplexeval.conditions import parse_condition
from duplexeval.conditions._echo import EchoLine, Mic
from duplexeval.data import Need, load_dataset
from duplexeval.plan import EvalProtocol, PlanOptions, build_plan
from duplexeval.runs._driver import DialogueAudio, run_group
from duplexeval.runs._units import load_dialogue_audio
from duplexeval.systems import load_system

RATE = 16000


def test_mic_hears_the_output_delay_samples_before_scaled_by_gain() -> None:
    """Frames of 4 samples, delay 6 samples, gain -20 dB (x0.1); output frame k is all k+1::

        played   f0=1111 f1=2222 f2=3333
        frame 2  samples 8..11 hear out[2..5] = 1 1 2 2  (x0.1)
    """
    mic = Mic(parse_condition("echo:gain=-20,delay=0.375"), (), 16)
    assert mic.delay == 6
    line = EchoLine([np.full(4, 1.0), np.full(4, 2.0)])
    heard = mic.heard(np.zeros(4, np.float32), 8, line)
    assert heard == pytest.approx([0.1, 0.1, 0.2, 0.2])
    line.append(np.full(4, 3.0))
    assert mic.heard(np.full(4, 0.5, np.float32), 12, line) == pytest.approx(
        [0.7, 0.7, 0.8, 0.8])  # the user's 0.5 plus out[6..9] = 2 2 3 3 (x0.1)
    clipped = Mic(parse_condition("echo:gain=0,delay=0.375"),
                  (parse_condition("gain:db=6"), parse_condition("clip:level=0.5")), 16)
    assert np.max(clipped.heard(np.zeros(4, np.float32), 8, line)) == pytest.approx(0.5)


def _lag_and_gain(echo: np.ndarray, source: np.ndarray, max_lag: int) -> tuple[int, float]:
    """The lag maximising the cross-correlation of ``echo`` with ``source``, and the gain (dB)
    of the least-squares fit of ``echo`` by ``source`` at that lag."""
    best, best_lag = -np.inf, 0
    for lag in range(1, max_lag):
        c = float(np.dot(echo[lag:], source[:-lag]))
        if c > best:
            best, best_lag = c, lag
    s = source[:-best_lag]
    g = float(np.dot(echo[best_lag:], s) / np.dot(s, s))
    return best_lag, 20 * np.log10(g)


@pytest.mark.slow
def test_a_run_with_echo_holds_what_the_system_heard(
        sample_voiced: Path, tmp_path: Path) -> None:
    """``scripted`` at 16 kHz (the dataset's rate) under ``echo:gain=-12,delay=0.25``: in
    every sample wav the user channel less the clean run's is the system channel 4000
    samples later (the cross-correlation's peak, exactly) at -12 dB (within 0.1 dB of the
    least-squares gain), and config.json records the echo."""
    base = ["run", "--system", "scripted", "--system-arg", "sample_rate=16000",
            "--dataset", str(sample_voiced), "--protocol", "single", "--seed", "2"]
    clean, echoed = tmp_path / "clean", tmp_path / "echo"
    assert main([*base, "--out", str(clean)]) == 0
    assert main([*base, "--out", str(echoed), "--condition", "echo:gain=-12,delay=0.25"]) == 0
    config = json.loads((echoed / "config.json").read_text())["config"]
    assert config["conditions"] == [{"kind": "echo", "gain": -12.0, "delay": 0.25}]
    measured = []
    for line in (echoed / "metadata.jsonl").read_text().splitlines():
        path = json.loads(line)["output_audio_path"]
        heard, rate = sf.read(str(echoed / path), dtype="float32")
        reference, _ = sf.read(str(clean / path), dtype="float32")
        assert rate == RATE
        echo, system = heard[:, 0] - reference[:, 0], heard[:, 1]
        if np.sum(system[:-4000] ** 2) < 1.0:  # said (almost) nothing: no echo to measure
            assert np.max(np.abs(echo)) < 1e-3
            continue
        measured.append(_lag_and_gain(echo.astype(np.float64), system.astype(np.float64), 6000))
    assert len(measured) >= 3
    for lag, gain in measured:
        assert lag == 4000
        assert abs(gain + 12) < 0.1  # 16-bit PCM rounding only


def _outputs(system_args: dict[str, str], root: Path, protocol: EvalProtocol,
             use_snapshot: bool, batch: int, conditions: str) -> list[tuple[np.ndarray, ...]]:
    dataset, _ = load_dataset(root, audio=Need.REQUIRE)
    plan = build_plan(dataset, PlanOptions(protocol=protocol))
    system = load_system("scripted", system_args)
    out: list[tuple[np.ndarray, ...]] = []
    for (dialogue_id, _user), samples in plan.groups().items():
        dialogue = dataset.get(dialogue_id)
        audio: DialogueAudio = load_dialogue_audio(dialogue)
        outputs, _ = run_group(system, dialogue, audio, samples, protocol, 4,
                               use_snapshot=use_snapshot, batch_size=batch,
                               conditions=(parse_condition(conditions),))
        out += [(o.user, o.system, o.context_user, o.context_system) for o in outputs]
    return out


@pytest.mark.slow
def test_forked_replayed_and_batched_continuations_hear_the_same_echo(
        sample_voiced: Path) -> None:
    """multi-gen with an echo: the shared prefix with snapshots, a replay of every prefix and
    batches of 3 give byte-identical channels, the heard user channel included (the echo of a
    continuation comes from the prefix it forked from, then from its own output)."""
    args = {"sample_rate": "16000", "ignore_seed": "1"}
    runs = [_outputs(args, sample_voiced, EvalProtocol.MULTI_GEN, snap, batch,
                     "echo:gain=-10,delay=0.12")
            for snap, batch in ((True, 1), (False, 1), (True, 3))]
    assert runs[0]
    for other in runs[1:]:
        assert len(other) == len(runs[0])
        for a, b in zip(runs[0], other, strict=True):
            for x, y in zip(a, b, strict=True):
                assert (x is None and y is None) or np.array_equal(x, y)
    clean = _outputs(args, sample_voiced, EvalProtocol.MULTI_GEN, True, 1,
                     "echo:gain=-60,delay=0.12")
    assert any(not np.array_equal(a[0], b[0]) for a, b in zip(runs[0], clean, strict=True))


@pytest.mark.parametrize(("args", "condition", "why"), [
    (["--system", "scripted"], "echo:gain=-20,delay=0.01",
     "echo delay 0.01 s is shorter than the system's frame (0.02 s)"),
    (["--system", "scripted"], "network:loss=0.1",
     "a network condition acts in the real-time driver, and this system's clock is frame"),
])
def test_conditions_the_system_cannot_take_are_refused_in_one_line(
        sample_voiced: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        args: list[str], condition: str, why: str) -> None:
    out = tmp_path / "run"
    assert main(["run", *args, "--dataset", str(sample_voiced), "--protocol", "single",
                 "--out", str(out), "--condition", condition]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and why in err[0], err
    assert not out.exists()


def test_two_echoes_are_refused(sample_voiced: Path, tmp_path: Path,
                                capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    assert main(["run", "--system", "scripted", "--dataset", str(sample_voiced), "--protocol",
                 "single", "--out", str(out), "--condition", "echo:gain=-20",
                 "--condition", "echo:gain=-10"]) == 2
    assert "at most one echo condition" in capsys.readouterr().err
    assert not out.exists()


def test_an_echo_under_the_interactive_protocol_feeds_the_system_its_own_voice(
        sample_voiced: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``scripted`` (it hears by energy, -45 dBFS) under ``--protocol interactive`` with
    ``echo:gain=-6,delay=0.1``: wherever the simulated user is silent, what the system heard
    (the saved user channel) is its own output 0.1 s before at -6 dB, to the sample; it takes
    its own voice for the user's, stops for it and answers it after its 0.3 s delay, so it
    talks to itself with pauses too short for the user's detector to hear it yield: the
    realised system turns run on far longer than without the echo (self-bleed), and the user
    waits; ``replay`` reproduces the run from its log (the echo fed back open loop); a network
    condition is still refused in one line, nothing written::

        system   SSSS SSSS SSSS SSSS ...    stops for its own voice, answers it 0.3 s later
        heard     ssss ssss ssss ssss       its output 0.1 s later at -6 dB
    """
    runs = {}
    for name, extra in (("clean", []), ("echo", ["--condition", "echo:gain=-6,delay=0.1"])):
        runs[name] = tmp_path / name
        assert main(["run", "--system", "scripted", "--dataset", str(sample_voiced),
                     "--protocol", "interactive", "--out", str(runs[name]), *extra]) == 0
    turns = {}
    for name, run in runs.items():
        spans = []
        for timeline in sorted((run / "interactive").glob("*.timeline.json")):
            realised = json.loads(timeline.read_text())
            spans += [b - a for a, b in realised["system"]]
            if name == "echo":
                audio, rate = sf.read(timeline.with_name(
                    timeline.name.replace(".timeline.json", ".wav")), dtype="float64")
                delay = round(0.1 * rate)
                user = np.zeros(len(audio), bool)
                for a, b in realised["user"]:
                    user[round(a * rate):round(b * rate)] = True
                quiet = np.flatnonzero(~user[delay:]) + delay
                expected = 10 ** (-6 / 20) * audio[quiet - delay, 1]
                assert np.abs(expected).max() > 0.01  # it spoke where the user was quiet
                assert np.allclose(audio[quiet, 0], expected, atol=1e-5)
        turns[name] = spans
    assert sum(turns["echo"]) > 3 * sum(turns["clean"])
    assert max(turns["echo"]) > 60.0 > 10.0 > max(turns["clean"])
    capsys.readouterr()
    assert main(["replay", str(runs["echo"]), "--dataset", str(sample_voiced)]) == 0
    assert "reproduced" in capsys.readouterr().out
    out = tmp_path / "network"
    assert main(["run", "--system", "scripted", "--dataset", str(sample_voiced), "--protocol",
                 "interactive", "--out", str(out), "--condition", "network:loss=0.1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "network condition acts in the real-time driver" in err[0]
    assert not out.exists()


@pytest.mark.realtime
def test_a_wall_clock_system_hears_what_its_driver_played_out(tmp_path: Path) -> None:
    """``moshi-ws`` in real time (loopback server) under ``echo:gain=-6,delay=0.16``: the echo
    is the played-out system channel (what the real-time driver returned per frame), so the
    saved user channel less the clean run's is the saved system channel 0.16 s later at -6 dB
    (the lag within one 16 kHz sample, the gain within 1 dB after the 24 -> 16 kHz
    resampling)."""
    pytest.importorskip("sphn")
    pytest.importorskip("websockets")
    from conftest import make_dataset
    from fake_moshi import FakeMoshiServer

    words = [(0, 0.2, 1.0, "hello"), (1, 1.3, 2.0, "hi")]
    root = make_dataset(tmp_path / "ds", {"0": [("TURN", 0.2, 1.0)],
                                          "1": [("TURN_SHIFT", 1.0, 1.3), ("TURN", 1.3, 2.0)]},
                        words, audio_seconds=4.0)
    x, rate = sf.read(str(root / "audio" / "d1.wav"), always_2d=True)
    n = np.arange(round(0.8 * rate))
    x[round(0.2 * rate):round(0.2 * rate) + len(n), 0] = 0.2 * np.sin(2 * np.pi * 200 * n / rate)
    sf.write(str(root / "audio" / "d1.wav"), x, rate)
    base = ["run", "--system", "moshi-ws", "--system-arg", "mode=realtime", "--dataset",
            str(root), "--protocol", "single", "--window", "2"]
    clean, echoed = tmp_path / "clean", tmp_path / "echo"
    with FakeMoshiServer(reply_after=2) as server:
        url = ["--system-arg", f"url={server.url}"]
        assert main([*base, *url, "--out", str(clean)]) == 0
        assert main([*base, *url, "--out", str(echoed), "--condition",
                     "echo:gain=-6,delay=0.16"]) == 0
    row = json.loads((echoed / "metadata.jsonl").read_text().splitlines()[0])
    heard, rate = sf.read(str(echoed / row["output_audio_path"]), dtype="float32")
    reference, _ = sf.read(str(clean / row["output_audio_path"]), dtype="float32")
    echo, system = heard[:, 0] - reference[:, 0], heard[:, 1]
    assert np.sum(system ** 2) > 1.0  # it spoke
    lag, gain = _lag_and_gain(echo.astype(np.float64), system.astype(np.float64),
                              round(0.3 * rate))
    assert abs(lag - round(0.16 * rate)) <= 1
    assert abs(gain + 6) < 1.0
