"""Building a bundled suite (or a subset of it) into the cache, and listing the builds.

See :mod:`duplexeval.suites` for the cache layout and the quick subset.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tqdm import tqdm

from duplexeval._cache import cache_root
from duplexeval._fileio import atomic_write_json, exclusive_lock, sources_digest
from duplexeval.data._dialogue import Dialogue
from duplexeval.errors import DuplexevalError
from duplexeval.suites._quick_pack import QuickPack, install_pack, read_pack
from duplexeval.suites._registry import QUICK_MIN_SHIFTS, SUITES, Suite, get_suite

if TYPE_CHECKING:
    from duplexeval.synth._spec import DialogueSpec

__all__ = ["build_suite", "current_pack", "pack_stale_reason", "quick_by_label",
           "quick_min_shifts", "quick_rule", "shift_samples", "subset_label", "suite_gaps",
           "suite_path", "suite_rows"]

SYNTHESIZER_SOURCES = ("synth", "suites/_registry.py", "suites/_build.py", "speech/engines",
                       "speech/_tts.py", "speech/_clipbank.py", "speech/clips",
                       "speech/_japanese.py", "speech/_pitch.py", "speech/_voice_shift.py",
                       "_audio.py", "events.py", "timeline.py", "data/_dialogue.py",
                       "data/_m3.py")
"""What makes a build from specs, relative to the package: its source and data files are part
of every build's key, so a cached build is always the current code's (no version to bump).
The suites' registry and build are; the shipped packs' code (``suites/_quick_pack.py``) is
not, as it makes nothing a synthesized build holds.  The specs are not either: a dialogue's
key holds its own spec and a suite's key its spec files, so a spec added to one suite leaves
every other dialogue's cached build valid."""


@functools.lru_cache(maxsize=1)
def synthesizer_digest() -> str:
    """:func:`sources_digest` of this package's :data:`SYNTHESIZER_SOURCES`."""
    return sources_digest(Path(__file__).resolve().parents[1], SYNTHESIZER_SOURCES)


def _source_files(suite: Suite) -> list[Path]:
    if suite.from_toy:
        from duplexeval.synth._toy import find_toy

        toy = find_toy()
        return sorted(p for p in toy.rglob("*") if p.is_file() and p.suffix in (".jsonl", ".txt"))
    folder = suite.spec_folder()
    files = sorted(p for p in folder.glob("*") if p.suffix in (".json", ".yaml", ".yml"))
    if not files:
        raise DuplexevalError(f"suite {suite.name}: no specs in {folder}")
    return files


Subset = int | str | None
"""Which dialogues a build holds: None = all, an int ``k`` = the first ``k``, ``"quick"`` = the
quick subset (:data:`QUICK_MIN_SHIFTS`)."""


def quick_min_shifts(suite: Suite) -> int:
    """The shift samples a suite's quick subset reaches: the suite's own
    ``quick_min_shifts`` or :data:`QUICK_MIN_SHIFTS`."""
    return suite.quick_min_shifts if suite.quick_min_shifts is not None else QUICK_MIN_SHIFTS


def quick_rule(suite: Suite) -> dict[str, Any]:
    """What picks a suite's quick subset (a pack made under another rule is not current)."""
    return {"quick_min_shifts": quick_min_shifts(suite), "quick_per_label": suite.quick_per_label,
            "quick_label_caps": [list(c) for c in suite.quick_label_caps]}


def pack_stale_reason(pack: QuickPack) -> str | None:
    """Why a shipped pack is not its suite's current quick subset (None: it is; see
    :mod:`~duplexeval.suites._quick_pack`)."""
    from duplexeval.synth._spec import load_spec, spec_files

    suite = get_suite(pack.suite)
    files = spec_files(suite.spec_folder())
    by_label = None
    if suite.quick_per_label is not None:
        specs = [load_spec(p) for p in files]
        names = {spec.id: p.name for spec, p in zip(specs, files, strict=True)}
        by_label = [names[spec.id] for spec in quick_by_label(specs, suite.quick_per_label,
                                                              suite.quick_label_caps)]
    return pack.stale_reason(quick_rule(suite), files, by_label)


def current_pack(name: str) -> QuickPack | None:
    """The pack shipped for suite ``name`` when it is current, else None."""
    pack = read_pack(name)
    return pack if pack is not None and pack_stale_reason(pack) is None else None


