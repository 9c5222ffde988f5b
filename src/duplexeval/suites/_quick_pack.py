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
        audio/ID.opus  Ogg Opus, 16 kHz stereo (channel 0 and 1 as in the dataset),
                       libsndfile compression level :data:`OPUS_LEVEL` (about 31 kbit/s)

A pack is the quick subset while it is *current*: its spec files are byte for byte the
suite's, they are still the ones the quick rule picks (the first ones for a subset by shift
count; :func:`~duplexeval.suites._build.quick_by_label`'s for a subset by label) and the rule
is unchanged.  Then ``build_suite`` decodes it into the cache (WAV, PCM 16-bit, as a
synthesized build) instead of synthesizing; otherwise it synthesizes as for any subset.  The
audio is the pack's, not what the current synthesizer would make: lossy-coded, and from the
synthesizer at ``pack.json``'s commit (a quick subset's numbers are the pack's, the full
suite's are the synthesizer's).  A test fails when a pack is no longer current, so that it is
made again with the specs.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from duplexeval._fileio import atomic_write_json
from duplexeval.errors import DuplexevalError
from duplexeval.suites._registry import Suite, get_suite

__all__ = ["OPUS_LEVEL", "QuickPack", "current_pack", "install_pack", "pack_root", "quick_rule",
           "write_pack"]

OPUS_LEVEL = 0.95
"""libsndfile's Opus compression level (0 = best quality, 1 = smallest): 0.95 is about
31 kbit/s for the 16 kHz stereo dialogues."""
_METADATA = ("dataset.json", "test.jsonl", "quality.json")


def pack_root() -> Path:
    """Where the packs live: ``duplexeval/bundled/quick``."""
    return Path(__file__).resolve().parents[1] / "bundled" / "quick"


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def quick_rule(suite: Suite) -> dict[str, Any]:
    """What picks a suite's quick subset (a pack made under another rule is not current)."""
    from duplexeval.suites._build import quick_min_shifts

    return {"quick_min_shifts": quick_min_shifts(suite), "quick_per_label": suite.quick_per_label,
            "quick_label_caps": [list(c) for c in suite.quick_label_caps]}


@dataclass(frozen=True)
class QuickPack:
    """A shipped quick subset (see the module docstring)."""

    suite: str
    folder: Path
    manifest: dict[str, Any]

    @property
    def digest(self) -> str:
        """SHA-256 of ``pack.json`` (it holds every file's hash): the decoded build's key."""
        return _sha256(self.folder / "pack.json")

    def stale_reason(self) -> str | None:
        """Why the pack is not the suite's current quick subset, or None when it is."""
        from duplexeval.suites._build import quick_by_label
        from duplexeval.synth._spec import load_spec

        suite = get_suite(self.suite)
        if self.manifest.get("rule") != quick_rule(suite):
            return "the suite's quick rule changed"
        folder = suite.spec_folder()
        files = sorted(p for p in folder.iterdir() if p.suffix in (".json", ".yaml", ".yml")
                       and p.name != "suite.json")
        packed: dict[str, str] = self.manifest["specs"]
        for name, digest in packed.items():
            if not (folder / name).is_file() or _sha256(folder / name) != digest:
                return f"spec {name} changed"
        if suite.quick_per_label is None:
            picked = [p.name for p in files[:len(packed)]]
        else:
            specs = [load_spec(p) for p in files]
            names = {s.id: p.name for s, p in zip(specs, files, strict=True)}
            picked = [names[s.id] for s in quick_by_label(specs, suite.quick_per_label,
                                                          suite.quick_label_caps)]
        if picked != list(packed):
            return "the quick rule now picks other specs"
        return None


def current_pack(name: str) -> QuickPack | None:
    """The suite's pack when one ships and is current (see the module docstring)."""
    folder = pack_root() / name
    if not (folder / "pack.json").is_file():
        return None
    pack = QuickPack(name, folder, json.loads((folder / "pack.json").read_text("utf-8")))
    return pack if pack.stale_reason() is None else None


