"""``duplexeval verify OUT``: an evaluation bundle recomputed offline and checked.

Three checks, every one without the model (and without calling a judge: judged content is
answered only from the bundle's ``judge-cache.sqlite``, and an answer missing there is a
difference):

1. **Hashes.**  Every file ``eval.json`` lists is present and has its SHA-256.
2. **Scores.**  Each cell that ran is scored again from its own samples and analysis, in a
   temporary copy of its run directory, by the variant of the manifest; its per-event rows and
   aggregate must be byte-identical to the bundle's, its results equal but for paths.  So is
   each of its measure scorings (``eval --measures``: ``scorings`` of the cell), with the
   analysis options the evaluation gave it.
3. **Tables.**  Each benchmark's tables, and its measures' tables, are written again from the
   cells' results and must be byte-identical to the bundle's; a figure's data CSV is, and its
   images are checked by hash (their bytes depend on the installed matplotlib and fonts).

Each difference is one line naming the file or cell; :func:`verify_bundle` returns them (none:
the bundle holds).  A missing or malformed ``eval.json`` is a one-line error.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from pydantic import ValidationError

from duplexeval._cache import scratch_folder
from duplexeval.benchmarks._base import Benchmark, Cell, CellResult, MeasureScoring
from duplexeval.benchmarks._evaluate import base_analysis, write_cells_note
from duplexeval.benchmarks._manifest import (
    MANIFEST_FILE,
    CellEntry,
    EvalManifest,
    sha256_file,
)
from duplexeval.benchmarks._measures import (
    MEASURES_FOLDER,
    Measures,
    cell_analysis,
    write_bundle_measures,
)
from duplexeval.benchmarks._registry import BENCHMARKS
from duplexeval.data._validate import load_dataset
from duplexeval.errors import DuplexevalError
from duplexeval.metrics._score_run import score_run_dir
from duplexeval.metrics.content._score import JudgeSettings
from duplexeval.report._m3_figures import is_image
from duplexeval.results import Results, load
from duplexeval.runs._directory import RunDir
from duplexeval.suites._build import Subset

__all__ = ["VerifyReport", "read_manifest", "verify_bundle"]


@dataclass
class VerifyReport:
    """What :func:`verify_bundle` checked and found."""

    files: int = 0
    cells: int = 0
    scorings: int = 0
    """Scorings repeated: one per cell, and its measure scorings."""
    tables: int = 0
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Whether every hash, score and table held."""
        return not self.problems


def read_manifest(out: Path) -> EvalManifest:
    """The bundle's ``eval.json``; a one-line error naming it when absent or malformed."""
    path = out / MANIFEST_FILE
    try:
        manifest = EvalManifest.model_validate_json(path.read_bytes())
    except OSError as exc:
        raise DuplexevalError(f"{path}: cannot read the manifest ({exc.strerror})") from None
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(x) for x in first["loc"]) or "top level"
        raise DuplexevalError(f"{path}: {where}: {first['msg']}") from None
    for where, rel in _bundle_paths(manifest):
        parts = PurePosixPath(rel).parts
        if not rel or rel.startswith(("/", "\\")) or ".." in parts or "\\" in rel:
            raise DuplexevalError(f"{path}: {where}: {rel!r} is not a path inside the bundle")
    return manifest


def _bundle_paths(manifest: EvalManifest) -> list[tuple[str, str]]:
    """Every path the manifest gives relative to the bundle, with where it is given: ``verify``
    reads, hashes and copies only inside the bundle (a manifest edited to name ``/etc`` or
    ``../other`` is refused, not followed)."""
    found = [(f"files[{rel!r}]", rel) for rel in manifest.files]
    found += [(f"tables.{bench}[{i}]", rel) for bench, rels in manifest.tables.items()
              for i, rel in enumerate(rels)]
    for i, cell in enumerate(manifest.cells):
        found += [(f"cells.{i}.run", cell.run)]
        found += [(f"cells.{i}.results", cell.results)] if cell.results is not None else []
        for k, scoring in enumerate(cell.scorings):
            found += [(f"cells.{i}.scorings.{k}.run", scoring.run),
                      (f"cells.{i}.scorings.{k}.results", scoring.results)]
    return found