def _key(suite: Suite, settings: dict[str, Any], limit: Subset = None) -> str:
    h = hashlib.sha256()
    rule: Any = limit if limit != "quick" else {"quick_min_shifts": quick_min_shifts(suite),
                                                "quick_per_label": suite.quick_per_label}
    fields = {k: v for k, v in dataclasses.asdict(suite).items() if k != "specs"}
    h.update(json.dumps({"code": synthesizer_digest(), "suite": fields, "settings": settings,
                         "limit": rule}, sort_keys=True, default=str).encode())
    for path in _source_files(suite):
        h.update(path.name.encode() + b"\0" + path.read_bytes())
    return h.hexdigest()[:16]


def suite_gaps(suite: Suite) -> tuple[float, ...]:
    """The turn-shift gaps (seconds) a suite's synthesis draws from: its timing reference,
    without the negative (overlapping) ones unless :attr:`Suite.overlapping_shifts`."""
    from duplexeval.synth._build import reference_gaps

    gaps = reference_gaps(suite.gaps)
    return gaps if suite.overlapping_shifts else tuple(g for g in gaps if g > 0)


def _settings(suite: Suite) -> dict[str, Any]:
    from duplexeval.synth._build import Synthesizer, SynthSettings

    settings = SynthSettings(gaps=suite_gaps(suite))
    engine = Synthesizer(settings).engine(suite.language)
    return {"synth": settings.to_json(), "tts": engine.settings()}


def dialogue_cache() -> Path:
    """Where built dialogues are cached one by one (shared by every suite and subset)."""
    return cache_root() / "dialogues"


def _dialogue_base(suite: Suite) -> str:
    """What a suite's dialogue depends on besides its spec: the code and the settings."""
    return json.dumps({"code": synthesizer_digest(), "settings": _settings(suite)},
                      sort_keys=True, default=str)


def _check_subset(limit: Subset) -> None:
    if limit is not None and limit != "quick" and not (isinstance(limit, int) and limit > 0):
        raise ValueError(f"a suite subset is None, a positive int or 'quick', got {limit!r}")


def subset_label(name: str, limit: Subset) -> str:
    """How a build is named: ``NAME``, ``NAME-first3`` or ``NAME-quick``."""
    _check_subset(limit)
    return name if limit is None else f"{name}-quick" if limit == "quick" \
        else f"{name}-first{limit}"


def suite_path(name: str, limit: Subset = None, synthesize: bool = False) -> Path:
    """Where the suite's current build lives (built or not); ``limit`` = the build of its first
    ``limit`` dialogues only, or of its quick subset (``"quick"``: decoded from the shipped
    pack while it is current, :mod:`~duplexeval.suites._quick_pack`, unless ``synthesize``;
    the first ``limit`` too where the pack holds them)."""
    suite = get_suite(name)
    label = subset_label(suite.name, limit)
    picked = _pack_dialogues(suite, limit, synthesize)
    if picked is not None:
        return cache_root() / "suites" / f"{label}-pack-{picked[0].digest[:16]}"
    return cache_root() / "suites" / f"{label}-{_key(suite, _settings(suite), limit)}"


def _pack_dialogues(suite: Suite, limit: Subset,
                    synthesize: bool) -> tuple[QuickPack, list[str] | None] | None:
    """The current shipped pack a build of ``limit`` decodes, and which of its dialogues
    (``None``: all, the quick subset; else the first ``limit`` dialogues' ids, where the pack
    holds each of them); ``None`` when the build synthesizes (``synthesize``, the whole suite,
    no current pack, or a dialogue the pack lacks)."""
    if synthesize or limit is None or suite.from_toy:
        return None
    pack = current_pack(suite.name)
    if pack is None:
        return None
    if limit == "quick":
        return pack, None
    from duplexeval.synth._spec import spec_files

    packed = list(pack.manifest["specs"])  # spec file names, in the order of its dialogues
    wanted = [p.name for p in spec_files(suite.spec_folder())[:int(limit)]]
    if not set(wanted) <= set(packed):
        return None
    dialogues: list[str] = pack.manifest["dialogues"]
    return pack, [dialogues[packed.index(name)] for name in wanted]


def build_suite(name: str, force: bool = False, progress: bool = True, quality: bool = True,
                log: Callable[[str], None] = lambda s: print(s, file=sys.stderr),
                limit: Subset = None, jobs: int | None = None,
                synthesize: bool = False) -> Path:
    """Build a suite (or reuse the cached build); returns the dataset folder.  ``limit``
    builds only the first ``limit`` dialogues, or with ``"quick"`` the quick subset (the
    smallest prefix reaching :data:`QUICK_MIN_SHIFTS`; cached separately), decoded from the
    shipped pack while it is current unless ``synthesize``
    (:mod:`~duplexeval.suites._quick_pack`); so are the first ``limit`` dialogues where that
    pack holds each of them (their audio is then the pack's, as the quick subset's is).
    ``jobs``: the worker processes synthesizing dialogues (None: one per CPU); the build's
    bytes do not depend on it."""
    suite = get_suite(name)
    target = suite_path(name, limit, synthesize)
    if _complete(target) and not force:
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with exclusive_lock(target.parent / f".{target.name}.lock"):
        if _complete(target) and not force:
            return target  # another process built it while this one waited
        picked = _pack_dialogues(suite, limit, synthesize)
        if picked is not None:
            _install_into(suite, *picked, target, log, jobs)
        else:
            _build_into(suite, target, progress, quality, log, limit, force, jobs)
    return target