def _decode(source: Path, target: Path) -> None:
    """Opus to 16-bit WAV, clipped: a decoded peak can overshoot full scale (libsndfile's own
    float-to-int conversion would wrap it around)."""
    import numpy as np
    import soundfile as sf

    audio, rate = sf.read(source, dtype="float32", always_2d=True)
    pcm = np.clip(np.round(audio * 32768.0), -32768, 32767).astype(np.int16)
    sf.write(target, pcm, rate, subtype="PCM_16")


def install_pack(pack: QuickPack, out: Path, workers: int = 2) -> None:
    """Write the pack as a dataset folder into ``out`` (an empty folder): its files checked
    against ``pack.json``'s hashes, the audio decoded to 16-bit WAV (``workers`` threads)."""
    import shutil

    for rel, digest in pack.manifest["files"].items():
        if _sha256(pack.folder / rel) != digest:
            raise DuplexevalError(f"{pack.folder / rel}: does not match its hash in pack.json "
                                  "(a damaged installation: reinstall duplexeval)")
    (out / "audio").mkdir(parents=True, exist_ok=True)
    (out / "txt_align").mkdir(exist_ok=True)
    for rel in pack.manifest["files"]:
        if not rel.startswith("audio/"):
            shutil.copyfile(pack.folder / rel, out / rel)
    sources = sorted((pack.folder / "audio").glob("*.opus"))
    with ThreadPoolExecutor(max(1, workers)) as pool:  # libsndfile runs without the GIL
        list(pool.map(lambda p: _decode(p, out / "audio" / f"{p.stem}.wav"), sources))


def _encode(wav: Path, target: Path, previous: Path) -> None:
    """``wav`` as Ogg Opus at ``target``; ``previous``'s bytes when it decodes the same."""
    import numpy as np
    import soundfile as sf

    audio, rate = sf.read(wav, dtype="float32", always_2d=True)
    sf.write(target, audio, rate, format="OGG", subtype="OPUS", compression_level=OPUS_LEVEL)
    if previous.is_file():
        new, _ = sf.read(target, dtype="float32", always_2d=True)
        was, _ = sf.read(previous, dtype="float32", always_2d=True)
        if new.shape == was.shape and np.array_equal(new, was):
            target.write_bytes(previous.read_bytes())


def write_pack(build: Path, suite: Suite, out: Path, commit: str,
               synthesizer: str) -> dict[str, Any]:
    """Pack the synthesized quick build ``build`` of ``suite`` into ``out`` (replaced);
    returns ``pack.json``'s content.  An Opus file of the pack being replaced is kept where it
    decodes to the same samples as the new one (libsndfile gives each Ogg stream a random
    serial number, so a pack made again from the same audio would differ in bytes only)."""
    import shutil

    from duplexeval.synth._spec import load_spec

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
            _encode(wav, out / "audio" / f"{wav.stem}.opus", old / "audio" / f"{wav.stem}.opus")
            shutil.copyfile(build / "txt_align" / f"{wav.stem}.txt",
                            out / "txt_align" / f"{wav.stem}.txt")
            ids.append(wav.stem)
    finally:
        shutil.rmtree(old.parent, ignore_errors=True)
    import soundfile as sf

    folder = suite.spec_folder()
    by_id = {load_spec(p).id: p for p in sorted(folder.iterdir())
             if p.suffix in (".json", ".yaml", ".yml") and p.name != "suite.json"}
    order = [json.loads(line)["id"] for line in
             (build / "test.jsonl").read_text("utf-8").splitlines() if line.strip()]
    files = sorted(str(p.relative_to(out).as_posix()) for p in out.rglob("*") if p.is_file())
    manifest = {"suite": suite.name, "dialogues": order,
                "specs": {by_id[i].name: _sha256(by_id[i]) for i in order},
                "rule": quick_rule(suite),
                "codec": {"format": "Ogg Opus",
                          "library": f"libsndfile {sf.__libsndfile_version__}",
                          "compression_level": OPUS_LEVEL, "decoded_to": "WAV PCM_16"},
                "files": {rel: _sha256(out / rel) for rel in files},
                "synthesizer": synthesizer, "commit": commit}
    if sorted(order) != sorted(ids):
        raise DuplexevalError(f"{build}: test.jsonl and audio/ name different dialogues")
    atomic_write_json(out / "pack.json", manifest)
    return manifest
