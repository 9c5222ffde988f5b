"""``bayling-duplex`` against a deterministic TOY module with the API surface of BayLing-Duplex's
``bayling_duplex`` (``toy_bayling/bayling_duplex``; the real model was not run): the adapter's
calls, its causal re-tokenisation, the placement of decoded audio, snapshot/restore with the
decoder's per-stream caches, and full ``duplexeval run`` s under single and multi-gen."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
import soxr

from duplexeval.cli import main
from duplexeval.systems import SessionSpec, load_system
from duplexeval.systems.adapters.bayling._tokens import WINDOW, block_tokens
from tiny_duplex import tiny_dataset

TOY = Path(__file__).parent / "toy_bayling"
RATE, FRAME, BLOCK = 22050, 1764, 17640
HOLD = 2205
"""The toy decoder's hold-back (samples at 22.05 kHz)."""


@pytest.fixture
def folders(tmp_path: Path) -> dict[str, str]:
    paths = {}
    for name in ("model_path", "speech_tokenizer_path", "decoder_path"):
        (tmp_path / name).mkdir()
        paths[name] = str(tmp_path / name)
    return paths


def system(folders: dict[str, str], **args: str):
    return load_system("bayling-duplex", {"repo": str(TOY), **folders, **args})


def tone(x: np.ndarray, a: float, b: float, amplitude: float = 0.2) -> None:
    t = np.arange(round((b - a) * RATE)) / RATE
    x[round(a * RATE):round(a * RATE) + len(t)] = amplitude * np.sin(2 * np.pi * 200 * t)


def drive(session, x: np.ndarray) -> tuple[np.ndarray, list[str]]:
    outs = [session.step(x[k:k + FRAME]) for k in range(0, len(x), FRAME)]
    return np.concatenate([o.audio for o in outs]), [o.text for o in outs]


def test_a_reply_is_heard_one_block_delay_plus_the_decoder_hold_back_after_its_block(
        folders: dict[str, str]) -> None:
    """Speech 0.2-1.0 s: blocks 0 and 1 have speech, block 2 (1.6-2.4 s) is the first silent
    one, so the toy starts its reply on block 2; it is decided at 2.4 s, and heard from
    2.4 s + the decoder's hold-back (0.1 s for the toy; 0.41 s for GLM-4-Voice's decoder)."""
    sys_ = system(folders, temperature="0.5", top_p="0.9", max_epad_count="3")
    session = sys_.open(SessionSpec(sample_rate=RATE, seed=0))
    x = np.zeros(5 * RATE, np.float32)
    tone(x, 0.2, 1.0)
    y, texts = drive(session, x)
    trace = session.trace()
    assert texts[3 * 10 - 1] == "hi" and texts[4 * 10 - 1] == " there"
    assert trace["text"][0] == {"sample": 3 * BLOCK, "text": "hi"}
    assert trace["bayling"]["hold_back_samples"] == HOLD
    # chunk b (block b's decode: the held end of chunk b-1, then block b minus its own held
    # end) plays from 0.8 s + hold-back + b blocks, back to back; the ones with sound:
    assert trace["bayling"]["chunks_at"] == [BLOCK + HOLD + b * BLOCK - HOLD for b in (2, 3, 4)]
    heard = np.flatnonzero(np.abs(y) > 1e-4)
    assert heard[0] - (3 * BLOCK + HOLD) in (0, 1)  # a sine from phase 0
    assert heard[-1] < 5 * BLOCK + HOLD  # two reply blocks, then EPAD
    model = sys_._model
    assert model.calls[0] == {"temperature": 0.5, "top_p": 0.9, "silence_penalty": 0.0,
                              "max_epad_count": 3}
    assert trace["bayling"]["epad_count"] == 1 and not trace["bayling"]["stopped"]
    session.close()
    assert not model.decoder.mel_overlap_dict and not model.decoder.hift_cache_dict


