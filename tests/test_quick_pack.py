"""The shipped quick-subset packs: current with the specs, intact, the quick subset their rule
picks, decoded into an ordinary dataset folder, and left aside once stale or damaged."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

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
    assert size < 7_000_000


@pytest.mark.parametrize("name", PACKED)
def test_each_pack_is_current_and_intact(name: str) -> None:
    pack = _pack(name)
    reason = pack.stale_reason()
    assert reason is None, (f"the {name} pack is stale ({reason}): run "
                            f"scripts/pack_quick_suites.py {name} and commit it")
    files = sorted(p.relative_to(pack.folder).as_posix() for p in pack.folder.rglob("*")
                   if p.is_file() and p.name != "pack.json")
    assert files == sorted(pack.manifest["files"])  # nothing unlisted ships
    for rel, digest in pack.manifest["files"].items():
        assert quick_pack._sha256(pack.folder / rel) == digest, rel


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
    decoded = sf.info(tmp_path / "audio" / f"{first}.wav")
    coded, rate = sf.read(pack.folder / "audio" / f"{first}.opus", dtype="float32",
                          always_2d=True)
    assert (decoded.samplerate, decoded.channels, decoded.subtype) == (16000, 2, "PCM_16")
    assert decoded.frames == len(coded) and rate == 16000
    wav, _ = sf.read(tmp_path / "audio" / f"{first}.wav", dtype="float32", always_2d=True)
    clipped = np.clip(coded, -1.0, 32767 / 32768)  # a decoded peak may overshoot full scale
    assert np.max(np.abs(wav - clipped)) <= 1 / 32768  # 16-bit rounding only


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
    assert _pack_at(folder).stale_reason() == f"spec {first} changed"
    assert quick_pack.current_pack("m3-qa-en") is None
    assert "-pack-" not in suite_path("m3-qa-en", limit="quick").name
    (folder / "pack.json").write_text(json.dumps(manifest))
    monkeypatch.setattr(suite_build, "QUICK_MIN_SHIFTS", 10)
    assert _pack_at(folder).stale_reason() == "the suite's quick rule changed"


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
