"""Acoustic conditions: each measured on a synthetic signal, parsing refused in one line, and a
run whose sample wavs hold the conditioned user input, recorded and refused on resume."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from duplexeval.cli import main
from duplexeval.conditions import apply_conditions, parse_condition
from duplexeval.conditions._apply import colored_noise, ordered
from duplexeval.errors import DuplexevalError


def _tone(n: int = 48000, rate: int = 16000) -> np.ndarray:
    return (0.3 * np.sin(2 * np.pi * 440 * np.arange(n) / rate)).astype(np.float32)


@pytest.mark.parametrize("color", ["white", "pink", "brown"])
@pytest.mark.parametrize("snr", [30.0, 10.0, 0.0, -5.0])
def test_noise_is_added_at_the_asked_snr(color: str, snr: float) -> None:
    """SNR measured as 10*log10(P(clean) / P(conditioned - clean)) is within 0.5 dB."""
    x = _tone()
    y = apply_conditions(x, [parse_condition(f"noise:snr={snr:g},color={color}")], seed=1)
    noise = y.astype(np.float64) - x
    measured = 10 * np.log10(np.mean(x.astype(np.float64) ** 2) / np.mean(noise ** 2))
    assert abs(measured - snr) < 0.5


@pytest.mark.parametrize(("color", "slope"), [("white", 0.0), ("pink", -1.0), ("brown", -2.0)])
def test_noise_colour_has_its_spectral_slope(color: str, slope: float) -> None:
    """The log-log slope of the power spectrum fitted over 0.01..0.4 cycles/sample."""
    x = colored_noise(1 << 16, color, np.random.default_rng(0))
    power = np.abs(np.fft.rfft(x)) ** 2
    f = np.fft.rfftfreq(len(x))
    band = (f > 0.01) & (f < 0.4)
    fitted = np.polyfit(np.log10(f[band]), np.log10(power[band]), 1)[0]
    assert abs(fitted - slope) < 0.1


def test_noise_is_seeded() -> None:
    c = [parse_condition("noise:snr=10")]
    x = _tone()
    assert np.array_equal(apply_conditions(x, c, 5), apply_conditions(x, c, 5))
    assert not np.array_equal(apply_conditions(x, c, 5), apply_conditions(x, c, 6))


def test_gain_and_clip_and_their_order() -> None:
    """gain:db=6 doubles the amplitude (10**(6/20) = 1.995); clip:level=0.2 bounds it; given
    as clip then gain on the command line, they still apply gain first, so the peak is the
    clip level::

        0.3 sine --gain x1.995--> 0.599 peak --clip 0.2--> 0.2 peak
    """
    x = _tone()
    y = apply_conditions(x, [parse_condition("gain:db=6")], 0)
    assert np.max(np.abs(y)) == pytest.approx(0.3 * 10 ** (6 / 20), rel=1e-4)
    both = [parse_condition("clip:level=0.2"), parse_condition("gain:db=6")]
    assert [c.kind for c in ordered(both)] == ["gain", "clip"]
    z = apply_conditions(x, both, 0)
    assert np.max(np.abs(z)) == pytest.approx(0.2)
    assert np.mean(np.abs(z) >= 0.2 - 1e-7) > 0.5  # most of the louder sine is clipped


@pytest.mark.parametrize(("text", "why"), [
    ("hum:snr=3", "unknown kind 'hum'"),
    ("noise:snr=nan", "snr must be a finite number in [-20, 60], got nan"),
    ("noise:snr=100", "snr must be a finite number"),
    ("noise:snr=ten", "snr='ten' is not a number"),
    ("noise:color=pink", "missing snr"),
    ("noise:snr=3,color=grey", "color must be one of white, pink, brown"),
    ("gain:db=3,x=1", "unknown parameter 'x'"),
    ("clip:level=0", "level must be a finite number"),
    ("gain:db", "'db' is not key=value"),
])
def test_bad_condition_is_one_line(text: str, why: str) -> None:
    with pytest.raises(DuplexevalError, match=why.replace("[", r"\[").replace("(", r"\(")):
        parse_condition(text)


def test_run_with_condition_holds_the_heard_input_and_refuses_another(
        sample_voiced: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The user channel of each sample wav is the clean one plus noise whose power, over the
    part the user is heard (not muted), is the dialogue channel's power less
    10 dB (within 0.5 dB; the SNR is defined over the whole user channel, pauses included);
    config.json records the condition; resume with another one is refused; a bad
    condition is one line, exit 2, nothing written."""
    clean, noisy = tmp_path / "clean", tmp_path / "noisy"
    base = ["run", "--system", "scripted", "--dataset", str(sample_voiced), "--protocol",
            "single", "--seed", "2"]
    assert main([*base, "--out", str(clean)]) == 0
    assert main([*base, "--out", str(noisy), "--condition", "noise:snr=10,color=white"]) == 0
    config = json.loads((noisy / "config.json").read_text())
    assert config["config"]["conditions"] == [{"kind": "noise", "snr": 10.0, "color": "white"}]
    assert json.loads((clean / "config.json").read_text())["config"]["conditions"] == []
    meta = [json.loads(line) for line in (noisy / "metadata.jsonl").read_text().splitlines()]
    measured = []
    for row in meta:
        a, _ = sf.read(str(clean / row["output_audio_path"]))
        b, _ = sf.read(str(noisy / row["output_audio_path"]))
        noise = b[:, 0] - a[:, 0]
        noise = noise[noise != 0]  # the muted part is silent in both
        dialogue, _ = sf.read(str(sample_voiced / "audio" / f"{row['sample_id']}.wav"))
        channel = dialogue[:, row["user_channel"]]
        if len(noise) > 1600 and np.mean(channel ** 2) > 0:
            measured.append(10 * np.log10(np.mean(channel ** 2) / np.mean(noise ** 2)))
    assert measured
    assert max(abs(m - 10) for m in measured) < 0.5, measured
    capsys.readouterr()
    assert main([*base, "--out", str(noisy), "--condition", "noise:snr=20,color=white"]) == 2
    assert "different configuration (changed: conditions)" in capsys.readouterr().err
    bad = tmp_path / "bad"
    assert main([*base, "--out", str(bad), "--condition", "noise:snr=inf"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "snr must be a finite number" in err[0]
    assert not bad.exists()
