"""``duplexeval.results``: the versioned reader (this version, older ones, newer ones refused
with one line), the paths it accepts, scoring a run first or refusing it, the exported JSON
Schema (and that the committed copy is current), audio by relative path only."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from duplexeval import results as reader
from duplexeval._fileio import atomic_write_json
from duplexeval.cli import main
from duplexeval.errors import DuplexevalError
from duplexeval.results import SCHEMA_VERSION, EventResult
from duplexeval.runs._directory import DatasetInfo, RunConfigFile, RunDir, SystemInfo
from test_report_tables import make_results

SCHEMA_COPY = Path(__file__).resolve().parents[1] / "schemas" / "results.schema.json"


def make_run(root: Path, system: str = "cascade", protocol: str = "multi-gen",
             scored: bool = True, **kwargs: object) -> Path:
    """A run directory with a config and (``scored``) a results file; nothing else."""
    run = RunDir(root)
    run.root.mkdir(parents=True)
    run.write_config(RunConfigFile(
        config={}, config_hash="x", system=SystemInfo(name=system), protocol=protocol, seed=0,
        dataset=DatasetInfo(path="/data/x", name="x", language="en", domain="chat",
                            content_hash="h1")))
    if scored:
        results = make_results(system, 0.8, 1.0, protocol=protocol, **kwargs)  # type: ignore[arg-type]
        atomic_write_json(run.scores().results, results.model_dump(mode="json"))
    return root


def test_load_accepts_a_file_a_scores_folder_and_a_run_directory(tmp_path: Path) -> None:
    run = make_run(tmp_path / "run")
    scores = RunDir(run).scores()
    for path in (run, scores.root, scores.results, str(run)):
        results = reader.load(path)
        assert results.schema_version == SCHEMA_VERSION == 7
        assert results.source.system == "cascade"


def test_newer_version_is_refused_in_one_line_naming_the_file(tmp_path: Path) -> None:
    run = make_run(tmp_path / "run")
    file = RunDir(run).scores().results
    data = json.loads(file.read_text())
    file.write_text(json.dumps({**data, "schema_version": SCHEMA_VERSION + 1}))
    with pytest.raises(DuplexevalError) as info:
        reader.load(run)
    message = str(info.value)
    assert "\n" not in message and str(file) in message
    assert f"version {SCHEMA_VERSION + 1} is newer" in message


@pytest.mark.parametrize("version", [1, 2])
def test_older_versions_are_read_and_filled_from_the_run(tmp_path: Path, version: int) -> None:
    run = make_run(tmp_path / "run", protocol="multi-ref")
    file = RunDir(run).scores().results
    data = json.loads(file.read_text())
    for event in data["events"]:
        del event["audio"]
    del data["source"]["protocol"], data["source"]["dataset"]
    if version == 1:
        del data["content"]
    file.write_text(json.dumps({**data, "schema_version": version}))
    results = reader.load(file)
    assert results.schema_version == SCHEMA_VERSION
    assert results.source.protocol == "multi-ref"  # from the run's config
    assert results.source.dataset is not None and results.source.dataset.content_hash == "h1"
    assert results.events[0].audio is None


@pytest.mark.parametrize(("content", "message"), [
    ("{", "not valid JSON"),
    ("[]", "expected a JSON object"),
    ('{"schema_version": "x"}', "schema_version 'x'"),
    ('{"schema_version": 3, "source": {}}', "source.kind: Field required"),
])
def test_bad_files_are_one_line_naming_the_file(tmp_path: Path, content: str,
                                                message: str) -> None:
    file = tmp_path / "r.json"
    file.write_text(content)
    with pytest.raises(DuplexevalError) as info:
        reader.load(file)
    assert "\n" not in str(info.value) and str(file) in str(info.value)
    assert message in str(info.value)


def test_a_run_without_scores_is_refused_or_scored_first(tmp_path: Path) -> None:
    run = make_run(tmp_path / "run", scored=False)
    with pytest.raises(DuplexevalError, match=r"not scored .*duplexeval score"):
        reader.load_scored(run)
    calls = []

    def scorer(path: Path) -> None:
        calls.append(path)
        results = make_results("cascade", 0.5, 1.0)
        atomic_write_json(RunDir(path).scores().results, results.model_dump(mode="json"))

    scored = reader.load_scored(run, scorer)
    assert calls == [run] and scored.results.source.system == "cascade"
    assert scored.judged() == [] and scored.offline() == []
    with pytest.raises(DuplexevalError, match="neither a results file"):
        reader.load_scored(tmp_path)


def test_the_committed_json_schema_is_current() -> None:
    """Regenerate with ``PYTHONPATH=src python scripts/write_results_schema.py``."""
    assert SCHEMA_COPY.read_text(encoding="utf-8") == reader.json_schema_text()
    schema = json.loads(SCHEMA_COPY.read_text(encoding="utf-8"))
    assert schema["properties"]["schema_version"]["const"] == SCHEMA_VERSION
    assert "audio" in schema["$defs"]["EventResult"]["properties"]


def test_results_schema_command_prints_or_writes(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["results", "schema"]) == 0
    assert json.loads(capsys.readouterr().out) == reader.json_schema()
    out = tmp_path / "s.json"
    assert main(["results", "schema", "-o", str(out)]) == 0
    assert out.read_text(encoding="utf-8") == reader.json_schema_text()


def test_audio_is_a_relative_path_never_embedded() -> None:
    """The results model has no field that could hold audio data, and the scorer keeps only a
    relative wav path (absolute ones are dropped)."""
    from duplexeval.metrics._score_outputs import _audio

    assert _audio({"output_audio_path": "samples/d1/e1.wav"}) == "samples/d1/e1.wav"
    assert _audio({"output_audio_path": "/abs/e1.wav"}) is None
    assert _audio({}) is None
    assert EventResult.model_fields["audio"].annotation == (str | None)


def test_scores_are_kept_per_variant_and_a_run_names_its_own(tmp_path: Path) -> None:
    """Scores live in ``scores/VARIANT/``: a run scored by one variant reads as it, by several
    as its m3 scores (several without m3: one line naming them), and a scored run knows its run
    directory and whether it is the truth's."""
    run = make_run(tmp_path / "run", protocol="multi-gen")
    m3 = RunDir(run).scores().results
    assert m3 == run / "scores" / "m3" / "results.json" and m3.is_file()

    original = json.loads(m3.read_text())

    def add(variant: str, truth: bool = False) -> Path:
        data = json.loads(json.dumps(original))
        data["variant"]["name"] = variant
        file = RunDir(run).scores(truth, variant).results
        atomic_write_json(file, data)
        return file

    add("mtr")
    assert reader.load(run).variant.name == "m3"  # several: the m3 scores
    assert reader.load(run / "scores" / "mtr").variant.name == "mtr"
    scored = reader.load_scored(run / "scores" / "mtr")
    assert scored.run_dir == run and not scored.truth
    m3.unlink()
    assert reader.load(run).variant.name == "mtr"  # one scoring: that one
    add("fdb-v1")
    with pytest.raises(DuplexevalError, match="scored by several variants \\(fdb-v1, mtr\\)"):
        reader.load(run)
    truth = reader.load_scored(add("m3", truth=True).parent.parent)  # scores-truth/
    assert truth.truth and truth.run_dir == run and truth.files.root.name == "m3"


