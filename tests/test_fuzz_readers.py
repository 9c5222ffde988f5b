"""Fuzzing every reader of user files with Hypothesis: the dataset JSONL, the word alignments,
``dataset.json``, the dialogue specs, the run files (``config.json``, ``metadata.jsonl``, a
sample record), the official M3 output folder and its transcripts, ``results.json``, and the
peers' own output folders re-scored by ``--peer`` (Full-Duplex-Bench and FLEXI transcripts and
event files, the M3 official folder scored end to end).

Inputs are random bytes, random text, random JSON values, and valid files with one field
replaced by a random JSON value (or removed), which reach past the first checks.  No reader
may raise anything but what the command line reports as an input error, naming the file: a
:class:`~duplexeval.errors.DuplexevalError`, or another of
:data:`~duplexeval.cli._failures.INPUT_ERRORS` tagged with its file (or an ``OSError`` that names
one).  The dataset checker (``check_dataset``) never raises at all.  Each reader gets
:data:`FAST` examples in the fast suite and :data:`SLOW` in the slow one (10,000 or more in
all).  The examples are derandomized (the same ones on every run), so that a CI run never
fails on an input the previous one did not try; a run that finds one fixes the reader (a
``channel`` of ``inf`` in a transcript was such a case) and the test keeps it.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import ModuleTemp
from duplexeval.analysis import read_transcript
from duplexeval.cli import INPUT_ERRORS
from duplexeval.data import Need, check_dataset
from duplexeval.data._m3 import read_alignment
from duplexeval.errors import DuplexevalError, location
from duplexeval.metrics._m3_metadata import read_m3_outputs
from duplexeval.results import load as load_results
from duplexeval.runs import RunDir
from duplexeval.synth._spec import load_spec

HERE = Path(__file__).parent
SAMPLE_EN = HERE.parent / "src" / "duplexeval" / "bundled" / "sample-en"
M3_FIXTURE = HERE / "fixtures" / "m3_outputs"
FAST, SLOW = 25, 1100
"""Examples per reader: the fast suite, the slow suite (18 readers: 19,800 in all)."""

BUDGETS = [pytest.param(FAST, id="fast"), pytest.param(SLOW, id="slow", marks=pytest.mark.slow)]

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                max_size=4),
    max_leaves=10)
"""Any JSON value, NaN and infinities included (Python's json reads and writes them)."""


def _mutations(valid: dict[str, Any]) -> st.SearchStrategy[Any]:
    """``valid`` with one top-level field replaced by any JSON value or removed, or with one
    field of a nested object or list item replaced."""
    keys = sorted(valid)

    def replace(key: str, value: Any, drop: bool) -> dict[str, Any]:
        out = dict(valid)
        if drop:
            out.pop(key)
        else:
            out[key] = value
        return out

    def nested(key: str, value: Any) -> dict[str, Any]:
        out = json.loads(json.dumps(valid))
        inner = out[key]
        if isinstance(inner, list) and inner and isinstance(inner[0], dict) and inner[0]:
            inner[0][sorted(inner[0])[0]] = value
        elif isinstance(inner, dict) and inner:
            inner[sorted(inner)[0]] = value
        else:
            out[key] = value
        return out

    return st.one_of(st.builds(replace, st.sampled_from(keys), JSON, st.booleans()),
                     st.builds(nested, st.sampled_from(keys), JSON))


def _contents(valid: dict[str, Any] | None = None, lines: bool = False) -> st.SearchStrategy[bytes]:
    """File contents: bytes, text, JSON values, and (given ``valid``) its mutations; with
    ``lines``, several such values one per line (JSON Lines)."""
    value = JSON if valid is None else st.one_of(JSON, _mutations(valid), _mutations(valid))
    one = value.map(lambda v: json.dumps(v))
    text = st.one_of(one, st.text(max_size=60), st.just("[" * 5000))
    if lines:
        text = st.lists(text, min_size=1, max_size=4).map("\n".join)
    return st.one_of(text.map(lambda t: t.encode("utf-8", "surrogatepass")),
                     st.binary(max_size=80))


def _handled(call: Callable[[], Any]) -> None:
    """``call()`` returns, or raises an input error the command line reports naming a file."""
    try:
        call()
    except DuplexevalError:
        pass
    except INPUT_ERRORS as exc:
        named = location(exc) is not None or (isinstance(exc, OSError) and exc.filename)
        assert named, f"{type(exc).__name__} names no file: {exc}"


def _fuzz(examples: int, contents: st.SearchStrategy[bytes], path: Path,
          check: Callable[[], Any]) -> None:
    """Write each example to ``path`` and ``check()``; the file is put back afterwards."""
    original = path.read_bytes() if path.exists() else None

    @settings(max_examples=examples, deadline=None, database=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(contents)
    def run(data: bytes) -> None:
        path.write_bytes(data)
        check()

    try:
        run()
    finally:
        if original is None:
            path.unlink(missing_ok=True)
        else:
            path.write_bytes(original)


def _first_line(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8").splitlines()[0])


@pytest.fixture(scope="module")
def folders(module_tmp: ModuleTemp, sample_voiced: Path) -> dict[str, Path]:
    """A dataset (sample-en, voiced), a run of it, and an official M3 output folder."""
    from duplexeval.cli import main

    root = module_tmp.mktemp("fuzz")
    shutil.copytree(sample_voiced, root / "ds")
    shutil.copytree(M3_FIXTURE, root / "m3")
    run = root / "run"
    assert main(["run", "--system", "silence", "--dataset", str(root / "ds"), "--protocol",
                 "single", "--window", "2", "--out", str(run)]) == 0
    assert main(["score", str(run), "--vad", "energy", "--asr", "none"]) == 0
    return {"ds": root / "ds", "run": run, "m3": root / "m3"}


@pytest.mark.parametrize("examples", BUDGETS)
def test_dataset_jsonl(folders: dict[str, Path], examples: int) -> None:
    path = folders["ds"] / "test.jsonl"
    valid = _first_line(SAMPLE_EN / "test.jsonl")
    _fuzz(examples, _contents(valid, lines=True), path,
          lambda: check_dataset(folders["ds"], audio=Need.OPTIONAL, alignment=Need.OPTIONAL))


@pytest.mark.parametrize("examples", BUDGETS)
def test_alignments(folders: dict[str, Path], examples: int) -> None:
    path = folders["ds"] / "txt_align" / "fuzzed.txt"
    words = st.lists(st.tuples(st.sampled_from(["0", "1", "2", "x", ""]),
                               st.sampled_from(["0.5", "nan", "-1", "inf", "1e400", "a", ""]),
                               st.sampled_from(["1.0", "0.2", "nan", "", "3"]),
                               st.text(max_size=6)), max_size=6)
    text = words.map(lambda rows: "".join("\t".join(r) + "\n" for r in rows))
    contents = st.one_of(text.map(str.encode), st.binary(max_size=80),
                         st.text(max_size=80).map(lambda t: t.encode("utf-8", "surrogatepass")))
    _fuzz(examples, contents, path, lambda: read_alignment(path, 30.0))


@pytest.mark.parametrize("examples", BUDGETS)
def test_dataset_json(folders: dict[str, Path], examples: int) -> None:
    path = folders["ds"] / "dataset.json"
    valid = json.loads((SAMPLE_EN / "dataset.json").read_text())
    _fuzz(examples, _contents(valid), path,
          lambda: check_dataset(folders["ds"], audio=Need.OPTIONAL, alignment=Need.OPTIONAL))


@pytest.mark.parametrize("examples", BUDGETS)
def test_specs(folders: dict[str, Path], examples: int) -> None:
    spec = next((HERE.parent / "src" / "duplexeval" / "suites" / "specs").rglob("*.json"))
    path = folders["ds"].parent / "spec.json"
    _fuzz(examples, _contents(json.loads(spec.read_text())), path,
          lambda: _handled(lambda: load_spec(path)))


@pytest.mark.parametrize("examples", BUDGETS)
def test_run_metadata(folders: dict[str, Path], examples: int) -> None:
    run = RunDir(folders["run"])
    valid = _first_line(run.metadata_path)
    _fuzz(examples, _contents(valid, lines=True), run.metadata_path,
          lambda: _handled(run.read_metadata))


@pytest.mark.parametrize("examples", BUDGETS)
def test_run_config(folders: dict[str, Path], examples: int) -> None:
    run = RunDir(folders["run"])
    valid = json.loads(run.config_path.read_text())
    _fuzz(examples, _contents(valid), run.config_path, lambda: _handled(run.read_config))


@pytest.mark.parametrize("examples", BUDGETS)
def test_sample_record(folders: dict[str, Path], examples: int) -> None:
    run = RunDir(folders["run"])
    record = next((folders["run"] / "samples").rglob("*.json"))
    sample_id, event_id = record.parent.name, record.stem
    valid = json.loads(record.read_text())
    _fuzz(examples, _contents(valid), record,
          lambda: _handled(lambda: (run.read_record(sample_id, event_id),
                                    run.finished(sample_id, event_id))))


@pytest.mark.parametrize("examples", BUDGETS)
def test_m3_output_metadata(folders: dict[str, Path], examples: int) -> None:
    path = folders["m3"] / "asr" / "metadata_mfa.jsonl"
    valid = _first_line(M3_FIXTURE / "asr" / "metadata_mfa.jsonl")
    _fuzz(examples, _contents(valid, lines=True), path,
          lambda: _handled(lambda: read_m3_outputs(folders["m3"])))


@pytest.mark.parametrize("examples", BUDGETS)
def test_m3_transcripts(folders: dict[str, Path], examples: int) -> None:
    path = folders["m3"] / "asr" / "mfa" / "fuzzed.mfa.json"
    valid = json.loads(next((M3_FIXTURE / "asr" / "mfa").glob("*.json")).read_text())
    _fuzz(examples, _contents(valid), path, lambda: _handled(lambda: read_transcript(path)))


@pytest.mark.parametrize("examples", BUDGETS)
def test_results_files(folders: dict[str, Path], examples: int) -> None:
    path = folders["run"] / "scores" / "m3" / "results.json"
    valid = json.loads(path.read_text())
    _fuzz(examples, _contents(valid), path, lambda: _handled(lambda: load_results(path)))


def test_a_transcript_with_an_infinite_channel_or_time_is_one_line(tmp_path: Path) -> None:
    """Found by fuzzing: ``"channel": Infinity`` raised OverflowError; a non-finite timestamp
    was read as given."""
    from duplexeval.analysis import read_transcript
    from duplexeval.errors import DuplexevalError

    path = tmp_path / "t.json"
    for segment in ('{"channel": Infinity, "timestamp": [0, 1]}',
                    '{"channel": 1, "timestamp": [0, NaN]}'):
        path.write_text('{"segments": [' + segment + ']}')
        with pytest.raises(DuplexevalError, match=f"{path}: segment 0"):
            read_transcript(path)


# --- peers' own output folders (re-scored by --peer) ---------------------------------------

@pytest.fixture(scope="module")
def peers(module_tmp: ModuleTemp) -> Path:
    """One valid folder of each fuzzed peer task (Full-Duplex-Bench, FLEXI), one sample each."""
    from fdb_folders import chunks, event
    from flexi_folders import pause_folder, turn_taking_folder

    root = module_tmp.mktemp("peers")
    event(root / "fdb-stt" / "1", "turn_taking.json", 2.0, 2.4)
    chunks(root / "fdb-stt" / "1", (1.8, 2.1), (2.1, 2.4), (2.4, 2.9))
    chunks(root / "fdb-pause" / "1", (1.0, 1.1), (1.1, 1.2), (1.2, 1.3), (1.3, 1.4))
    turn_taking_folder(root / "flexi-tt", "dialog_1", 5.0, [("Sure", 5.4, 5.7),
                                                            ("here", 5.8, 6.0)])
    pause_folder(root / "flexi-pause", "dialog_1", (2.0, 3.0), [("wait", 1.0, 1.5)],
                 [("ok", 3.5, 3.8)])
    return root


def _peer_check(score: Callable[[str, Path, Path, Any], Any], task: str, root: Path,
                out: Path) -> Callable[[], None]:
    """Score ``root`` as ``task`` into a fresh folder under ``out`` (one per example)."""
    from duplexeval.peers import PeerOptions

    count = [0]

    def check() -> None:
        count[0] += 1
        target = out / str(count[0])
        _handled(lambda: score(task, root, target, PeerOptions()))
        shutil.rmtree(target, ignore_errors=True)

    return check


PEER_CASES = [
    pytest.param("fdb", "smooth_turn_taking", "fdb-stt", "1/output.json", id="fdb-output"),
    pytest.param("fdb", "smooth_turn_taking", "fdb-stt", "1/turn_taking.json", id="fdb-event"),
    pytest.param("fdb", "pause_handling", "fdb-pause", "1/output.json", id="fdb-pause"),
    pytest.param("flexi", "turn_taking", "flexi-tt", "dialog_1/output.json", id="flexi-output"),
    pytest.param("flexi", "turn_taking", "flexi-tt", "dialog_1/turn_taking.json",
                 id="flexi-event"),
    pytest.param("flexi", "pause_handling", "flexi-pause", "dialog_1/pause.json", id="flexi-pause"),
    pytest.param("flexi", "pause_handling", "flexi-pause", "dialog_1/input.json", id="flexi-input"),
]
"""Peer, task, folder and the file in it that is fuzzed (the others stay valid)."""


@pytest.mark.parametrize("examples", BUDGETS)
@pytest.mark.parametrize(("peer", "task", "folder", "name"), PEER_CASES)
def test_peer_folders(peers: Path, tmp_path: Path, examples: int, peer: str, task: str,
                      folder: str, name: str) -> None:
    from duplexeval.peers.fdb._scorer import score_fdb
    from duplexeval.peers.flexi._scorer import score_flexi

    path = peers / folder / name
    valid = json.loads(path.read_text())
    contents = _contents(valid) if isinstance(valid, dict) else _contents(
        {"item": valid[0]} if isinstance(valid, list) and valid else None)
    scorer = score_fdb if peer == "fdb" else score_flexi
    _fuzz(examples, contents, path, _peer_check(scorer, task, peers / folder, tmp_path))


@pytest.mark.parametrize("examples", BUDGETS)
def test_m3_peer_folder(folders: dict[str, Path], tmp_path: Path, examples: int) -> None:
    """``--peer m3``: the official folder re-scored (its metadata fuzzed), outputs written."""
    from duplexeval.peers.m3._scorer import score_official

    path = folders["m3"] / "asr" / "metadata_mfa.jsonl"
    valid = _first_line(M3_FIXTURE / "asr" / "metadata_mfa.jsonl")
    count = [0]

    def check() -> None:
        count[0] += 1
        _handled(lambda: score_official(folders["m3"], tmp_path / str(count[0])))
        shutil.rmtree(tmp_path / str(count[0]), ignore_errors=True)

    _fuzz(examples, _contents(valid, lines=True), path, check)


def test_a_flexi_file_nested_too_deeply_skips_its_sample(tmp_path: Path) -> None:
    """Found by fuzzing: a ``pause.json`` of ``[`` x 5000 raised RecursionError naming no file;
    the pause evaluator now skips the sample with the reason, as it does for invalid JSON."""
    from duplexeval.peers.flexi._io import try_load_json

    path = tmp_path / "pause.json"
    path.write_text("[" * 5000)
    assert try_load_json(path) == (None, "pause.json is nested too deeply to read")
