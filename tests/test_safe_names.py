"""Ids are never paths: dialogue ids, spec ids, suite and system names that would name a file
outside its folder (or a hidden one) are refused by every loader and writer, with one line
naming the file (and line) and exit code 2; and a run never writes outside its output folder."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest

from conftest import make_dataset, write_jsonl
from duplexeval._fileio import name_problem, safe_name
from duplexeval.cli import main
from duplexeval.data import Dialogue, load_dataset
from duplexeval.data._m3 import alignment_path, audio_path, write_dataset
from duplexeval.errors import DatasetInvalid, DuplexevalError
from duplexeval.events import Event, EventKind
from duplexeval.plan import EvalProtocol, PlanOptions, build_plan
from duplexeval.runs import execute_run
from duplexeval.suites import SUITES, Suite
from duplexeval.synth._spec import load_spec
from duplexeval.systems import load_system
from duplexeval.systems.builtin._replay import SilenceSystem
from test_validate import BAD_IDS

# ch0  hello there          okay
#      |=========|          |=====|
# ch1            |  |=====|
#                 hi
#      0.5      2.0 2.3   4.0 4.4  6.0 s
EVENTS = {"0": [("TURN", 0.5, 2.0), ("TURN_SHIFT", 4.0, 4.4), ("TURN", 4.4, 6.0)],
          "1": [("TURN_SHIFT", 2.0, 2.3), ("TURN", 2.3, 4.0)]}
WORDS = [(0, 0.5, 1.2, "hello"), (0, 1.2, 2.0, "there"), (1, 2.3, 4.0, "hi"),
         (0, 4.4, 6.0, "okay")]


def _record(dialogue_id: str) -> dict[str, object]:
    return {"id": dialogue_id, "events": {
        ch: [{"event": k, "time": [a, b]} for k, a, b in evs] for ch, evs in EVENTS.items()}}


def test_the_rule_by_hand() -> None:
    for bad, why in BAD_IDS:
        problem = name_problem(bad)
        assert problem is not None and problem.startswith(why), bad
        with pytest.raises(DuplexevalError, match="cannot be used in a file name") as info:
            safe_name(bad, "dialogue id")
        assert "\n" not in str(info.value)  # repr escapes control characters: one line
    assert name_problem("") == "is empty"
    for good in ("d1", "A0050_x-1.2", "りんご", "a.b", "with space", "m3-qa-en"):
        assert name_problem(good) is None and safe_name(good) == good


def _bad_dataset(root: Path, bad_id: str) -> Path:
    """A good dialogue on line 1 (with its files) and ``bad_id`` on line 2."""
    make_dataset(root, EVENTS, WORDS)
    write_jsonl(root / "test.jsonl", [_record("d1"), _record(bad_id)])
    return root


@pytest.mark.parametrize(("bad_id", "why"), BAD_IDS)
def test_loader_refuses_each_bad_form_with_file_and_line(tmp_path: Path, bad_id: str,
                                                         why: str) -> None:
    root = _bad_dataset(tmp_path / "d", bad_id)
    with pytest.raises(DatasetInvalid) as info:
        load_dataset(root)
    (line,) = info.value.lines()
    assert line.startswith(f"{root / 'test.jsonl'}:2: dialogue id {bad_id!r}") and why in line


@pytest.mark.parametrize("command", [
    ["plan", "{root}", "--protocol", "multi-gen"],
    ["run", "--system", "silence", "--dataset", "{root}", "--protocol", "single",
     "--out", "{out}"],
    ["data", "voice-bursts", "{root}", "-o", "{out}"],
])
def test_commands_refuse_a_bad_id_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                             command: list[str]) -> None:
    root = _bad_dataset(tmp_path / "d", "../../etc/evil")
    out = tmp_path / "out"
    argv = [a.format(root=root, out=out) for a in command]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"duplexeval: {root / 'test.jsonl'}:2: dialogue id '../../etc/evil' cannot "
                   "be used in a file name: contains a path separator (/ or \\)"]
    assert not out.exists()


def _tree(root: Path, skip: Path) -> dict[str, str]:
    """Every file under ``root`` except under ``skip``: relative path -> sha256 of its bytes."""
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file() and skip not in p.parents}


def test_a_run_never_writes_outside_its_output_folder(tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A dataset whose second dialogue is ``../../evil``, with its audio and alignment present
    where that id points (``work/evil.wav``, ``work/evil.txt``), so that nothing but the id
    check stands between the run and ``out/samples/../../evil/`` (= ``work/evil/``)."""
    work = tmp_path / "work"
    root = _bad_dataset(work / "ds", "../../evil")
    (work / "evil.wav").write_bytes((root / "audio" / "d1.wav").read_bytes())
    (work / "evil.txt").write_bytes((root / "txt_align" / "d1.txt").read_bytes())
    out = work / "out"
    monkeypatch.chdir(work)
    before = _tree(tmp_path, out)
    for protocol in ("single", "multi-gen", "multi-ref"):
        code = main(["run", "--system", "scripted", "--dataset", str(root), "--protocol",
                     protocol, "--out", str(out)])
        assert code == 2
        assert "dialogue id '../../evil' cannot be used in a file name" in \
            capsys.readouterr().err
    assert _tree(tmp_path, out) == before
    assert not (work / "evil").exists()
    assert not out.exists() or not any(out.rglob("*"))