def test_after_max_epad_count_the_stream_stops_and_the_decoder_is_flushed(
        folders: dict[str, str]) -> None:
    """With ``max_epad_count=1`` the EPAD that ends the first reply (decided at 4.0 s) stops
    the stream: that block is decoded with ``finalize`` and nothing follows, even speech."""
    sys_ = system(folders, max_epad_count="1")
    session = sys_.open(SessionSpec(sample_rate=RATE, seed=0))
    x = np.zeros(7 * RATE, np.float32)
    tone(x, 0.2, 1.0)
    tone(x, 4.2, 5.0)
    y, _ = drive(session, x)
    trace = session.trace()["bayling"]
    assert trace["stopped"] and trace["epad_count"] == 1
    assert not sys_._model.decoder.mel_overlap_dict  # finalize dropped the stream's caches
    heard = np.flatnonzero(np.abs(y) > 1e-4)
    # the two reply blocks, whole, and nothing after (the second speech gets no answer)
    assert heard[0] - (3 * BLOCK + HOLD) in (0, 1)
    assert 5 * BLOCK + HOLD - 3 <= heard[-1] < 5 * BLOCK + HOLD
    assert len(sys_._model.calls) == 8  # one call per block, even once stopped


def test_tokens_come_from_the_audio_heard_so_far(folders: dict[str, str]) -> None:
    """Quiet speech at 0.2-1.0 s, loud speech at 2.4-3.2 s.  The toy tokenizer, like
    WhisperVQ, is not causal (its floor follows the loudest hop of its input): tokenised whole,
    the quiet speech falls under the floor the later loud speech sets; streamed, each block is
    tokenised from the audio heard up to its end, so it is heard."""
    sys_ = system(folders)
    session = sys_.open(SessionSpec(sample_rate=RATE, seed=0))
    x = np.zeros(4 * RATE, np.float32)
    tone(x, 0.2, 1.0, 0.02)
    tone(x, 2.4, 3.2, 0.5)
    drive(session, x)
    fed = session.trace()["bayling"]["tokens"]
    lengths = list(sys_._model.tokenized)  # one tokenizer call per block, on its prefix
    x16 = soxr.resample(x, RATE, 16000).astype(np.float32)
    whole, _ = sys_._model.tokenize_audio((x16[None, :], 16000))
    assert any(fed[:13]) and not any(whole[:13])
    for b in range(len(fed) // 10):  # each block: the tokens of its prefix, as fed
        prefix = soxr.resample(x[:(b + 1) * BLOCK], RATE, 16000).astype(np.float32)
        tokens, _ = sys_._model.tokenize_audio((prefix[None, :], 16000))
        assert fed[10 * b:10 * b + 10] == tokens[10 * b:10 * b + 10], b
    assert lengths == [(b + 1) * 12800 for b in range(5)]


def test_a_block_across_a_tokenizer_window_takes_tokens_from_both_windows() -> None:
    """Block 37 holds tokens 370-379; 375 tokens fill a 30 s window."""
    calls: list[int] = []

    def tokenize(audio: np.ndarray) -> list[int]:
        calls.append(len(audio))
        return [len(audio) * 1000 + i for i in range(len(audio) // 1280)]

    audio = np.zeros(380 * 1280, np.float32)
    got = block_tokens(tokenize, audio, 0, 370, 10)
    assert calls == [WINDOW, 5 * 1280]
    assert got == [WINDOW * 1000 + i for i in range(370, 375)] + \
        [6400 * 1000 + i for i in range(5)]
    with pytest.raises(ValueError, match="window start"):
        block_tokens(tokenize, audio[1280:], 1280, 370, 10)


def test_restore_replays_exactly_including_the_decoder_caches(folders: dict[str, str]) -> None:
    session = system(folders).open(SessionSpec(sample_rate=RATE, seed=0))
    x = np.zeros(6 * RATE, np.float32)
    tone(x, 0.2, 1.0)
    tone(x, 3.9, 4.4)
    cut = 35 * FRAME  # mid-reply, mid-block, with decoded audio held back in the decoder
    drive(session, x[:cut])
    state = session.snapshot()
    first, _ = drive(session, x[cut:])
    trace = session.trace()
    session.restore(state)
    again, _ = drive(session, x[cut:])
    assert np.array_equal(first, again) and session.trace() == trace
    assert np.any(np.abs(first[:BLOCK]) > 0.05)  # the reply went on across the snapshot
    session.restore(state)  # a snapshot is reusable; another future from it
    other, _ = drive(session, np.zeros(len(x) - cut, np.float32))
    assert not np.array_equal(other, first)


def system_args(args: dict[str, str]) -> list[str]:
    return [part for k, v in args.items() for part in ("--system-arg", f"{k}={v}")]


def run(dataset: Path, out: Path, folders: dict[str, str], protocol: str) -> int:
    return main(["run", "--system", "bayling-duplex", *system_args({"repo": str(TOY), **folders}),
                 "--dataset", str(dataset), "--protocol", protocol, "--window", "3",
                 "--out", str(out)])


@pytest.mark.parametrize("protocol", ["single", "multi-gen"])
def test_a_run_places_replies_where_the_model_decided_them(
        tmp_path: Path, folders: dict[str, str], protocol: str) -> None:
    dataset = tiny_dataset(tmp_path / "ds")
    out = tmp_path / protocol
    assert run(dataset, out, folders, protocol) == 0
    records = [json.loads(p.read_text()) for p in sorted((out / "samples").rglob("*.json"))]
    assert len(records) == 4
    for record in records:
        sample = record["sample"]
        x, rate = sf.read(str(out / record["output_audio_path"]), dtype="float32")
        loud = np.abs(x[:, 1]) > 0.05
        # each reply the model decided at dialogue time t is heard from t + the hold-back
        onsets = [round((t["time"] + HOLD / RATE - sample["input_start"]) * rate)
                  for t in record["trace"]["text"] if t["text"] == "hi"
                  and sample["input_start"] <= t["time"] < sample["input_end"] - 0.2]
        assert onsets, sample["event_id"]
        for at in onsets:
            assert not loud[at - rate // 20:at - 3].any(), (sample["event_id"], at)
            assert loud[at + 3:at + rate // 20].mean() > 0.8, (sample["event_id"], at)
    config = json.loads((out / "config.json").read_text())
    assert config["system"]["capabilities"]["snapshot"] is True


def test_a_model_error_fails_its_sample_and_resume_retries_it(
        tmp_path: Path, folders: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    system(folders)  # imports the toy from TOY
    import bayling_duplex

    dataset = tiny_dataset(tmp_path / "ds")
    out = tmp_path / "run"
    monkeypatch.setattr(bayling_duplex, "FAIL_AT_BLOCK", 2)
    assert run(dataset, out, folders, "single") == 1
    records = [json.loads(p.read_text()) for p in sorted((out / "samples").rglob("*.json"))]
    assert [r["error"] for r in records] == \
        ["SystemFailure: block 2: RuntimeError: CUDA out of memory (toy)"] * 4
    monkeypatch.setattr(bayling_duplex, "FAIL_AT_BLOCK", None)
    assert run(dataset, out, folders, "single") == 0
    summary = json.loads((out / "run_summary.json").read_text())
    assert summary["failed"] == 0 and summary["samples"] == 4


def test_bad_arguments_are_one_line_errors(tmp_path: Path, folders: dict[str, str],
                                           capsys: pytest.CaptureFixture[str]) -> None:
    dataset = tiny_dataset(tmp_path / "ds")
    code = main(["run", "--system", "bayling-duplex", "--system-arg",
                 f"repo={tmp_path / 'nowhere'}", "--dataset", str(dataset), "--protocol",
                 "single", "--out", str(tmp_path / "x")])
    err = capsys.readouterr().err
    assert code == 2 and "repo: no such folder" in err and "Traceback" not in err
    args = system_args(folders)
    code = main(["run", "--system", "bayling-duplex", "--system-arg", f"repo={tmp_path}", *args,
                 "--dataset", str(dataset), "--protocol", "single", "--out", str(tmp_path / "y")])
    assert code == 2 and "cannot import bayling_duplex" in capsys.readouterr().err
    code = main(["run", "--system", "bayling-duplex", "--system-arg", f"repo={TOY}",
                 "--dataset", str(dataset), "--protocol", "single", "--out", str(tmp_path / "z")])
    assert code == 2 and "needs --system-arg model_path=DIR" in capsys.readouterr().err
