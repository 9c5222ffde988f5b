"""The shipped quick-subset packs: current with the specs, intact, the quick subset their rule
picks, decoded into an ordinary dataset folder, and left aside once stale or damaged."""

from __future__ import annotations

import itertools
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from duplexeval._fileio import sha256_file
from duplexeval.data import Need, load_dataset
from duplexeval.errors import DuplexevalError
from duplexeval.suites import SUITES, build_suite, shift_samples, suite_path
from duplexeval.suites import _build as suite_build
from duplexeval.suites import _quick_pack as quick_pack
from duplexeval.suites._build import quick_min_shifts

PACKED = sorted(p.name for p in quick_pack.pack_root().iterdir()
                if (p / "pack.json").is_file())


def _pack(name: str) -> quick_pack.QuickPack:
    folder = quick_pack.pack_root() / name
    return quick_pack.QuickPack(name, folder, json.loads((folder / "pack.json").read_text()))


def test_the_demo_suites_ship_packs_and_they_stay_small() -> None:
    assert PACKED == ["flexi-en", "m3-chat-en", "m3-chat-ja", "m3-qa-en", "m3-qa-ja"]
    size = sum(p.stat().st_size for p in quick_pack.pack_root().rglob("*") if p.is_file())
    assert size < 4_000_000


@pytest.mark.parametrize("name", PACKED)
def test_each_pack_is_current_and_intact(name: str) -> None:
    pack = _pack(name)
    reason = suite_build.pack_stale_reason(pack)
    assert reason is None, (f"the {name} pack is stale ({reason}): run "
                            f"scripts/pack_quick_suites.py {name} and commit it")
    files = sorted(p.relative_to(pack.folder).as_posix() for p in pack.folder.rglob("*")
                   if p.is_file() and p.name != "pack.json")
    assert files == sorted(pack.manifest["files"])  # nothing unlisted ships
    for rel, digest in pack.manifest["files"].items():
        assert sha256_file(pack.folder / rel) == digest, rel


@pytest.mark.parametrize("name", PACKED)
def test_each_pack_is_the_subset_its_rule_picks(name: str, tmp_path: Path) -> None:
    """Decoded: an ordinary dataset folder whose dialogues are the quick subset (the smallest
    prefix with the rule's shift samples, or the first of each label), with 16-bit WAV audio
    as long as the pack's Opus and close to it."""
    suite = SUITES[name]
    pack = _pack(name)
    quick_pack.install_pack(pack, tmp_path)
    dataset, _ = load_dataset(tmp_path, audio=Need.REQUIRE)
    assert [d.id for d in dataset.dialogues] == pack.manifest["dialogues"]
    if suite.quick_per_label is None:
        minimum = quick_min_shifts(suite)
        assert shift_samples(dataset.dialogues, suite.channels) >= minimum
        assert shift_samples(dataset.dialogues[:-1], suite.channels) < minimum
    first = dataset.dialogues[0].id
    decoded, rate = sf.read(tmp_path / "audio" / f"{first}.wav", dtype="float32",
                            always_2d=True)
    assert (rate, decoded.shape[1], sf.info(tmp_path / "audio" / f"{first}.wav").subtype) == \
        (16000, 2, "PCM_16")
    ranges = json.loads((pack.folder / "audio" / f"{first}.support.json").read_text())
    for c in (0, 1):
        coded, coded_rate = sf.read(pack.folder / "audio" / f"{first}.{c}.opus", dtype="float32")
        assert coded_rate == rate and len(coded) == len(decoded)
        inside = np.zeros(len(coded), dtype=bool)
        for a, b in ranges[str(c)]:
            inside[a:b] = True
        assert not decoded[~inside, c].any()  # exact silence outside the support
        clipped = np.clip(coded[inside], -1.0, 32767 / 32768)  # a peak may overshoot
        assert np.max(np.abs(decoded[inside, c] - clipped)) <= 1 / 32768  # 16-bit rounding


def test_support_joins_nonzero_runs_across_short_zero_runs() -> None:
    """::

        index    0 1 2 3 4 5 6 7 8 9
        samples  0 5 0 0 7 0 0 0 9 0
        gap 3    . [ - - - ) . . [ )     the zero run of 2 is joined, the run of 3 splits
        gap 4    . [ - - - - - - - )     both are shorter than 4: one range
    """
    x = np.array([0, 5, 0, 0, 7, 0, 0, 0, 9, 0], dtype=np.float32)
    assert quick_pack.support(x, gap=3) == [[1, 5], [8, 9]]
    assert quick_pack.support(x, gap=4) == [[1, 9]]
    assert quick_pack.support(x, gap=2) == [[1, 2], [4, 5], [8, 9]]
    assert quick_pack.support(np.zeros(5, np.float32)) == []


