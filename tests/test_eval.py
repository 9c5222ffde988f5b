"""``duplexeval eval``: every cell of a benchmark into one bundle, resumable, with the cells a
system cannot run skipped and said so.

The benchmark here is a small declaration added at run time (``m3-qa-en``'s first dialogue under
Multi (gen) and Multi (ref), the m3 variant and its tables), so the test runs in seconds; the
bundled benchmarks are the same code over more cells.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from duplexeval.benchmarks import BENCHMARKS, Benchmark, Cell, EvalManifest, EvalResult
from duplexeval.benchmarks._m3 import M3
from duplexeval.benchmarks._manifest import sha256_file
from duplexeval.cli import main
from duplexeval.plan import EvalProtocol
from duplexeval.systems import Capabilities, Session, SessionSpec, System, load_system

TINY = Benchmark(
    name="tiny-m3", version="0", title="tiny M3", seed="a test",
    cells=(Cell("m3-qa-en", EvalProtocol.MULTI_GEN, "m3", content_events=()),
           Cell("m3-qa-en", EvalProtocol.MULTI_REF, "m3", content_events=())),
    write_tables=M3.write_tables)


class UnforcedSilence(System):
    """A third-party system (``module:Class``) that cannot be teacher-forced."""

    name = "unforced-silence"
    version = "1"

    def __init__(self, **args: str) -> None:
        super().__init__(**args)
        self.capabilities = Capabilities(sample_rate=16000, frame_size=320, snapshot=True)

    def open(self, spec: SessionSpec) -> Session:
        return load_system("silence", {"sample_rate": "16000"}).open(spec)


@pytest.fixture
def tiny() -> Iterator[Benchmark]:
    BENCHMARKS.add(TINY.name, TINY)
    yield TINY
    BENCHMARKS.remove(TINY.name)


def _frames(out: Path) -> dict[str, int]:
    return {p.parent.name: json.loads(p.read_text())["frames_stepped"]
            for p in sorted((out / "cells").rglob("run_summary.json"))}


def test_eval_writes_a_bundle_and_a_second_run_steps_nothing(
        tiny: Benchmark, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "bundle"
    args = ["eval", "tiny-m3", "--system", "scripted", "--limit", "1", "-o", str(out)]
    assert main(args) == 0
    captured = capsys.readouterr()
    printed = captured.out
    assert "tiny M3 (v0): 2 of 2 cells run" in printed
    # why each cell is analysed: a line of its own above the progress bar, not glued to it
    notices = [line for line in captured.err.replace("\r", "\n").splitlines()
               if "no complete analysis in" in line]
    assert len(notices) == 2 and all(n.startswith("no complete analysis in ") for n in notices)
    manifest = EvalManifest.model_validate_json((out / "eval.json").read_text())
    assert manifest.benchmarks == {"tiny-m3": "0"}
    assert manifest.system["name"] == "scripted"
    assert [(c.cell, c.status, c.subset) for c in manifest.cells] == [
        ("m3-qa-en-multi-gen", "done", "first 1"), ("m3-qa-en-multi-ref", "done", "first 1")]
    # scores per variant, and every number's file hashed
    for cell in manifest.cells:
        assert cell.results == f"{cell.run}/scores/m3/results.json"
        assert (out / cell.results).is_file() and cell.samples > 0
    assert all(sha256_file(out / path) == digest for path, digest in manifest.files.items())
    assert any(p.endswith(".wav") for p in manifest.files)
    table = (out / "tables" / "tiny-m3" / "table5.md").read_text()
    assert "scripted (Gen.)" in table and "scripted (Ref.)" in table
    assert set(manifest.tables["tiny-m3"]) >= {"tables/tiny-m3/table5.md",
                                              "tables/tiny-m3/table6.md"}
    # the measures only when asked: no second run, no other scoring, no measure table
    assert manifest.measures == [] and manifest.repeats == 1
    assert all(c.scorings == [] for c in manifest.cells) and not (out / "measures").exists()
    assert not any(Path(t).stem in ("realism", "stability") for t in manifest.tables["tiny-m3"])
    assert [p.name for p in (out / "cells/tiny-m3/m3-qa-en-multi-gen/scores").iterdir()] == ["m3"]

    frames, before = _frames(out), (out / "eval.json").read_bytes()
    assert all(n > 0 for n in frames.values())
    # what a kill while writing the tables, the report or eval.json leaves (a dead writer's
    # temporaries: pid 2**30 is above Linux's pid_max), and a live writer's, which is kept
    dead = 2**30
    stale = [out / f"tables/tiny-m3/.table5.tex.tmp-{dead}-x1", out / f".eval.json.tmp-{dead}-x2",
             out / f"report/.index.html.tmp-{dead}-x3"]
    live = out / f"tables/tiny-m3/.table6.md.tmp-{os.getpid()}-x4"
    for path in [*stale, live]:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("half")
    assert main(args) == 0  # everything resumes: no frame stepped, the same bundle
    assert not any(p.exists() for p in stale) and live.exists()
    live.unlink()
    (out / "report").rmdir()
    assert _frames(out) == frames
    assert (out / "eval.json").read_bytes() == before
    assert (out / "tables" / "tiny-m3" / "table5.md").read_text() == table


def test_a_system_without_teacher_forcing_gets_its_multi_ref_cells_skipped(
        tiny: Benchmark, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "bundle"
    assert main(["eval", "tiny-m3", "--system", "test_eval:UnforcedSilence", "--limit", "1",
                 "-o", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "1 of 2 cells run" in printed
    assert ("skipped m3-qa-en-multi-ref: unforced-silence: multi-ref needs teacher forcing"
            in printed)
    manifest = EvalManifest.model_validate_json((out / "eval.json").read_text())
    skipped = next(c for c in manifest.cells if c.protocol == "multi-ref")
    assert skipped.status == "skipped" and "teacher forcing" in (skipped.reason or "")
    assert not (out / skipped.run).exists()
    done = next(c for c in manifest.cells if c.protocol == "multi-gen")
    assert done.status == "done" and done.samples > 0 and done.failed == 0
    row = next(line for line in (out / "tables" / "tiny-m3" / "table5.md").read_text()
               .splitlines() if "unforced-silence" in line)
    assert "0.0" in row  # silence: a SHIFT TOR of 0, the cell measured
    note = (out / "tables" / "tiny-m3" / "cells.md").read_text()
    assert "| m3-qa-en-multi-ref | suite m3-qa-en (first 1) | multi-ref | yes | m3 | not run: " \
           "unforced-silence: multi-ref needs teacher forcing" in note


def test_an_unknown_benchmark_is_one_line(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", "nope", "--system", "scripted", "-o", str(tmp_path / "b")]) == 2
    err = capsys.readouterr().err
    assert "unknown benchmark 'nope'; known: m3, flexi, mtr" in err
    assert not (tmp_path / "b").exists()


def test_verify_holds_on_a_fresh_bundle_and_names_every_tampering(
        tiny: Benchmark, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "bundle"
    assert main(["eval", "tiny-m3", "--system", "scripted", "--limit", "1", "-o", str(out)]) == 0
    capsys.readouterr()
    system_temp = tmp_path / "system-temp"
    system_temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(system_temp))
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert main(["verify", str(out)]) == 0
    assert "all hold" in capsys.readouterr().out
    # verify scores its copies in the cache's scratch folder: the bundle and the system's
    # temporary folder are as they were
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    assert list(system_temp.iterdir()) == []

    cell = out / "cells" / "tiny-m3" / "m3-qa-en-multi-gen"
    wav = sorted((cell / "samples").rglob("*.wav"))[0]
    data = bytearray(wav.read_bytes())
    data[-2] ^= 0x10  # one sample of the last frame
    wav.write_bytes(bytes(data))
    rows = cell / "scores" / "m3" / "per_event.jsonl"
    rows.write_text(rows.read_text().replace('"tor ↑": 1', '"tor ↑": 0', 1))
    table = out / "tables" / "tiny-m3" / "table5.md"
    table.write_text(table.read_text().replace("100.0", "99.0", 1))
    (out / "cells" / "tiny-m3" / "m3-qa-en-multi-ref" / "metadata.jsonl").unlink()
    assert main(["verify", str(out)]) == 1
    found = capsys.readouterr().out
    rel = cell.relative_to(out).as_posix()
    assert f"{wav.relative_to(out).as_posix()}: changed" in found
    assert f"{rel}/scores/m3/per_event.jsonl: changed" in found
    assert f"{rel}/scores/m3/per_event.jsonl: differs from the cell scored again" in found
    assert "tables/tiny-m3/table5.md: changed" in found
    assert "tables/tiny-m3/table5.md: differs from the table written again" in found
    assert "cells/tiny-m3/m3-qa-en-multi-ref/metadata.jsonl: missing" in found
    assert "difference(s)" in found.splitlines()[-1]


def test_verify_refuses_a_manifest_whose_paths_leave_the_bundle(
        tiny: Benchmark, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``eval.json`` edited to name a run, a file or a table outside the bundle (``/etc``,
    ``../other``) is refused with one line naming the manifest and the field, and nothing is
    read or copied from there (verify copied all of ``/etc`` to score it again).  An
    unreadable results file and a missing run folder are listed among the differences (exit
    1), not the end of the check (exit 2, the rest unchecked), and a cell of a benchmark the
    bundle does not list is reported, not skipped."""
    out = tmp_path / "bundle"
    assert main(["eval", "tiny-m3", "--system", "scripted", "--limit", "1", "-o", str(out)]) == 0
    manifest = out / "eval.json"
    good = json.loads(manifest.read_text())

    def cell_run(value: str) -> Callable[[dict[str, Any]], None]:
        return lambda m: m["cells"][0].update(run=value)

    edits: dict[str, Callable[[dict[str, Any]], None]] = {
        "cells.0.run": cell_run("/etc"),
        "cells.0.run ": cell_run("../outside"),
        "files": lambda m: m["files"].update({"/etc/hostname": "0" * 64}),
        "tables.tiny-m3": lambda m: m["tables"]["tiny-m3"].append("../../evil.md"),
    }
    for where, edit in edits.items():
        bad = json.loads(json.dumps(good))
        edit(bad)
        manifest.write_text(json.dumps(bad))
        capsys.readouterr()
        assert main(["verify", str(out)]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and str(manifest) in err[0] and where.strip() in err[0], err
        assert "is not a path inside the bundle" in err[0]
    manifest.write_text(json.dumps(good))
    first = out / good["cells"][0]["results"]
    first.write_text("{")  # a cell's results unreadable, another cell's run gone: both listed
    shutil.rmtree(out / good["cells"][1]["run"])
    capsys.readouterr()
    assert main(["verify", str(out)]) == 1
    found = capsys.readouterr().out
    assert f"{good['cells'][0]['results']}: unreadable" in found
    assert f"{good['cells'][1]['run']}: missing" in found
    bad = json.loads(json.dumps(good))
    bad["cells"][0]["benchmark"] = "other"
    manifest.write_text(json.dumps(bad))
    capsys.readouterr()
    assert main(["verify", str(out)]) == 1
    assert "its benchmark 'other' is not among the bundle's benchmarks" in \
        capsys.readouterr().out


def test_verify_without_a_manifest_is_one_line(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["verify", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert f"{tmp_path / 'eval.json'}: cannot read the manifest" in err
    assert "Traceback" not in err


def test_the_python_api_does_what_the_command_does(tiny: Benchmark, tmp_path: Path) -> None:
    import duplexeval

    result = duplexeval.evaluate(load_system("scripted"), ["tiny-m3"], tmp_path / "api",
                                 subset=1, progress=False)
    assert isinstance(result, duplexeval.benchmarks.EvalResult)
    assert [c.results is not None for c in result.cells["tiny-m3"]] == [True, True]
    assert result.manifest == EvalManifest.model_validate_json(
        (tmp_path / "api" / "eval.json").read_text())
    report = duplexeval.verify(tmp_path / "api")
    assert report.ok and report.cells == 2
    run = duplexeval.open_run(result.cells["tiny-m3"][0].run_dir)
    assert run.read_config().system.name == "scripted"
    loaded = duplexeval.results.load(result.out / result.manifest.cells[0].results)
    assert loaded == result.cells["tiny-m3"][0].results


def test_a_suite_built_for_an_evaluation_shows_its_synthesis_when_progress_is_on(
        tiny: Benchmark, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A full suite not yet built takes minutes to synthesize (``mtr-en``: about ten on two
    cores): ``eval`` shows that build's bar instead of nothing; with the display off it stays
    off."""
    import duplexeval
    from duplexeval.benchmarks import _evaluate

    asked: list[bool] = []
    real = _evaluate.build_suite

    def build_suite(*args: object, **kwargs: bool) -> Path:
        asked.append(kwargs["progress"])
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(_evaluate, "build_suite", build_suite)
    for progress in (True, False):
        duplexeval.evaluate(load_system("silence"), ["tiny-m3"],
                            tmp_path / ("on" if progress else "off"), subset=1,
                            progress=progress)
    assert asked == [True, True, False, False]  # each cell's suite, each evaluation


def test_on_a_process_pool_the_analysis_overlaps_the_next_runs_with_the_same_files(
        tiny: Benchmark, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With a :class:`ProcessExecutor` a cell is analysed and scored in a thread while the pool
    runs the next cell: every cell's run, analysis and scores are the same bytes as one
    process's, and the stages' seconds still add up to no more than the wall time."""
    import threading
    import time

    from duplexeval.benchmarks import _evaluate
    from duplexeval.runs import ProcessExecutor
    from run_files import run_files

    scored_in: list[str] = []
    score_cell = _evaluate._score_cell

    def recording(*args: object, **kwargs: object) -> object:
        scored_in.append(threading.current_thread().name)
        return score_cell(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(_evaluate, "_score_cell", recording)

    system = load_system("scripted", {"jitter": "0.1"})
    alone = duplexeval_evaluate(system, tmp_path / "alone", None)
    start = time.perf_counter()
    with ProcessExecutor(2) as pool:
        pooled = duplexeval_evaluate(system, tmp_path / "pooled", pool)
    wall = time.perf_counter() - start
    assert scored_in[:2] == ["MainThread"] * 2  # one process: in turn
    assert all(name.startswith("eval-scoring") for name in scored_in[2:]) and len(scored_in) == 4
    for a, b in zip(alone.cells["tiny-m3"], pooled.cells["tiny-m3"], strict=True):
        mine = {k: v.replace(bytes(tmp_path / "alone"), bytes(tmp_path / "pooled"))
                for k, v in run_files(a.run_dir).items()}  # results.json names its run
        theirs = run_files(b.run_dir)
        mine.pop("config.json"), theirs.pop("config.json")  # names its executor
        assert mine.keys() == theirs.keys() and mine == theirs, a.cell.name
    assert pooled.seconds["analysis"] >= 0 and sum(pooled.seconds.values()) <= wall


def duplexeval_evaluate(system: System, out: Path, executor: object) -> EvalResult:
    from duplexeval.benchmarks import evaluate

    return evaluate(system, ["tiny-m3"], out, subset=1, progress=False,
                    executor=executor)  # type: ignore[arg-type]


KILLABLE = """
import sys
from duplexeval.benchmarks import BENCHMARKS
from duplexeval.cli import main
from test_eval import TINY

BENCHMARKS.add(TINY.name, TINY)
sys.exit(main(["eval", "tiny-m3", "--system", "scripted", "--limit", "1", "-o", sys.argv[1]]))
"""


@pytest.mark.slow
def test_a_killed_eval_resumes_to_the_tables_of_an_uninterrupted_one(
        tiny: Benchmark, tmp_path: Path) -> None:
    """SIGKILL once the first cell has finished, then the same command again: the tables are
    byte-identical to those of an evaluation that was never interrupted."""
    import os
    import signal
    import subprocess
    import sys
    import time

    whole = tmp_path / "whole"
    assert main(["eval", "tiny-m3", "--system", "scripted", "--limit", "1", "-o", str(whole)]) == 0
    killed = tmp_path / "killed"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(Path(__file__).parent), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.Popen([sys.executable, "-c", KILLABLE, str(killed)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    first = killed / "cells" / "tiny-m3" / "m3-qa-en-multi-gen" / "scores" / "m3" / "results.json"
    deadline = time.monotonic() + 120
    while not first.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert first.exists() and not (killed / "eval.json").exists()
    assert main(["eval", "tiny-m3", "--system", "scripted", "--limit", "1", "-o", str(killed)]) == 0
    tables = sorted((whole / "tables" / "tiny-m3").iterdir())
    assert len(tables) == 7  # table5 and table6 in md, csv, tex; cells.md
    for table in tables:
        again = killed / "tables" / "tiny-m3" / table.name
        assert again.read_bytes() == table.read_bytes(), table.name
    assert main(["verify", str(killed)]) == 0


@pytest.mark.slow
def test_a_second_eval_with_a_judge_makes_no_call(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """With a judge (a loopback OpenAI-compatible server) the content cells are judged once:
    the second invocation steps no frame and sends the judge nothing, and the manifest names
    the judge and its prompt versions."""
    from fake_judge import FakeJudge

    judged = Benchmark(name="tiny-judged", version="0", title="tiny judged", seed="a test",
                       cells=(Cell("m3-qa-en", EvalProtocol.MULTI_GEN, "m3"),),
                       write_tables=M3.write_tables)
    BENCHMARKS.add(judged.name, judged)
    try:
        out = tmp_path / "bundle"
        with FakeJudge() as server:
            args = ["eval", "tiny-judged", "--system", "scripted", "--limit", "1", "-o", str(out),
                    "--judge-url", server.base_url, "--judge-model", "fake-judge"]
            assert main(args) == 0
            calls, frames = len(server.requests), _frames(out)
            assert calls > 0
            assert main(args) == 0
            assert len(server.requests) == calls and _frames(out) == frames
        manifest = EvalManifest.model_validate_json((out / "eval.json").read_text())
        assert manifest.judge is not None and manifest.judge["model"] == "fake-judge"
        assert manifest.judge["prompts"]["m3.relevance"] >= 1
        assert (out / manifest.cells[0].run / "scores" / "m3" / "content.jsonl").is_file()
        # the answers are in the bundle: verify re-judges from them alone (the server is gone)
        assert manifest.judge_cache == "judge-cache.sqlite"
        assert "judge-cache.sqlite" in manifest.files
        capsys.readouterr()
        assert main(["verify", str(out)]) == 0
        (out / "judge-cache.sqlite").unlink()
        assert main(["verify", str(out)]) == 1
        report = capsys.readouterr().out
        assert "judge-cache.sqlite: missing" in report
    finally:
        BENCHMARKS.remove(judged.name)


def test_eval_html_writes_the_report_of_every_cell_that_ran(
        tiny: Benchmark, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "bundle"
    assert main(["eval", "tiny-m3", "--system", "test_eval:UnforcedSilence", "--limit", "1",
                 "-o", str(out), "--html"]) == 0
    index = out / "report" / "index.html"
    assert f"HTML report: {index}" in capsys.readouterr().out
    page = index.read_text(encoding="utf-8")
    assert "m3-qa-en-multi-gen" in page and "m3-qa-en-multi-ref" not in page  # skipped: absent
    assert main(["verify", str(out)]) == 0  # the report is a view: not a number's file


def test_an_out_that_is_a_file_is_refused_before_any_work(
        tiny: Benchmark, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "bundle"
    out.write_text("not a folder")
    assert main(["eval", "tiny-m3", "--system", "scripted", "--limit", "1", "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"{out}: not a folder" in err and "Traceback" not in err
    assert out.read_text() == "not a folder" and sorted(tmp_path.iterdir()) == [out]


@pytest.mark.parametrize("kind", ["missing", "file"])
def test_a_data_that_is_not_a_folder_is_refused_before_any_work(
        tiny: Benchmark, tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str) -> None:
    """``--data`` missing or a file: one line naming it, exit 2, no bundle (it used to skip
    every cell, exit 0 and write a bundle of nothing)."""
    data = tmp_path / "mine"
    if kind == "file":
        data.write_text("not a folder")
    out = tmp_path / "bundle"
    assert main(["eval", "tiny-m3", "--system", "scripted", "--data", str(data),
                 "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(data) in err and "Traceback" not in err
    assert not out.exists()


def test_eval_data_dir_replaces_the_suites_and_official_skips_a_benchmark_without_release(
        tiny: Benchmark, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--data DIR`` runs each cell on ``DIR/SUITE`` (here a copy of the suite's first
    dialogue, so the folder is not a bundled suite build), says so in cells.md and marks
    no cell §; ``--data official`` on an M3-style benchmark, which has no public release, is
    refused with the reason (a bundle of skipped cells with exit 0 said nothing), as is a
    ``--data`` folder that holds none of the suites, and nothing is written."""
    import shutil

    from duplexeval.suites import build_suite

    data = tmp_path / "mine"
    shutil.copytree(build_suite("m3-qa-en", limit=1, progress=False), data / "m3-qa-en")
    out = tmp_path / "bundle"
    assert main(["eval", "tiny-m3", "--system", "scripted", "--data", str(data),
                 "-o", str(out)]) == 0
    note = (out / "tables" / "tiny-m3" / "cells.md").read_text()
    assert f"| m3-qa-en-multi-gen | {data / 'm3-qa-en'} | multi-gen |" in note
    assert "§" not in (out / "tables" / "tiny-m3" / "table5.md").read_text()
    assert main(["verify", str(out)]) == 0
    capsys.readouterr()
    official = tmp_path / "official"
    assert main(["eval", "tiny-m3", "--system", "scripted", "--data", "official",
                 "-o", str(official)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "has no public release to download" in err[0], err
    (tmp_path / "empty").mkdir()
    assert main(["eval", "tiny-m3", "--system", "scripted", "--data", str(tmp_path / "empty"),
                 "-o", str(official)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no dataset at" in err[0], err
    assert not official.exists()


@pytest.mark.slow
def test_all_three_benchmarks_with_a_third_party_system_in_one_command(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``eval m3 flexi mtr --system module:Class`` (the first dialogue of each suite): every
    benchmark's tables, the multi-ref cells skipped with the reason (no teacher forcing), no
    M3 column holding a FLEXI or MTR number, and a bundle that verifies."""
    out = tmp_path / "bundle"
    assert main(["eval", "m3", "flexi", "mtr", "--system", "test_eval:UnforcedSilence",
                 "--limit", "1", "-o", str(out)]) == 0
    printed = capsys.readouterr().out
    assert printed.count("multi-ref needs teacher forcing") == 4 + 1 + 1
    manifest = EvalManifest.model_validate_json((out / "eval.json").read_text())
    assert set(manifest.benchmarks) == {"m3", "flexi", "mtr"}
    done = {(c.benchmark, c.cell) for c in manifest.cells if c.status == "done"}
    assert len(done) == 12 + 2 + 2  # interactive too in each (a frame-clock system)
    header = (out / "tables" / "m3" / "table5.md").read_text().splitlines()[0]
    domains = {cell.strip().split()[0] for cell in header.strip("|").split("|")[2:]}
    assert domains == {"Chat", "MT-QA"}  # no flexi or mtr column in M3's table
    assert "MTR-DuplexBench: conversational features" in (
        out / "tables" / "mtr" / "mtr.md").read_text()
    assert "## multi-gen" in (out / "tables" / "flexi" / "flexi.md").read_text()
    assert main(["verify", str(out)]) == 0


MEASURES = ["--measures", "realism,turnbench,barge-in-cost", "--repeats", "3",
            "--counterfactual"]
"""Every measure: realism, turnbench and barge-in cost on the cells' runs; three tries of
each sample, and each act's twin, in a second run per cell."""


@pytest.mark.slow  # every measure: a second run per cell with tries and twins (about a minute)
def test_eval_with_the_measures_tabulates_verifies_and_plots_them(
        tiny: Benchmark, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``scripted jitter=0.4`` (seeded jitter: tries differ) on the tiny benchmark with every
    measure: each cell scored again by ``realism`` and ``turnbench`` beside ``m3``, its second
    run (``measures/``) with 3 tries and twins scored by ``m3`` and ``turnbench``; a table per
    measure with its provenance; ``verify`` holds and names a changed table or score; the HTML
    report draws each measure."""
    out = tmp_path / "bundle"
    args = ["eval", "tiny-m3", "--system", "scripted", "--system-arg", "jitter=0.4",
            "--limit", "1", "-o", str(out), "--html", *MEASURES]
    assert main(args) == 0
    printed = capsys.readouterr().out
    assert "stability over 3 tries per event" in printed and "distributions: system vs" in printed
    manifest = EvalManifest.model_validate_json((out / "eval.json").read_text())
    assert manifest.measures == ["realism", "turnbench", "barge-in-cost", "stability",
                                 "counterfactual"] and manifest.repeats == 3
    for cell in manifest.cells:
        tries = f"measures/tiny-m3/{cell.cell}"
        assert [(s.variant, s.run) for s in cell.scorings] == [
            ("realism", cell.run), ("turnbench", cell.run), ("m3", tries), ("turnbench", tries)]
        assert all(s.results in manifest.files for s in cell.scorings)
    assert any(p.startswith("measures/") and p.endswith(".wav") for p in manifest.files)
    names = {Path(p).name for p in manifest.tables["tiny-m3"]}
    assert {f"{m}.{ext}" for m in ("realism", "turnbench", "barge-in-cost", "stability",
                                   "counterfactual") for ext in ("md", "csv")} <= names
    tables = out / "tables" / "tiny-m3"
    stability_md = (tables / "stability.md").read_text()
    assert "| scripted | m3-qa-en-multi-gen | m3 | TURN_SHIFT | smooth_turn_taking |" \
        in stability_md and "m3 variant, official code" in stability_md
    # twins are no tries: the BC row counts the plan's BC events, not their twins too
    plan = json.loads((out / "measures/tiny-m3/m3-qa-en-multi-gen/config.json").read_text())
    bc_events = sum(1 for s in (out / "measures/tiny-m3/m3-qa-en-multi-gen/samples")
                    .rglob("*_backchanneling_r0.json"))
    assert plan and f"| BC | user_backchanneling | {bc_events} | 3 |" in stability_md
    header = (tables / "barge-in-cost.csv").read_text().splitlines()[0]
    assert "penalty s per event ci95_low" in header and header.endswith("data,synthetic")
    assert "turnbench variant, paper" in (tables / "turnbench.md").read_text()
    assert "realism variant, paper" in (tables / "realism.csv").read_text()

    def stepped() -> dict[str, int]:
        return {p.parent.relative_to(out).as_posix(): json.loads(p.read_text())["frames_stepped"]
                for p in sorted(out.rglob("run_summary.json"))}

    frames, before = stepped(), (out / "eval.json").read_bytes()
    assert len(frames) == 4 and all(n > 0 for n in frames.values())
    assert main(args) == 0  # resumes: no frame stepped, every scoring the same
    assert stepped() == frames and (out / "eval.json").read_bytes() == before
    capsys.readouterr()
    assert main(["verify", str(out)]) == 0
    verified = capsys.readouterr().out
    assert "(and 8 measure scorings)" in verified and "all hold" in verified
    cost = tables / "stability.csv"
    cost.write_text(cost.read_text().replace("scripted", "scripted2", 1))
    rows = out / "measures/tiny-m3/m3-qa-en-multi-gen/scores/turnbench/per_event.jsonl"
    rows.write_text(rows.read_text().replace('"match ↑": 1', '"match ↑": 0', 1))
    assert main(["verify", str(out)]) == 1
    found = capsys.readouterr().out
    assert "tables/tiny-m3/stability.csv: differs from the table written again" in found
    assert ("measures/tiny-m3/m3-qa-en-multi-gen/scores/turnbench/per_event.jsonl: differs "
            "from the cell scored again") in found

    page = (out / "report" / "index.html").read_text()
    for title, figure in (("Distributional realism", "realism_distributions"),
                          ("TurnBench matching and barge-in cost", "bargein_cost"),
                          ("Repeated tries: pass@k, pass^k and stability", "pass_curves"),
                          ("Counterfactual pairs", "counterfactual_effects")):
        assert f"<h2>{title}</h2>" in page
        assert f"figures/{figure}.svg" in page and (out / "report/figures" /
                                                    f"{figure}.svg").is_file()
    assert "pass (TURN_SHIFT, m3)" in page

    table5 = (tables / "table5.md").read_bytes()
    assert main(args[:-len(MEASURES) - 1]) == 0  # again without the measures (nor --html)
    manifest = EvalManifest.model_validate_json((out / "eval.json").read_text())
    assert manifest.measures == [] and all(c.scorings == [] for c in manifest.cells)
    assert (tables / "table5.md").read_bytes() == table5  # the benchmark's own, unchanged
    assert not any((tables / f"{m}.md").exists() for m in ("realism", "stability"))


def test_eval_with_noise_twins_records_them_and_their_table_says_so(
        tiny: Benchmark, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--counterfactual noise``: the cells' second runs are planned with twins whose act is
    signal-correlated noise (the run's config and the twins' metadata say so), the manifest
    records the replacement, the counterfactual table is titled the effect of the act's
    content, and ``verify`` writes the same table again from the manifest."""
    out = tmp_path / "bundle"
    assert main(["eval", "tiny-m3", "--system", "scripted", "--limit", "1", "-o", str(out),
                 "--measures", "counterfactual", "--counterfactual", "noise"]) == 0
    manifest = EvalManifest.model_validate_json((out / "eval.json").read_text())
    assert manifest.measures == ["counterfactual"]
    assert manifest.counterfactual_replacement == "noise"
    run = out / "measures/tiny-m3/m3-qa-en-multi-gen"
    assert '"counterfactual_replacement": "noise"' in (run / "config.json").read_text()
    rows = [json.loads(line) for line in (run / "metadata.jsonl").read_text().splitlines()]
    assert any(r.get("counterfactual_replacement") == "noise" for r in rows)
    table = (out / "tables/tiny-m3/counterfactual.md").read_text()
    assert "# Counterfactual pairs: the effect of the user's act's content" in table
    assert "signal-correlated noise" in table
    capsys.readouterr()
    assert main(["verify", str(out)]) == 0
    assert "all hold" in capsys.readouterr().out


def test_measures_that_cannot_be_asked_are_one_line(
        tiny: Benchmark, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "b"
    base = ["eval", "tiny-m3", "--system", "scripted", "--limit", "1", "-o", str(out)]
    assert main([*base, "--measures", "realism,nope"]) == 2
    assert "--measures: unknown measure 'nope'; known: realism, turnbench" in \
        capsys.readouterr().err
    assert main([*base, "--measures", "stability"]) == 2
    assert "--measures stability needs --repeats K" in capsys.readouterr().err
    with pytest.raises(SystemExit) as stopped:
        main([*base, "--repeats", "0"])
    assert stopped.value.code == 2
    assert "argument --repeats: must be at least 1, got 0" in capsys.readouterr().err
    assert not out.exists()
    with pytest.raises(SystemExit):
        main(["eval", "--help"])
    shown = " ".join(capsys.readouterr().out.split())
    from duplexeval.benchmarks._measures import MEASURES

    assert all(f"{name} (" in shown for name in MEASURES)  # the help names every measure


def test_realism_without_reference_audio_is_a_skipped_measure_and_the_eval_goes_on(
        tiny: Benchmark, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A dataset whose reference channel is silent in every dialogue (as imported FDB and
    FLEXI data are: they ship no system audio) has no human timing for ``realism``: each cell
    says so in one line on stderr, in ``cells.md`` and in the manifest, gets no realism
    scoring, and the other measures, the tables and ``verify`` go on as usual."""
    import soundfile as sf

    from tiny_duplex import tiny_dataset

    data = tiny_dataset(tmp_path / "ds")
    for wav in (data / "audio").glob("*.wav"):
        x, rate = sf.read(str(wav), dtype="float32")
        x[:, 1] = 0.0
        sf.write(str(wav), x, rate, subtype="FLOAT")
    out = tmp_path / "bundle"
    assert main(["eval", "tiny-m3", "--system", "scripted", "--data", str(data), "-o", str(out),
                 "--measures", "realism,turnbench"]) == 0
    lines = [line for line in capsys.readouterr().err.splitlines() if "not measured" in line]
    assert len(lines) == 2 and all(
        line.startswith(f"tiny-m3 {cell}: realism not measured: the dataset's reference system "
                        "channel is silent in all 1 dialogue(s)")
        for line, cell in zip(lines, ("m3-qa-en-multi-gen", "m3-qa-en-multi-ref"), strict=True))
    manifest = EvalManifest.model_validate_json((out / "eval.json").read_text())
    for cell in manifest.cells:
        assert cell.status == "done" and list(cell.not_measured) == ["realism"]
        assert [s.variant for s in cell.scorings] == ["turnbench"]
        assert not (out / cell.run / "scores" / "realism").exists()
    note = (out / "tables" / "tiny-m3" / "cells.md").read_text()
    assert note.count("realism not measured: the dataset's reference system channel") == 2
    assert (out / "tables" / "tiny-m3" / "turnbench.md").is_file()
    assert main(["verify", str(out)]) == 0
    # score names the same reason in one line (exit 2) rather than compare with nothing
    run = out / manifest.cells[0].run
    assert main(["score", str(run), "--variant", "realism"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "realism variant needs the reference channel: the dataset's " \
        "reference system channel is silent" in err[0]