def test_a_version_6_file_reads_without_stability(tmp_path: Path) -> None:
    """Schema 7 added ``stability``: a version-6 file (no such key) reads with ``None``."""
    run = make_run(tmp_path / "run")
    file = RunDir(run).scores().results
    data = json.loads(file.read_text())
    data.pop("stability", None)
    file.write_text(json.dumps({**data, "schema_version": 6}))
    results = reader.load(file)
    assert results.schema_version == SCHEMA_VERSION and results.stability is None


def test_a_strict_json_reason_beside_a_null_value_is_read_into_info() -> None:
    """strict_json writes a NaN value as null with ``{key}_reason`` beside it (the demo's FLEXI
    user-backchannel JSD on an item without backchannels); reading it back keeps the numbers
    numbers and the reason in ``info["reasons"]``."""
    from duplexeval._fileio import strict_json
    from duplexeval.results import EventResult

    row = {"event_id": "e", "sample_id": "s", "event_type": "BC", "language": "en",
           "domain": "chat", "dimension": "d", "values": {"JSD": float("nan"), "n": 2.0},
           "extras": {}, "info": {}}
    event = EventResult.model_validate(strict_json(row))
    assert event.values == {"JSD": None, "n": 2.0}
    assert event.info["reasons"]["JSD"].startswith("not a number")


def test_an_aggregate_with_a_strict_json_reason_reads() -> None:
    from duplexeval._fileio import strict_json
    from duplexeval.results import AggregateRow

    written = strict_json({"metric": "JSD", "n": 0, "mean": float("nan")})
    assert written["mean_reason"].startswith("not a number")
    assert AggregateRow._drop_reasons(written) == {"metric": "JSD", "n": 0, "mean": None}