def _install_into(suite: Suite, pack: QuickPack, dialogues: list[str] | None, target: Path,
                  log: Callable[[str], None], jobs: int | None) -> None:
    """Decode ``pack`` (all of it, or ``dialogues``) into ``target``; a part of the pack gets
    the ``quality.json`` of a synthesized subset (without the ASR round trip)."""
    from duplexeval.synth._parallel import default_jobs

    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.tmp-", dir=target.parent))
    try:
        install_pack(pack, tmp, workers=default_jobs() if jobs is None else jobs,
                     dialogues=dialogues)
        if dialogues is not None:
            _write_quality(suite, tmp, log, asr=False, jobs=jobs)
        _publish(tmp, target, keep_complete=True)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    what = "quick subset" if dialogues is None else \
        f"first {len(dialogues)} dialogue(s) of the quick subset"
    log(f"{pack.suite}: {what} decoded from the shipped pack "
        f"({len(pack.manifest['dialogues'])} dialogues, made at {pack.manifest['commit']})")


def _complete(target: Path) -> bool:
    return target.is_dir() and (target / "quality.json").is_file()




def _build_into(suite: Suite, target: Path, progress: bool, quality: bool,
                log: Callable[[str], None], limit: Subset, force: bool,
                jobs: int | None = None) -> None:
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.tmp-", dir=target.parent))
    try:
        if suite.from_toy:
            from duplexeval.synth._toy import voice_toy

            if isinstance(limit, str):
                raise DuplexevalError(f"suite {suite.name} has no quick subset; give a count")
            voice_toy(tmp, progress=progress, limit=limit)
        else:
            _build_from_specs(suite, tmp, progress, limit, jobs)
        if quality:
            _write_quality(suite, tmp, log, asr=limit is None, jobs=jobs)
        _publish(tmp, target, keep_complete=not force)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


def _publish(tmp: Path, target: Path, keep_complete: bool) -> None:
    """Move the finished build ``tmp`` to ``target``.  Another process may have built the same
    key meanwhile (parallel test workers, two terminals): a complete build there is kept
    (``keep_complete``; builds of one key are identical) and ours dropped, since removing it
    could pull a dataset from under its reader; an incomplete one is replaced."""
    for _ in range(3):
        if keep_complete and (target / "quality.json").is_file():
            return  # the caller's `finally` removes tmp
        if target.exists():
            shutil.rmtree(target, ignore_errors=True)
        try:
            os.replace(tmp, target)
            return
        except OSError:  # another build landed between the check and the rename
            continue
    raise DuplexevalError(f"cannot move the build of {target.name} into {target.parent}")


def shift_samples(dialogues: Iterable[Dialogue], channels: tuple[int, ...]) -> int:
    """Smooth-turn-taking (TURN_SHIFT) samples of the multi-gen plan of ``dialogues`` on the
    user ``channels``: the n of a smooth-turn-taking cell."""
    from duplexeval.events import EventKind
    from duplexeval.plan._samples import EvalProtocol, PlanOptions, build_plan

    plan = build_plan(dialogues, PlanOptions(protocol=EvalProtocol.MULTI_GEN, channels=channels))
    return sum(s.event_type is EventKind.TURN_SHIFT for s in plan.samples)


def quick_by_label(specs: Sequence[DialogueSpec], per_label: int,
                   caps: Sequence[tuple[str, int]] = ()) -> list[DialogueSpec]:
    """The first ``per_label`` specs of each ``mtr.label`` or ``flexi.scenario`` (specs without
    either form one group; a label in ``caps``, ``(label, count)``: its count), in spec order."""
    taken: dict[str | None, int] = {}
    limits: dict[str | None, int] = dict(caps)
    out = []
    for spec in specs:
        label = spec.mtr.label if spec.mtr is not None else \
            spec.flexi.scenario if spec.flexi is not None else None
        if taken.get(label, 0) < limits.get(label, per_label):
            taken[label] = taken.get(label, 0) + 1
            out.append(spec)
    return out


