"""The run directory's one owner: ``open_run`` reads back, typed, what a run wrote."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from duplexeval.cli import main
from duplexeval.errors import DuplexevalError
from duplexeval.runs import RunDir, open_run


def test_open_run_reads_what_the_run_wrote(sample_voiced: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert main(["run", "--system", "scripted", "--dataset", str(sample_voiced),
                 "--protocol", "multi-gen", "--out", str(out)]) == 0
    run = open_run(out)
    config = run.read_config()
    assert config.system.name == "scripted" and config.protocol == "multi-gen"
    assert config.system.oracle == [] and config.dataset.name == "sample-en"
    rows = run.read_metadata()
    assert rows and all(run.output_audio(r).is_file() for r in rows)
    record = run.read_record(rows[0].sample_id, rows[0].event_id)
    assert record is not None and record.status == "ok"
    trace = record.typed_trace()
    assert trace.frames is not None and trace.frames > 0
    assert trace.system_speech is not None  # scripted logs its speech, in dialogue seconds
    summary = run.read_summary()
    assert summary is not None and summary.samples == len(rows) and summary.failed == 0
    # the JSON on disk is what the models describe (keys as written, nothing lost)
    raw = json.loads(run.sample_files(rows[0].sample_id, rows[0].event_id).record.read_text())
    assert record.model_dump(exclude_unset=True) == raw


def test_open_run_refuses_what_is_not_a_run(tmp_path: Path) -> None:
    with pytest.raises(DuplexevalError, match="not a run directory"):
        open_run(tmp_path)
    (tmp_path / RunDir(tmp_path).config_path.name).write_text("{}")
    with pytest.raises(DuplexevalError, match=r"config\.json: config: Field required"):
        open_run(tmp_path)


def test_sample_files_never_leave_the_run(tmp_path: Path) -> None:
    with pytest.raises(DuplexevalError):
        RunDir(tmp_path).sample_files("../evil", "e1")
    with pytest.raises(DuplexevalError):
        RunDir(tmp_path).analysis().transcript("d1", "../../e1")