def test_a_decoded_pack_is_silent_after_each_utterance(tmp_path: Path) -> None:
    """Where a multi-gen continuation mutes the user (an event starting at the end of a
    channel's utterance or at an inserted pause), the decoded audio is already exact silence,
    so the muted and the unmuted pass hear the same samples (the cascade's ASR cache depends on
    it)::

        channel   |== word ==|   . . . . . . . . . . . .  |~ next clip ~|== word ==|
                  end -----> +1 ms [ exact zeros, 0.2 s )       <= 0.35 s lead-in

    Checked after every word followed by at least 0.6 s (a natural pause inside an utterance
    is at most 0.4 s), up to 0.35 s before the next word (a clip's quiet lead-in)."""
    pack = _pack("m3-qa-en")
    quick_pack.install_pack(pack, tmp_path)
    dataset, _ = load_dataset(tmp_path, audio=Need.REQUIRE)
    checked = 0
    for dialogue in dataset.dialogues:
        assert dialogue.audio is not None
        audio, rate = sf.read(dialogue.audio.path, dtype="float32", always_2d=True)
        for c in (0, 1):
            words = [w for w in dialogue.words if w.channel == c]
            for word, after in itertools.pairwise(words):
                if after.start - word.end >= 0.6:
                    end = min(word.end + 0.2, after.start - 0.35)
                    span = audio[round((word.end + 0.001) * rate):round(end * rate), c]
                    assert not span.any(), (dialogue.id, c, word.end)
                    checked += 1
    assert checked >= 30


def test_a_pack_round_trip_puts_back_exact_silence(tmp_path: Path) -> None:
    """Packed and decoded, a channel is exactly zero wherever it was zero for at least
    :data:`SUPPORT_GAP` samples, and close to the original elsewhere::

        ch 0   ~~~~~~~~ tone ~~~~~~~~|0000 0.5 s 0000|~~~~ tone ~~~~|00 2 ms 00|~~ tone ~~
        ch 1   0000000000000000000000|~~~~~~~~~~~~~~ tone ~~~~~~~~~~~~~~~~~~~~~~|0000000

    (the 2 ms zero run is shorter than the gap: inside the support, decoded as coded)."""
    build = tmp_path / "build"
    quick_pack.install_pack(_pack("m3-qa-en"), build)
    rate = 16000
    t = np.arange(3 * rate) / rate
    tone = (0.3 * np.cos(2 * np.pi * 220 * t)).astype(np.float32)  # no zero at the edges
    x = np.zeros((3 * rate, 2), dtype=np.float32)
    x[:rate, 0] = tone[:rate]
    x[int(1.5 * rate):int(2.2 * rate), 0] = tone[int(1.5 * rate):int(2.2 * rate)]
    x[int(2.202 * rate):, 0] = tone[int(2.202 * rate):]
    x[rate:int(2.5 * rate), 1] = tone[rate:int(2.5 * rate)]
    first = _pack("m3-qa-en").manifest["dialogues"][0]
    sf.write(build / "audio" / f"{first}.wav", x, rate, subtype="PCM_16")
    original, _ = sf.read(build / "audio" / f"{first}.wav", dtype="float32", always_2d=True)
    out = tmp_path / "pack" / "m3-qa-en"
    suite = SUITES["m3-qa-en"]
    quick_pack.write_pack(build, suite.name, suite.spec_folder(), suite_build.quick_rule(suite),
                          out, "test", "test")
    manifest = json.loads((out / "pack.json").read_text())
    decoded_at = tmp_path / "decoded"
    quick_pack.install_pack(quick_pack.QuickPack("m3-qa-en", out, manifest), decoded_at)
    y, _ = sf.read(decoded_at / "audio" / f"{first}.wav", dtype="float32", always_2d=True)
    assert y.shape == original.shape
    ranges = json.loads((out / "audio" / f"{first}.support.json").read_text())
    assert ranges["0"] == [[0, rate], [int(1.5 * rate), 3 * rate]]
    assert ranges["1"] == [[rate, int(2.5 * rate)]]
    assert not y[rate:int(1.5 * rate), 0].any() and not y[:rate, 1].any() \
        and not y[int(2.5 * rate):, 1].any()
    for c, (a, b) in ((0, (0, rate)), (1, (rate, int(2.5 * rate)))):
        assert np.corrcoef(y[a:b, c], original[a:b, c])[0, 1] > 0.9


