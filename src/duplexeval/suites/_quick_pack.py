"""The quick subsets shipped with the package: annotations as built, audio Opus-coded.

A quick subset (:func:`~duplexeval.suites._build.build_suite` with ``limit="quick"``) is
what the demo and most tests evaluate.  Synthesizing it costs minutes on 2 cores; decoding it
costs seconds.  So the package ships a *pack* of each demo suite's quick subset, made by
``scripts/pack_quick_suites.py`` from a synthesized build::

    duplexeval/bundled/quick/SUITE/
        pack.json      suite, dialogues, the spec files they came from (name -> SHA-256),
                       the quick rule, the codec, every file's SHA-256, the synthesizer digest
                       and commit it was made with
        dataset.json  test.jsonl  txt_align/ID.txt  quality.json      (as built)
        audio/ID.0.opus, audio/ID.1.opus   each channel as mono Ogg Opus, 16 kHz, libsndfile
                       compression level :data:`OPUS_LEVEL` (about 8.5 kbit/s a channel)
        audio/ID.support.json  where each channel is not silent: ``[[start, end), ...]`` in
                       samples, the runs of non-zero samples joined across zero runs shorter
                       than :data:`SUPPORT_GAP` samples

Decoding puts back exact digital silence outside the support.  A synthesized dialogue is
silent (all zero) between its utterances and in its inserted pauses, and a multi-gen
continuation mutes the user there (an event starts at a word's end); Opus would fill those
stretches with its coding noise, so a muted continuation would hear other audio than the
unmuted pass (a system's content-keyed caches miss) and voice activity would start early.  Each
channel is coded on its own so that no coupled-stereo coding leaks one speaker into the other.

A pack is the quick subset while it is *current*: its spec files are byte for byte the
suite's, they are still the ones the quick rule picks (the first ones for a subset by shift
count; :func:`~duplexeval.suites._build.quick_by_label`'s for a subset by label) and the rule
is unchanged.  Then ``build_suite`` decodes it into the cache (WAV, PCM 16-bit, as a
synthesized build) instead of synthesizing; otherwise it synthesizes as for any subset.  A
build of the suite's first ``k`` dialogues (``limit=k``, ``eval --limit k``) decodes them from
the pack too where it holds each of them (``install_pack(..., dialogues=...)``).  The
audio is the pack's, not what the current synthesizer would make: lossy-coded, and from the
synthesizer at ``pack.json``'s commit (a quick subset's numbers are the pack's, the full
suite's are the synthesizer's).  A test fails when a pack is no longer current, so that it is
made again with the specs.
"""

from __future__ import annotations

import json
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from duplexeval._audio import audio_library, read_audio, write_audio, write_opus
from duplexeval._fileio import atomic_write_json, sha256_file
from duplexeval.errors import DuplexevalError

__all__ = ["OPUS_LEVEL", "SUPPORT_GAP", "QuickPack", "install_pack", "pack_root", "read_pack",
           "support", "write_pack"]

OPUS_LEVEL = 0.97
"""libsndfile's Opus compression level (0 = best quality, 1 = smallest): 0.97 is about
8.5 kbit/s for a 16 kHz speech channel (the suites' Silero annotation check recovers 1063 of
1140 events against 1068 from the synthesized audio; 1062 with coupled stereo at 31 kbit/s)."""
SUPPORT_GAP = 160
"""Samples (10 ms at 16 kHz): zero runs shorter than this stay inside a support range (the
decoded signal is kept there); longer ones are put back as exact zeros."""
_METADATA = ("dataset.json", "test.jsonl", "quality.json")


def pack_root() -> Path:
    """Where the packs live: ``duplexeval/bundled/quick``."""
    return Path(__file__).resolve().parents[1] / "bundled" / "quick"