def _build_from_specs(suite: Suite, out: Path, progress: bool, limit: Subset,
                      jobs: int | None = None) -> None:
    """Synthesize the suite's specs in order: all of them, the first ``limit``, or (quick)
    until the dialogues built so far reach :func:`quick_min_shifts` shift samples (or, where
    the suite says so, the first dialogues of each label: :func:`quick_by_label`).  ``jobs``
    worker processes (None: one per CPU) build them, each cached on its own
    (:func:`dialogue_cache`, :mod:`duplexeval.synth._parallel`)."""
    from duplexeval.synth._build import SynthSettings
    from duplexeval.synth._mtr_synthesizer import synthesizer_for
    from duplexeval.synth._parallel import build_dialogues, default_jobs
    from duplexeval.synth._spec import load_specs

    specs = load_specs(suite.spec_folder())
    if isinstance(limit, int):
        specs = specs[:limit]
    per_label = suite.quick_per_label if limit == "quick" else None
    if per_label is not None:
        specs = quick_by_label(specs, per_label, suite.quick_label_caps)
    synth = synthesizer_for(specs, SynthSettings(gaps=suite_gaps(suite)))
    # a quick subset by shifts stops when it has them: the bar counts the dialogues built (a
    # quick subset by label knows its dialogues, so its bar has a total)
    by_shifts = limit == "quick" and per_label is None
    bar = tqdm(desc=f"synth {subset_label(suite.name, limit)}", unit="dialogue",
               total=None if by_shifts else len(specs), file=sys.stderr, disable=not progress)

    def enough(built: list[Any]) -> bool:
        return shift_samples([b.dialogue() for b in built],
                             suite.channels) >= quick_min_shifts(suite)

    with bar:
        built = build_dialogues(specs, synth, _dialogue_base(suite), dialogue_cache(),
                                jobs=default_jobs() if jobs is None else jobs,
                                stop=enough if by_shifts else None, tick=bar.update)
    synth.write(built, out, metadata={"name": suite.name, "description": suite.description,
                                      "user_channels": list(suite.channels)})


def _write_quality(suite: Suite, folder: Path, log: Callable[[str], None],
                   asr: bool = True, jobs: int | None = None) -> None:
    """``quality.json``; ``asr=False`` leaves out the ASR round trip (WER / kana CER), which
    costs more than the synthesis itself: subsets (the demo's quick subsets) skip it, the
    full suites (``duplexeval data build``) measure it, its Whisper windows decoded by
    ``jobs`` worker processes (None: one per CPU)."""
    from duplexeval.data._validate import Need, load_dataset
    from duplexeval.synth._parallel import default_jobs
    from duplexeval.synth._quality import quality_report

    dataset, _ = load_dataset(folder, audio=Need.REQUIRE)
    report = quality_report(dataset, suite_gaps(suite), asr=asr,
                            processes=default_jobs() if jobs is None else jobs)
    if suite.from_toy:
        from duplexeval.synth._toy import annotation_round_trip

        report["annotation_round_trip"] = annotation_round_trip(dataset)
    atomic_write_json(folder / "quality.json", report)
    asr_report = report.get("asr")
    words = (f"{asr_report.get('metric')} {asr_report.get('value', float('nan')):.3f} over "
             f"{asr_report.get('ipus')} IPUs" if asr_report else
             "ASR round trip skipped (subset)")
    ks = report["timing"]["ks"]
    gaps = ("turn-shift gaps: none to compare" if ks is None else
            f"turn-shift gaps vs the {suite.gaps} timing reference's: KS distance {ks:.3f} "
            "(0 = the same distribution, 1 = disjoint)")
    log(f"{suite.name}: {words}; {gaps}")


def suite_rows() -> list[list[object]]:
    """One row per suite: name, language, domain, dialogues, built?, audio minutes, MB, path."""
    rows: list[list[object]] = []
    for suite in SUITES.all().values():
        try:
            path = suite_path(suite.name)
        except DuplexevalError as exc:
            rows.append([suite.name, suite.language, suite.domain, "-", "unavailable", "-",
                         "-", str(exc).split(":")[0]])
            continue
        specs = len(_source_files(suite)) if not suite.from_toy else 5
        if (path / "quality.json").is_file():
            q = json.loads((path / "quality.json").read_text(encoding="utf-8"))
            size = sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
            rows.append([suite.name, suite.language, suite.domain, q["dialogues"], "built",
                         f"{q['seconds'] / 60:.1f}", f"{size / 1e6:.1f}", str(path)])
        else:
            rows.append([suite.name, suite.language, suite.domain, specs, "not built", "-",
                         "-", "duplexeval data build " + suite.name])
    return rows