def test_build_suite_decodes_the_pack_and_reuses_the_build(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DUPLEXEVAL_CACHE", str(tmp_path))
    messages: list[str] = []
    root = build_suite("m3-qa-en", limit="quick", progress=False, log=messages.append)
    assert root == suite_path("m3-qa-en", limit="quick")
    assert root.name == f"m3-qa-en-quick-pack-{_pack('m3-qa-en').digest[:16]}"
    assert "decoded from the shipped pack" in messages[0]
    for name in ("dataset.json", "test.jsonl", "quality.json"):
        assert (root / name).read_bytes() == (_pack("m3-qa-en").folder / name).read_bytes()
    assert build_suite("m3-qa-en", limit="quick", progress=False, log=messages.append) == root
    assert len(messages) == 1  # the second call found the build
    assert [p.name for p in tmp_path.joinpath("suites").iterdir()
            if not p.name.startswith(".")] == [root.name]


def test_the_first_dialogues_are_decoded_where_the_pack_holds_them(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``build_suite(NAME, limit=k)`` (``eval --limit k``) decodes the suite's first ``k``
    dialogues from the pack when it holds each of them: the quick subset's lines, alignments
    and audio for those dialogues, and a ``quality.json`` of their own; one more than the pack
    holds is synthesized (only its path is asked for here)::

        specs        qa-01  qa-02  qa-03  qa-04  qa-05 ...
        pack         qa-01  qa-02  qa-03  qa-04
        limit=2      qa-01  qa-02                        decoded
        limit=5      qa-01  qa-02  qa-03  qa-04  qa-05   synthesized
    """
    monkeypatch.setenv("DUPLEXEVAL_CACHE", str(tmp_path))
    pack = _pack("m3-qa-en")
    messages: list[str] = []
    quick = build_suite("m3-qa-en", limit="quick", progress=False, log=messages.append)
    first = build_suite("m3-qa-en", limit=2, progress=False, log=messages.append)
    assert first == suite_path("m3-qa-en", limit=2)
    assert first.name == f"m3-qa-en-first2-pack-{pack.digest[:16]}"
    assert "first 2 dialogue(s) of the quick subset decoded" in messages[-1]
    lines = (quick / "test.jsonl").read_text().splitlines(keepends=True)
    assert (first / "test.jsonl").read_text() == "".join(lines[:2])
    assert sorted(p.name for p in (first / "audio").iterdir()) == ["qa-01.wav", "qa-02.wav"]
    for rel in ("audio/qa-01.wav", "audio/qa-02.wav", "txt_align/qa-02.txt", "dataset.json"):
        assert (first / rel).read_bytes() == (quick / rel).read_bytes(), rel
    assert sorted(p.name for p in (first / "txt_align").iterdir()) == ["qa-01.txt", "qa-02.txt"]
    quality = json.loads((first / "quality.json").read_text())
    dataset, _ = load_dataset(first, audio=Need.REQUIRE)
    assert quality["dialogues"] == len(dataset.dialogues) == 2
    held = len(pack.manifest["dialogues"])
    assert "-pack-" not in suite_path("m3-qa-en", limit=held + 1).name
    assert "-pack-" not in suite_path("m3-qa-en", limit=2, synthesize=True).name


def _copy_packs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    packs = tmp_path / "packs"
    shutil.copytree(quick_pack.pack_root() / "m3-qa-en", packs / "m3-qa-en")
    monkeypatch.setattr(quick_pack, "pack_root", lambda: packs)
    return packs / "m3-qa-en"


def test_a_stale_pack_is_left_aside_for_synthesis(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A pack whose spec hash is not the spec's, or made under another quick rule, is not the
    quick subset: ``suite_path`` names the synthesized build's key instead."""
    monkeypatch.setenv("DUPLEXEVAL_CACHE", str(tmp_path / "cache"))
    folder = _copy_packs(tmp_path, monkeypatch)
    assert "-pack-" in suite_path("m3-qa-en", limit="quick").name
    assert "-pack-" not in suite_path("m3-qa-en", limit="quick", synthesize=True).name
    manifest = json.loads((folder / "pack.json").read_text())
    first = next(iter(manifest["specs"]))
    changed = {**manifest, "specs": {**manifest["specs"], first: "0" * 64}}
    (folder / "pack.json").write_text(json.dumps(changed))
    assert suite_build.pack_stale_reason(_pack_at(folder)) == f"spec {first} changed"
    assert suite_build.current_pack("m3-qa-en") is None
    assert "-pack-" not in suite_path("m3-qa-en", limit="quick").name
    (folder / "pack.json").write_text(json.dumps(manifest))
    monkeypatch.setattr(suite_build, "QUICK_MIN_SHIFTS", 10)
    assert suite_build.pack_stale_reason(_pack_at(folder)) == "the suite's quick rule changed"


def _pack_at(folder: Path) -> quick_pack.QuickPack:
    return quick_pack.QuickPack("m3-qa-en", folder, json.loads((folder / "pack.json").read_text()))


def test_a_damaged_pack_file_is_named_and_nothing_is_left(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DUPLEXEVAL_CACHE", str(tmp_path / "cache"))
    folder = _copy_packs(tmp_path, monkeypatch)
    victim = sorted((folder / "audio").glob("*.opus"))[0]
    victim.write_bytes(victim.read_bytes()[:-100])
    with pytest.raises(DuplexevalError, match=victim.name):
        build_suite("m3-qa-en", limit="quick", progress=False)
    assert not [p for p in (tmp_path / "cache" / "suites").iterdir()
                if not p.name.endswith(".lock")]