@dataclass(frozen=True)
class QuickPack:
    """A shipped quick subset (see the module docstring)."""

    suite: str
    folder: Path
    manifest: dict[str, Any]

    @property
    def digest(self) -> str:
        """SHA-256 of ``pack.json`` (it holds every file's hash): the decoded build's key."""
        return sha256_file(self.folder / "pack.json")

    def stale_reason(self, rule: dict[str, Any], spec_files: list[Path],
                     by_label: list[str] | None) -> str | None:
        """Why the pack is not the suite's current quick subset, or None when it is: ``rule``
        is the suite's quick rule now, ``spec_files`` its spec files in order, ``by_label`` the
        names of those a quick subset by label picks (None: a subset by shift count, a
        prefix)."""
        if self.manifest.get("rule") != rule:
            return "the suite's quick rule changed"
        by_name = {p.name: p for p in spec_files}
        packed: dict[str, str] = self.manifest["specs"]
        for name, digest in packed.items():
            if name not in by_name or sha256_file(by_name[name]) != digest:
                return f"spec {name} changed"
        picked = [p.name for p in spec_files[:len(packed)]] if by_label is None else by_label
        if picked != list(packed):
            return "the quick rule now picks other specs"
        return None


def read_pack(name: str) -> QuickPack | None:
    """The pack shipped for suite ``name``, current or not (None when none ships)."""
    folder = pack_root() / name
    if not (folder / "pack.json").is_file():
        return None
    return QuickPack(name, folder, json.loads((folder / "pack.json").read_text("utf-8")))


def support(channel: np.ndarray, gap: int = SUPPORT_GAP) -> list[list[int]]:
    """``[start, end)`` sample ranges covering every non-zero sample of ``channel``, joined
    across zero runs shorter than ``gap``."""
    nonzero = np.flatnonzero(channel != 0)
    if len(nonzero) == 0:
        return []
    breaks = np.flatnonzero(np.diff(nonzero) > gap)  # a zero run of diff - 1 samples
    starts = np.concatenate([nonzero[:1], nonzero[breaks + 1]])
    ends = np.concatenate([nonzero[breaks], nonzero[-1:]]) + 1
    return [[int(a), int(b)] for a, b in zip(starts, ends, strict=True)]


def _decode(folder: Path, dialogue: str, target: Path) -> None:
    """The two mono Opus channels of ``dialogue`` to one 16-bit stereo WAV: silent outside
    each channel's support, clipped (a decoded peak can overshoot full scale, and libsndfile's
    own float-to-int conversion would wrap it around)."""
    ranges = json.loads((folder / f"{dialogue}.support.json").read_text("utf-8"))
    channels, rate = [], 0
    for c in (0, 1):
        x, rate = read_audio(folder / f"{dialogue}.{c}.opus")
        kept = np.zeros(len(x), dtype=np.float32)
        for a, b in ranges[str(c)]:
            kept[a:b] = x[a:b, 0]
        channels.append(kept)
    pcm = np.clip(np.round(np.stack(channels, axis=1) * 32768.0), -32768, 32767)
    write_audio(target, pcm.astype(np.int16), rate)


def install_pack(pack: QuickPack, out: Path, workers: int = 2,
                 dialogues: list[str] | None = None) -> None:
    """Write the pack as a dataset folder into ``out`` (an empty folder): its files checked
    against ``pack.json``'s hashes, the audio decoded to 16-bit WAV (``workers`` threads).
    ``dialogues`` (ids, in the pack's order) writes only those: ``test.jsonl`` keeps their
    lines, ``txt_align`` and ``audio`` their files, and ``quality.json``, which describes the
    whole pack, is left for the caller to write."""
    import shutil

    for rel, digest in pack.manifest["files"].items():
        if sha256_file(pack.folder / rel) != digest:
            raise DuplexevalError(f"{pack.folder / rel}: does not match its hash in pack.json "
                                  "(a damaged installation: reinstall duplexeval)")
    kept = list(pack.manifest["dialogues"]) if dialogues is None else dialogues
    (out / "audio").mkdir(parents=True, exist_ok=True)
    (out / "txt_align").mkdir(exist_ok=True)
    if dialogues is None:
        for rel in pack.manifest["files"]:
            if not rel.startswith("audio/"):
                shutil.copyfile(pack.folder / rel, out / rel)
    else:
        shutil.copyfile(pack.folder / "dataset.json", out / "dataset.json")
        for d in kept:
            align = f"txt_align/{d}.txt"
            shutil.copyfile(pack.folder / align, out / align)
        lines = (pack.folder / "test.jsonl").read_text("utf-8").splitlines(keepends=True)
        wanted = set(kept)
        (out / "test.jsonl").write_text(
            "".join(line for line in lines if json.loads(line)["id"] in wanted), "utf-8")
    audio = pack.folder / "audio"
    with ThreadPoolExecutor(max(1, workers)) as pool:  # libsndfile runs without the GIL
        list(pool.map(lambda d: _decode(audio, d, out / "audio" / f"{d}.wav"), kept))