def _check_hashes(out: Path, manifest: EvalManifest, report: VerifyReport) -> None:
    for rel, digest in manifest.files.items():
        path = out / rel
        report.files += 1
        if not path.is_file():
            report.problems.append(f"{rel}: missing")
        elif sha256_file(path) != digest:
            report.problems.append(f"{rel}: changed (its SHA-256 is not the manifest's)")


def _without_paths(data: dict[str, Any]) -> dict[str, Any]:
    source = dict(data.get("source") or {})
    source.pop("path", None)
    source.pop("metadata", None)
    if isinstance(source.get("dataset"), dict):
        source["dataset"] = {k: v for k, v in source["dataset"].items() if k != "path"}
    return {**data, "source": source}


def _bundle_judge(out: Path, manifest: EvalManifest, tmp: Path) -> JudgeSettings | None:
    """The manifest's judge answering only from a copy of the bundle's cache (``None``: no
    judge, or its cache is outside the bundle)."""
    judge, cache = manifest.judge, manifest.judge_cache
    if not judge or cache is None or Path(cache).is_absolute() or not (out / cache).is_file():
        return None
    copy = tmp / "judge-cache.sqlite"
    shutil.copyfile(out / cache, copy)
    return JudgeSettings(base_url=str(judge.get("base_url", "")), model=str(judge["model"]),
                         cache_path=copy, cache_only=True)


@dataclass(frozen=True)
class _Scoring:
    """One scoring to repeat: the run (relative to the bundle), the variant, whether it is
    judged and the variants its run's analysis is shared by."""

    run: str
    variant: str
    judged: bool
    shared: tuple[str, ...]
    timing_only: bool = False


def _scorings(entry: CellEntry, cell: Cell, measures: Measures) -> list[_Scoring]:
    """The cell's scoring by its variant, then its measure scorings (as ``eval`` made them)."""
    own = tuple(dict.fromkeys((cell.variant, *measures.variants)))
    found = [_Scoring(entry.run, entry.variant, bool(cell.content_events), own)]
    tries = tuple(s.variant for s in entry.scorings if s.run.startswith(f"{MEASURES_FOLDER}/"))
    for s in entry.scorings:
        on_tries = s.run.startswith(f"{MEASURES_FOLDER}/")
        found.append(_Scoring(s.run, s.variant, False, tries if on_tries else own,
                              timing_only=on_tries))
    return found


def _rescore(out: Path, entry: CellEntry, bench: Benchmark, report: VerifyReport,
             manifest: EvalManifest, scoring: _Scoring) -> None:
    cell = bench.cell(entry.cell)
    run = out / scoring.run
    if not run.is_dir():
        report.problems.append(f"{scoring.run}: missing (the run folder the cell was scored "
                               "from)")
        return
    files = RunDir(run).scores(variant=scoring.variant)
    with scratch_folder("verify") as tmp:
        copy = Path(tmp) / run.name
        skip = {files.root.parent.name, RunDir(run).lock_path.name}
        shutil.copytree(run, copy, ignore=lambda _, names: [n for n in names if n in skip])
        again = RunDir(copy).scores(variant=scoring.variant)
        judge = _bundle_judge(out, manifest, Path(tmp)) if cell.content_events else None
        try:
            dataset, _ = load_dataset(Path(RunDir(copy).read_config().dataset.path))
            base = base_analysis(cell, dataset, judge, timing_only=scoring.timing_only)
            events = base.content_event_types
            options = cell_analysis(base, scoring.shared, dataset)
            results, _ = score_run_dir(copy, again.root, scoring.variant, progress=False,
                                       judge=judge if events and scoring.judged else None,
                                       options=options)
        except DuplexevalError as exc:
            report.problems.append(f"{scoring.run}: cannot be scored again ({exc})")
            return
        for mine, theirs in ((again.per_event, files.per_event),
                             (again.aggregate, files.aggregate)):
            if not theirs.is_file() or mine.read_bytes() != theirs.read_bytes():
                report.problems.append(f"{theirs.relative_to(out).as_posix()}: "
                                       "differs from the cell scored again")
        given = _readable(files.results, out, report)
        if given is not None and _without_paths(given.model_dump(mode="json")) \
                != _without_paths(results.model_dump(mode="json")):
            report.problems.append(f"{files.results.relative_to(out).as_posix()}: differs "
                                   "from the cell scored again")
    report.scorings += 1


