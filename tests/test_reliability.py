"""The guards behind the bad-input corpus (tests/test_bad_input.py), each shown on its own:
the CLI's one error line (after a progress bar; every input-error exception), strict JSON,
the umask's file mode, a refused run leaving nothing behind, and a run writing nothing under
``$HOME`` but the duplexeval cache."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import BaseModel, ValidationError
from tqdm import tqdm

from conftest import needs_extra
from duplexeval._fileio import (
    atomic_write_json,
    atomic_write_text,
    json_line,
    loads_json,
    remove_stale_temporaries,
    strict_json,
)
from duplexeval.cli import failure_lines, main, print_lines
from duplexeval.errors import located, number_problem
from duplexeval.timeline import is_time

REPO = Path(__file__).resolve().parents[1]


def test_an_error_line_starts_after_a_progress_bar(capsys: pytest.CaptureFixture[str]) -> None:
    bar = tqdm(total=10, desc="work", file=sys.stderr)  # left open, as a failed stage leaves it
    bar.update(3)
    print_lines(["ds/test.jsonl:3: bad"])
    err = capsys.readouterr().err
    assert "\nduplexeval: ds/test.jsonl:3: bad\n" in err  # the bar's line is ended first
    assert err.endswith("duplexeval: ds/test.jsonl:3: bad\n")


class _Row(BaseModel):
    start: float


def _validation_error() -> ValidationError:
    try:
        _Row.model_validate({"start": "soon"})
    except ValidationError as exc:
        return exc
    raise AssertionError("not raised")


@pytest.mark.parametrize(("exc", "line"), [
    (FileExistsError(17, "File exists", "out"), "out: File exists"),
    (PermissionError(13, "Permission denied", "run/config.json"),
     "run/config.json: Permission denied"),
    (OSError(36, "File name too long", "x" * 10), "xxxxxxxxxx: File name too long"),
    (IsADirectoryError(21, "Is a directory", "run/config.json"), "run/config.json: Is a directory"),
    (UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid start byte"),
     "not UTF-8 text (byte 0xff at offset 0)"),
    (json.JSONDecodeError("Expecting value", "{", 1), "not valid JSON (Expecting value: line 1 "
                                                      "column 2)"),
    (RecursionError("maximum recursion depth exceeded"), "nested too deeply to read"),
    (_validation_error(), "start: Input should be a valid number"),
])
def test_each_input_error_is_one_line(exc: BaseException, line: str) -> None:
    lines = failure_lines(exc)
    assert len(lines) == 1 and lines[0].startswith(line), lines


def test_a_reader_names_the_file_and_line_of_any_error() -> None:
    with pytest.raises(ValidationError) as info, located(Path("run/metadata.jsonl"), 7):
        _Row.model_validate({"start": "soon"})
    assert failure_lines(info.value) == ["run/metadata.jsonl:7: start: Input should be a valid "
                                         "number, unable to parse string as a number"]


def test_numbers_are_finite_and_in_range() -> None:
    assert number_problem(1.0, 0, 2) is None
    assert number_problem(math.nan) == "must be a finite number"
    assert number_problem(math.inf, 0) == "must be a finite number"
    assert number_problem(0.0, 0, low_open=True) == "must be greater than 0"
    assert number_problem(-1.0, 0) == "must be at least 0"
    assert number_problem(3.0, None, 2) == "must be at most 2"


def test_huge_json_integers_reach_the_finiteness_checks_as_floats() -> None:
    """Python's ``int()`` refuses more than 4,300 digits (``ValueError``) and an int past
    float's range overflows where it is made a float: the readers' JSON makes an integer of
    more than 300 digits ``inf``, which their checks then refuse; shorter ones (a 63-bit
    seed) stay exact."""
    seed = 2**63 - 1
    assert loads_json(f'{{"id": 5, "seed": {seed}, "t": -{"9" * 300}}}') == {
        "id": 5, "seed": seed, "t": -int("9" * 300)}
    assert loads_json("[" + "9" * 5000 + ", -" + "9" * 400 + "]") == [math.inf, -math.inf]
    assert is_time(1e6) and is_time(-3) and not is_time(1e308) and not is_time(True)


def test_a_fifo_for_a_split_file_is_refused_not_waited_on(tmp_path: Path) -> None:
    """``test.jsonl`` a FIFO: reading it would wait for a writer forever; ``validate`` says
    it is not a regular file."""
    ds = tmp_path / "ds"
    ds.mkdir()
    os.mkfifo(ds / "test.jsonl")
    done = subprocess.run([sys.executable, "-m", "duplexeval", "validate", str(ds)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [f"duplexeval: {ds / 'test.jsonl'}: not a "
                                                "regular file"]


@pytest.mark.parametrize("given", ["folder", "file"])
def test_a_fifo_for_official_metadata_is_refused_not_waited_on(tmp_path: Path,
                                                               given: str) -> None:
    """``score --m3`` of a folder whose ``metadata.jsonl`` is a FIFO, or of the FIFO itself:
    one line saying it is not a regular file (it said "no metadata found", or "no such
    folder"), exit 2, no output folder."""
    folder = tmp_path / "m3"
    folder.mkdir()
    fifo = folder / "metadata.jsonl"
    os.mkfifo(fifo)
    out = tmp_path / "scores"
    done = subprocess.run([sys.executable, "-m", "duplexeval", "score", "--m3",
                           str(folder if given == "folder" else fifo), "-o", str(out)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [f"duplexeval: {fifo}: not a regular file"]
    assert not out.exists()


def test_json_writers_are_strict(tmp_path: Path) -> None:
    atomic_write_json(tmp_path / "a.json", {"x": math.nan, "n": 1, "rows": [1.5, -math.inf]})
    text = (tmp_path / "a.json").read_text()
    assert json.loads(text, parse_constant=pytest.fail) == {  # a NaN/Infinity token fails
        "x": None, "x_reason": "not a number (NaN)", "n": 1, "rows": [1.5, None]}
    assert json.loads(json_line({"t": math.inf})) == {"t": None, "t_reason": "infinite (inf)"}
    same = {"a": [1.0, {"b": 2.0}]}
    assert strict_json(same) is same  # nothing to replace: not copied


def test_written_files_get_the_umask_mode(tmp_path: Path) -> None:
    old = os.umask(0o027)
    try:
        atomic_write_text(tmp_path / "a.txt", "x")
        os.umask(0o022)
        atomic_write_text(tmp_path / "b.txt", "x")
    finally:
        os.umask(old)
    assert (tmp_path / "a.txt").stat().st_mode & 0o777 == 0o640
    assert (tmp_path / "b.txt").stat().st_mode & 0o777 == 0o644


def test_a_killed_writers_temporary_files_are_removed_a_live_ones_kept(tmp_path: Path) -> None:
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    dead = tmp_path / "sub" / f".results.json.tmp-{int(gone.stdout)}-abc"
    live = tmp_path / f".results.json.tmp-{os.getpid()}-def"
    dead.parent.mkdir()
    dead.write_text("half")
    live.write_text("being written")
    assert remove_stale_temporaries(tmp_path) == 1
    assert not dead.exists() and live.exists()


def test_a_run_refused_after_it_started_leaves_nothing(
        sample_voiced: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    import duplexeval.runs._execution as execution
    from duplexeval.errors import DuplexevalError

    def refuse(*args: object, **kwargs: object) -> list[object]:  # after config.json is written
        assert (out / "config.json").is_file()
        raise DuplexevalError("refused after the start")

    out = tmp_path / "new" / "run"
    monkeypatch.setattr(execution, "plan_units", refuse)
    argv = ["run", "--system", "silence", "--dataset", str(sample_voiced), "--protocol",
            "single", "--window", "2", "--out", str(out)]
    assert main(argv) == 2
    assert "refused after the start" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []  # no config.json, .lock, run/ or new/
    monkeypatch.undo()
    assert main(argv) == 0  # the corrected command is not "a different configuration"


@pytest.mark.parametrize("edit", ["field", "hash"])
def test_a_hand_edited_run_config_is_refused_on_resume(
        sample_voiced: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        edit: str) -> None:
    """A finished run whose ``config.json`` was edited (a field of its ``config`` with the hash
    left as it was, or the hash alone) does not resume as if nothing had changed: the samples
    on disk would no longer be what the file says made them."""
    out = tmp_path / "run"
    argv = ["run", "--system", "silence", "--dataset", str(sample_voiced), "--protocol",
            "single", "--window", "2", "--out", str(out)]
    assert main(argv) == 0
    capsys.readouterr()
    path = out / "config.json"
    stored = json.loads(path.read_text())
    if edit == "field":
        stored["config"]["seed"] += 1
    else:
        stored["config_hash"] = "0" * 64
    path.write_text(json.dumps(stored))
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert ("changed: seed" in err) if edit == "field" else (
        f"{path}: config_hash does not match" in err)
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before


def test_scratch_folders_live_in_the_cache_and_are_removed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A command's scratch folder is under ``<cache>/scratch``, gone after the block (after an
    exception too); one a killed process left is removed by the next call, a live one's kept."""
    from duplexeval._cache import scratch_folder

    monkeypatch.setenv("DUPLEXEVAL_CACHE", str(tmp_path / "cache"))
    root = tmp_path / "cache" / "scratch"
    with scratch_folder("verify") as folder:
        (folder / "copy.wav").write_bytes(b"x")
        assert folder.parent == root and folder.name.startswith(f"verify.{os.getpid()}.")
    assert not folder.exists()
    with pytest.raises(RuntimeError), scratch_folder("command") as folder:
        raise RuntimeError("the command failed")
    assert not folder.exists()
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True).stdout.strip()
    orphan, live = root / f"verify.{dead}.abc", root / f"verify.{os.getppid()}.def"
    for left in (orphan, live):
        left.mkdir()
        (left / "copy.wav").write_bytes(b"x")
    with scratch_folder("verify"):
        pass
    assert not orphan.exists() and live.exists()


@needs_extra("asr")
def test_a_run_writes_nothing_under_home_but_the_cache(sample_voiced: Path,
                                                       tmp_path: Path) -> None:
    """run, analyze (Silero VAD: onnxruntime) and score in fresh processes whose ``$HOME`` is
    empty: afterwards it holds the duplexeval cache and nothing else (onnxruntime's telemetry
    would write ``~/.cache/Microsoft/``)."""
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items()
           if k not in ("DUPLEXEVAL_CACHE", "XDG_CACHE_HOME", "ORT_DISABLE_TELEMETRY")}
    env.update(HOME=str(home), PYTHONPATH=str(REPO / "src"))
    run = tmp_path / "run"
    for argv in (["run", "--system", "scripted", "--dataset", str(sample_voiced), "--protocol",
                  "single", "--window", "2", "--out", str(run)],
                 ["analyze", str(run), "--vad", "silero", "--asr", "none"]):
        done = subprocess.run([sys.executable, "-m", "duplexeval.cli", *argv], env=env,
                              cwd=tmp_path, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr
    written = [p.relative_to(home) for p in home.rglob("*") if p.is_file()]
    assert written and all(p.parts[:2] == (".cache", "duplexeval") for p in written), written


def test_security_md_states_the_counts_the_tests_run() -> None:
    """SECURITY.md's count column (the docs' Reliability page includes it) is what
    ``scripts/reliability_counts.py`` counts in the tests' parameter tables: a test added to a
    table, or a number typed by hand, fails here until ``--write`` is run."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("reliability_counts",
                                                  REPO / "scripts" / "reliability_counts.py")
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    text = (REPO / "SECURITY.md").read_text(encoding="utf-8")
    want = script.cells(script.counts())
    assert script.stated(text) == want
    assert script.render(text, script.counts()) == text
    typed = text.replace(want["tests/test_bad_input.py"], "98 inputs, 8 model outputs")
    assert script.stated(typed) != want  # a number typed by hand is caught