def test_writers_refuse_a_bad_id_before_writing(tmp_path: Path) -> None:
    for build in (audio_path, alignment_path):
        with pytest.raises(DuplexevalError, match=re.escape("dialogue id '../x' cannot be used")):
            build(tmp_path, "../x")
    good = Dialogue("ok", (Event(EventKind.TURN, 0, 0.0, 1.0),))
    bad = Dialogue(".hidden", (Event(EventKind.TURN, 0, 0.0, 1.0),))
    out = tmp_path / "written"
    with pytest.raises(DuplexevalError, match=re.escape("dialogue id '.hidden'")):
        write_dataset(out, "test", [good, bad])
    assert not out.exists()


def test_execute_run_refuses_dialogues_made_in_code(tmp_path: Path) -> None:
    """A Dialogue built in code skips the loader; the run still refuses its id, writing
    nothing."""
    dataset = load_dataset(make_dataset(tmp_path / "d", EVENTS, WORDS))[0]
    dialogue = Dialogue("../escape", dataset.dialogues[0].events)
    plan = build_plan([dialogue], PlanOptions(protocol=EvalProtocol.SINGLE))
    assert plan.samples
    out = tmp_path / "run"
    with pytest.raises(DuplexevalError, match=re.escape("dialogue id '../escape'")):
        execute_run(SilenceSystem(), dataset, plan, out, progress=False)
    assert not out.exists()


def test_spec_ids_are_file_names(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = {"id": "..evil", "language": "en", "speakers": [{"id": "u", "channel": 0},
                                                           {"id": "s", "channel": 1}],
            "turns": [{"speaker": "u", "text": "hello there"}]}
    path = tmp_path / "evil.json"
    path.write_text(json.dumps(spec), encoding="utf-8")
    with pytest.raises(DatasetInvalid) as info:
        load_spec(path)
    (line,) = info.value.lines()
    assert line.startswith(f"{path}: id:") and "cannot be used in a file name" in line
    assert main(["synth", str(path), "-o", str(tmp_path / "out")]) == 2
    assert f"{path}: id:" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
    for good in ("m3_qa_en_0001", "d.1"):
        path.write_text(json.dumps({**spec, "id": good}), encoding="utf-8")
        assert load_spec(path).id == good


def test_suite_names_are_file_names() -> None:
    assert all(name_problem(name) is None for name in SUITES)
    with pytest.raises(DuplexevalError, match=re.escape("suite name '../x'")):
        Suite("../x", "escapes the cache", "en", "chat")


class EscapingSystem(SilenceSystem):
    """A system whose name would put its default run folder outside ``runs/``."""

    name = "../../escaped"


def test_system_names_are_file_names(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(DuplexevalError, match=re.escape("system name '../../escaped'")):
        load_system("test_safe_names:EscapingSystem")
    root = make_dataset(tmp_path / "d", EVENTS, WORDS)
    monkeypatch.chdir(tmp_path)
    before = _tree(tmp_path, tmp_path / "runs")
    # the default --out would be runs/../../escaped-single
    assert main(["run", "--system", "test_safe_names:EscapingSystem", "--dataset", str(root),
                 "--protocol", "single"]) == 2
    assert "system name '../../escaped' cannot be used in a file name" in \
        capsys.readouterr().err
    assert _tree(tmp_path, tmp_path / "runs") == before
    assert not (tmp_path / "runs").exists() and not (tmp_path.parent / "escaped-single").exists()