def _readable(path: Path, out: Path, report: VerifyReport) -> Results | None:
    """The results file ``path`` of the bundle ``out``; ``None`` when absent, or unreadable
    (a problem of the report then, not the end of the verification)."""
    if not path.is_file():
        return None
    try:
        return load(path)
    except (DuplexevalError, OSError, ValueError) as exc:  # ValueError: JSON, pydantic
        report.problems.append(f"{path.relative_to(out).as_posix()}: unreadable "
                               f"({' '.join(str(exc).split())})")
        return None


def _measures(manifest: EvalManifest) -> Measures:
    """The manifest's measures (a version-2 manifest: none)."""
    try:
        return Measures.of(manifest.measures, manifest.repeats,
                           replacement=manifest.counterfactual_replacement)
    except DuplexevalError as exc:
        raise DuplexevalError(f"{MANIFEST_FILE}: {exc}") from None


def _subset(entries: list[CellEntry]) -> Subset:
    name = entries[0].subset if entries else "quick"
    return None if name == "full" else "quick" if name == "quick" else int(name.split()[-1])


def _measure_scorings(out: Path, entry: CellEntry) -> tuple[MeasureScoring, ...]:
    """The cell's measure scorings as the bundle has them (a missing results file: left out,
    and its table then differs)."""
    found = []
    for s in entry.scorings:
        results = _readable(out / s.results, out, VerifyReport())  # reported by _rescore
        if results is not None:
            found.append(MeasureScoring(s.variant, out / s.run, results,
                                        tries=s.run.startswith(f"{MEASURES_FOLDER}/")))
    return tuple(found)


def _check_tables(out: Path, manifest: EvalManifest, bench: Benchmark,
                  report: VerifyReport, measures: Measures) -> None:
    entries = [c for c in manifest.cells if c.benchmark == bench.name]
    cells = []
    for entry in entries:
        results = None if entry.results is None else \
            _readable(out / entry.results, out, VerifyReport())  # reported by _rescore
        cells.append(CellResult(bench.cell(entry.cell), out / entry.run, results,
                                skipped=entry.reason if entry.status == "skipped" else None,
                                measures=_measure_scorings(out, entry),
                                not_measured=entry.not_measured))
    with scratch_folder("verify") as tmp:
        again = Path(tmp)
        label = str(manifest.system.get("name", ""))
        written = bench.write_tables([(label, c) for c in cells], again)
        written += write_bundle_measures(label, cells, measures, again)
        written.append(write_cells_note(bench, cells, _subset(entries), again,
                                        [e.data for e in entries]))
        for path in written:
            rel = f"tables/{bench.name}/{path.name}"
            mine = out / rel
            report.tables += 1
            if is_image(path):
                continue  # a figure: its data CSV is compared, its bytes hash-checked
            if not mine.is_file():
                report.problems.append(f"{rel}: missing")
            elif mine.read_bytes() != path.read_bytes():
                report.problems.append(f"{rel}: differs from the table written again from "
                                       "the cells")


def verify_bundle(out: str | Path) -> VerifyReport:
    """Check the bundle ``out`` (see the module docstring)."""
    out = Path(out)
    manifest = read_manifest(out)
    measures = _measures(manifest)
    report = VerifyReport()
    _check_hashes(out, manifest, report)
    report.problems += [f"{entry.cell}: its benchmark {entry.benchmark!r} is not among the "
                        "bundle's benchmarks, so it is not checked" for entry in manifest.cells
                        if entry.benchmark not in manifest.benchmarks]
    for name, version in manifest.benchmarks.items():
        bench = BENCHMARKS.get(name)
        if bench.version != version:
            report.problems.append(f"benchmark {name}: the bundle has v{version}, this "
                                   f"duplexeval declares v{bench.version}")
            continue
        for entry in manifest.cells:
            if entry.benchmark == name and entry.status == "done":
                for scoring in _scorings(entry, bench.cell(entry.cell), measures):
                    _rescore(out, entry, bench, report, manifest, scoring)
                report.cells += 1
        _check_tables(out, manifest, bench, report, measures)
    return report