def _encode(wav: Path, out: Path, previous: Path) -> None:
    """``wav``'s channels as mono Ogg Opus (``out/ID.C.opus``) and its support
    (``out/ID.support.json``); a file of ``previous`` (the same layout) keeps its bytes where it
    decodes to the same samples."""
    audio, rate = read_audio(wav)
    for c in (0, 1):
        target = out / f"{wav.stem}.{c}.opus"
        write_opus(target, audio[:, c], rate, OPUS_LEVEL)
        before = previous / target.name
        if before.is_file():
            new, _ = read_audio(target)
            was, _ = read_audio(before)
            if new.shape == was.shape and np.array_equal(new, was):
                target.write_bytes(before.read_bytes())
    atomic_write_json(out / f"{wav.stem}.support.json",
                      {str(c): support(audio[:, c]) for c in (0, 1)})


def write_pack(build: Path, suite: str, spec_folder: Path, rule: dict[str, Any], out: Path,
               commit: str, synthesizer: str) -> dict[str, Any]:
    """Pack the synthesized quick build ``build`` of ``suite`` (its specs in ``spec_folder``,
    picked under the quick ``rule``) into ``out`` (replaced); returns ``pack.json``'s content.
    An Opus file of the pack being replaced is kept where it decodes to the same samples as the
    new one (libsndfile gives each Ogg stream a random serial number, so a pack made again from
    the same audio would differ in bytes only)."""
    import shutil

    from duplexeval.synth._spec import load_spec, spec_files

    out.parent.mkdir(parents=True, exist_ok=True)
    old = Path(tempfile.mkdtemp(prefix=".old-", dir=out.parent)) / out.name
    if out.exists():
        out.rename(old)
    try:
        (out / "audio").mkdir(parents=True)
        (out / "txt_align").mkdir()
        for name in _METADATA:
            shutil.copyfile(build / name, out / name)
        ids = []
        for wav in sorted((build / "audio").glob("*.wav")):
            _encode(wav, out / "audio", old / "audio")
            shutil.copyfile(build / "txt_align" / f"{wav.stem}.txt",
                            out / "txt_align" / f"{wav.stem}.txt")
            ids.append(wav.stem)
    finally:
        shutil.rmtree(old.parent, ignore_errors=True)
    by_id = {load_spec(p).id: p for p in spec_files(spec_folder)}
    order = [json.loads(line)["id"] for line in
             (build / "test.jsonl").read_text("utf-8").splitlines() if line.strip()]
    files = sorted(str(p.relative_to(out).as_posix()) for p in out.rglob("*") if p.is_file())
    manifest = {"suite": suite, "dialogues": order,
                "specs": {by_id[i].name: sha256_file(by_id[i]) for i in order},
                "rule": rule,
                "codec": {"format": "Ogg Opus, one mono file per channel",
                          "library": audio_library(),
                          "compression_level": OPUS_LEVEL, "support_gap": SUPPORT_GAP,
                          "decoded_to": "WAV PCM_16, zero outside the support"},
                "files": {rel: sha256_file(out / rel) for rel in files},
                "synthesizer": synthesizer, "commit": commit}
    if sorted(order) != sorted(ids):
        raise DuplexevalError(f"{build}: test.jsonl and audio/ name different dialogues")
    atomic_write_json(out / "pack.json", manifest)
    return manifest
