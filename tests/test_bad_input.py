"""The bad-input corpus: every command given bad or unusual input, as a new user would.

Each case is a command line run in-process (``duplexeval.cli.main``) in a copy of one small
tree made once per module::

    ds/        a one-dialogue dataset (the bundled sample-en QA dialogue, clip-bank voiced)
    run/       ``run --system silence`` on it (single, 2 s windows), analysed (energy VAD, no
               ASR) and scored
    m3/        an official M3 output folder (tests/fixtures/m3_outputs)
    spec.json  a synth spec (English)
    model.py   a ``command`` model whose output FAKE_MODE chooses (NaN, inf, silence, ...)

and, for each, the test checks:

- the exit code: 2 for bad input; for bad model output 1 (the sample fails) or 0 (the output is
  usable: silence, clipped, too long, which is cut);
- stderr: exactly one line for bad input, ``duplexeval: ...`` naming the file (and line) or the
  option; for a failed sample one line per failed sample naming it; never a traceback;
- the tree: nothing written or changed anywhere (a snapshot of every file and folder under the
  test's folder, ``$HOME`` included, before and after; the duplexeval cache is the one folder
  left out), and for model-output cases nothing outside the run's ``--out``.

A read-only output folder cannot be shown here: the tests run as root, who may write anyway
(``fileio.output_problem`` refuses it for other users).  Progress bars are off
are not counted as lines (an error glued to a bar would count as a bar, so the case fails);
:func:`test_an_error_line_starts_after_a_progress_bar` checks the layout with a bar.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from conftest import ModuleTemp
from duplexeval.cli import main

HERE = Path(__file__).parent
M3_FIXTURE = HERE / "fixtures" / "m3_outputs"
DIALOGUE = "sample_qa_0001"

MODEL = '''
import os, sys
import numpy as np, soundfile as sf
src, dst = sys.argv[1], sys.argv[2]
x, rate = sf.read(src, dtype="float32", always_2d=True)
mode = os.environ.get("FAKE_MODE", "echo")
y = x[:, 0].copy()
if mode == "nan":
    y[len(y) // 2:] = np.nan
elif mode == "inf":
    y[::7] = np.inf
elif mode == "silence":
    y[:] = 0
elif mode == "clipped":
    y = np.sign(y + 1e-3) * 4.0
elif mode == "short":
    y = y[: len(y) // 2]
elif mode == "long":
    y = np.concatenate([y, np.full(rate * 3, 0.25, np.float32)])
elif mode == "empty":
    y = y[:0]
if mode == "rate":
    sf.write(dst, y, 22050, subtype="FLOAT")
else:
    sf.write(dst, y, rate, subtype="FLOAT")
'''

SPEC = {"id": "t1", "language": "en", "domain": "task",
        "speakers": [{"id": "user", "channel": 0}, {"id": "system", "channel": 1}],
        "turns": [{"speaker": "user", "text": "Who wrote the novel Frankenstein?",
                   "answer": "Mary Shelley"},
                  {"speaker": "system", "text": "It was written by Mary Shelley."}]}

RUN = ("run", "--system", "silence", "--dataset", "ds", "--protocol", "single", "--window", "2",
       "--out", "out")
PLAN = ("plan", "ds", "--protocol", "single")
ANALYZE = ("analyze", "run", "--vad", "energy", "--asr", "none")
SCORE = ("score", "run", "--vad", "energy", "--asr", "none")
SCORE_M3 = ("score", "--m3", "m3", "-o", "m3scores")
WAV = f"run/samples/{DIALOGUE}/{DIALOGUE}_ch0_0004_pause_handling.wav"
DEEP = "[" * 100_000 + "]" * 100_000


# -- the tree --------------------------------------------------------------------------------
def _quiet_main(argv: list[str]) -> int:
    try:
        return main(argv)
    except SystemExit as exc:  # argparse
        return int(exc.code or 0)


@pytest.fixture(scope="module")
def base(sample_voiced: Path, module_tmp: ModuleTemp) -> Path:
    """The tree every case starts from (see the module docstring)."""
    root = module_tmp.mktemp("bad-input-base")
    ds = root / "ds"
    for sub in ("audio", "txt_align"):
        (ds / sub).mkdir(parents=True)
    line = next(x for x in (sample_voiced / "test.jsonl").read_text().splitlines()
                if DIALOGUE in x)
    (ds / "test.jsonl").write_text(line + "\n")
    shutil.copy(sample_voiced / "audio" / f"{DIALOGUE}.wav", ds / "audio")
    shutil.copy(sample_voiced / "txt_align" / f"{DIALOGUE}.txt", ds / "txt_align")
    if (sample_voiced / "dataset.json").exists():
        shutil.copy(sample_voiced / "dataset.json", ds)
    shutil.copytree(M3_FIXTURE, root / "m3")
    (root / "spec.json").write_text(json.dumps(SPEC))
    (root / "model.py").write_text(MODEL)
    cwd = Path.cwd()
    os.chdir(root)
    try:
        assert _quiet_main([*RUN[:-1], "run"]) == 0
        assert _quiet_main(list(ANALYZE)) == 0
        assert _quiet_main(list(SCORE)) == 0
    finally:
        os.chdir(cwd)
    return root


@pytest.fixture()
def tree(base: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh copy of the tree as the working directory, with ``$HOME`` inside the test's
    folder and the cache beside it (the one folder the snapshots leave out)."""
    work = tmp_path / "w"
    shutil.copytree(base, work, symlinks=True)
    (tmp_path / "home").mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("DUPLEXEVAL_CACHE", str(tmp_path / "cache"))
    return work


def snapshot(root: Path, skip: tuple[Path, ...] = ()) -> dict[str, tuple[str, str]]:
    """Every file and folder under ``root`` (but ``skip``): kind and content hash."""
    out: dict[str, tuple[str, str]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        dirnames[:] = [d for d in dirnames if here / d not in skip]
        for d in dirnames:
            out[str((here / d).relative_to(root))] = ("dir", "")
        for f in filenames:
            p = here / f
            if p in skip:
                continue
            kind = "link" if p.is_symlink() else "file"
            digest = hashlib.sha256(p.read_bytes()).hexdigest() if kind == "file" else \
                os.readlink(p)
            out[str(p.relative_to(root))] = (kind, digest)
    return out


# -- the cases -------------------------------------------------------------------------------
def _edit_line(path: str, change: Callable[[dict], None], line: int = 1) -> Callable[[Path], None]:
    def setup(root: Path) -> None:
        p = root / path
        lines = p.read_text().splitlines()
        record = json.loads(lines[line - 1])
        change(record)
        lines[line - 1] = json.dumps(record)
        p.write_text("\n".join(lines) + "\n")
    return setup


def _write(path: str, data: bytes | str) -> Callable[[Path], None]:
    def setup(root: Path) -> None:
        p = root / path
        if p.is_dir():
            shutil.rmtree(p)
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data.encode() if isinstance(data, str) else data)
    return setup


def _append(path: str, text: str) -> Callable[[Path], None]:
    def setup(root: Path) -> None:
        with (root / path).open("a") as f:
            f.write(text)
    return setup


def _make_dir(path: str) -> Callable[[Path], None]:
    def setup(root: Path) -> None:
        p = root / path
        p.unlink()
        p.mkdir()
        (p / "x").write_text("x")
    return setup


def _truncate(path: str) -> Callable[[Path], None]:
    def setup(root: Path) -> None:
        p = root / path
        size = p.stat().st_size
        os.truncate(p, 44 + (size - 44) // 2 // 6 * 6)  # header kept, half the frames
    return setup


def _remove(path: str) -> Callable[[Path], None]:
    return lambda root: (root / path).unlink()


def _old_record(path: str) -> Callable[[Path], None]:
    """A sample record of an older version (no ``audio_frames``), so the wav's length is not
    checked before the analysis reads it."""
    def setup(root: Path) -> None:
        p = root / path
        record = json.loads(p.read_text())
        del record["audio_frames"]
        p.write_text(json.dumps(record))
    return setup


def _float_audio(change: Callable[[np.ndarray], None],
                 frames: int | None = None) -> Callable[[Path], None]:
    def setup(root: Path) -> None:
        p = root / "ds" / "audio" / f"{DIALOGUE}.wav"
        x, rate = sf.read(p, dtype="float32", always_2d=True)
        change(x)
        sf.write(p, x[:frames], rate, subtype="FLOAT")
    return setup


def _set_nan(x: np.ndarray) -> None:
    x[1000:2000, 0] = np.nan


def _event_time(i: int, value: float) -> Callable[[dict], None]:
    def change(r: dict) -> None:
        r["events"]["0"][0]["time"][i] = value
    return change


def _meta(key: str, value: object) -> Callable[[dict], None]:
    def change(r: dict) -> None:
        if value is None:
            del r[key]
        else:
            r[key] = value
    return change


def _replace(path: str, old: str, new: str) -> Callable[[Path], None]:
    """The text ``old`` in ``path`` (once) replaced by ``new``: raw JSON that ``json.dumps``
    cannot write (a 5,000-digit integer, a lone surrogate's escape)."""
    def setup(root: Path) -> None:
        p = root / path
        text = p.read_text()
        assert old in text, (path, old)
        p.write_text(text.replace(old, new, 1))
    return setup


def _spec(change: Callable[[dict], None]) -> Callable[[Path], None]:
    def setup(root: Path) -> None:
        spec = json.loads(json.dumps(SPEC))
        change(spec)
        (root / "spec.json").write_text(json.dumps(spec))
    return setup


def _duplicate_first_line(path: str) -> Callable[[Path], None]:
    def setup(root: Path) -> None:
        p = root / path
        lines = p.read_text().splitlines()
        p.write_text("\n".join([*lines, lines[0]]) + "\n")
    return setup


def _edit_json(path: str, change: Callable[[dict], None]) -> Callable[[Path], None]:
    """``path``'s JSON changed and written back as Python writes it (NaN as a ``NaN``
    token)."""
    def setup(root: Path) -> None:
        p = root / path
        data = json.loads(p.read_text())
        change(data)
        p.write_text(json.dumps(data))
    return setup


def _first_aggregate(key: str, value: object) -> Callable[[dict], None]:
    return lambda results: results["aggregates"][0].update({key: value})


def _low_rate_wav(root: Path) -> None:
    sf.write(root / "low.wav", np.zeros((100, 2), np.float32), 1, subtype="FLOAT")


def _symlink_loop(path: str) -> Callable[[Path], None]:
    def setup(root: Path) -> None:
        (root / path).unlink()
        (root / path).symlink_to((root / path).name)  # itself
    return setup


def _rename(path: str, to: str) -> Callable[[Path], None]:
    return lambda root: (root / path).rename(root / to)


def _both(*setups: Callable[[Path], None]) -> Callable[[Path], None]:
    def setup(root: Path) -> None:
        for s in setups:
            s(root)
    return setup


@dataclass(frozen=True)
class Case:
    """A bad input: the command line, what to break first, and what the error line names."""

    id: str
    argv: tuple[str, ...]
    names: str
    """Text the one stderr line must contain: the file (and line), or the option."""
    setup: Callable[[Path], None] | None = None


ALIGN = f"ds/txt_align/{DIALOGUE}.txt"
LONG = "x" * 300

CASES = [
    # -- datasets (validate, plan, run, data stats, annotate) --------------------------------
    Case("dataset-missing", ("validate", "nope"), "nope"),
    Case("jsonl-not-utf8", ("validate", "ds"), "ds/test.jsonl",
         _write("ds/test.jsonl", b"\xff\xfe{")),
    Case("jsonl-bad-json", ("validate", "ds"), "ds/test.jsonl:2",
         _append("ds/test.jsonl", "{oops\n")),
    Case("jsonl-deep-nesting", ("plan", "ds", "--protocol", "single"), "ds/test.jsonl:2",
         _append("ds/test.jsonl", DEEP + "\n")),
    Case("record-not-object", ("validate", "ds"), "ds/test.jsonl:2",
         _append("ds/test.jsonl", "[1]\n")),
    Case("record-no-id", ("validate", "ds"), "ds/test.jsonl:1",
         _edit_line("ds/test.jsonl", _meta("id", None))),
    Case("id-too-long", ("validate", "ds"), "ds/test.jsonl:1",
         _edit_line("ds/test.jsonl", _meta("id", LONG))),
    Case("id-escapes", (*RUN,), "ds/test.jsonl:1",
         _edit_line("ds/test.jsonl", _meta("id", "../../escape"))),
    Case("event-time-nan", ("validate", "ds"), "ds/test.jsonl:1",
         _edit_line("ds/test.jsonl", _event_time(0, float("nan")))),
    Case("event-time-inf", (*PLAN,), "ds/test.jsonl:1",
         _edit_line("ds/test.jsonl", _event_time(1, float("inf")))),
    Case("event-time-negative", ("validate", "ds"), "ds/test.jsonl:1",
         _edit_line("ds/test.jsonl", _event_time(0, -5.0))),
    Case("event-time-huge", ("validate", "ds"), "ds/test.jsonl:1",
         _edit_line("ds/test.jsonl", _event_time(1, 1e300))),
    Case("event-time-5000-digits", ("validate", "ds"), "ds/test.jsonl:1",
         _replace("ds/test.jsonl", '"time": [', '"time": [' + "9" * 5000 + ", ")),
    Case("event-time-400-digits", (*PLAN,), "ds/test.jsonl:1",
         _replace("ds/test.jsonl", '"time": [', '"time": [' + "9" * 400 + ", ")),
    Case("id-lone-surrogate", ("validate", "ds"), "ds/test.jsonl:1",
         _replace("ds/test.jsonl", f'"{DIALOGUE}"', '"\\ud800"')),
    Case("event-kind-unknown", ("validate", "ds"), "ds/test.jsonl:1",
         _edit_line("ds/test.jsonl", lambda r: r["events"]["0"][0].update(event="SNEEZE"))),
    Case("domain-a-list", ("data", "stats", "ds"), "ds/test.jsonl:1",
         _edit_line("ds/test.jsonl", _meta("domain", ["qa"]))),
    Case("dataset-json-bad", ("validate", "ds"), "ds/dataset.json", _write("ds/dataset.json", "{")),
    Case("dataset-json-a-folder", (*PLAN,), "ds/dataset.json", _make_dir("ds/dataset.json")),
    Case("alignment-bad-line", ("validate", "ds"), ALIGN, _append(ALIGN, "0\tzero\t1.0\thi\n")),
    Case("alignment-nan", ("validate", "ds"), ALIGN, _append(ALIGN, "0\tnan\tnan\thi\n")),
    Case("split-missing", (*PLAN, "--split", "dev"), "ds/dev.jsonl"),
    Case("split-escapes", (*PLAN, "--split", "../escape"), "--split"),
    Case("audio-not-a-wav", RUN, f"ds/audio/{DIALOGUE}.wav",
         _write(f"ds/audio/{DIALOGUE}.wav", b"RIFF0000WAVEjunk")),
    Case("audio-nan", RUN, f"ds/audio/{DIALOGUE}.wav", _float_audio(_set_nan)),
    Case("audio-no-frames", ("validate", "ds"), f"ds/audio/{DIALOGUE}.wav",
         _float_audio(lambda x: None, frames=0)),
    Case("audio-nan-new-parents", (*RUN[:-1], "new/deeper/out"), f"ds/audio/{DIALOGUE}.wav",
         _float_audio(_set_nan)),
    Case("annotate-missing-source", ("annotate", "nope", "-o", "ann.jsonl"), "nope"),
    Case("annotate-audio-nan", ("annotate", f"ds/audio/{DIALOGUE}.wav", "-o", "ann.jsonl",
                                "--from", "audio"), f"ds/audio/{DIALOGUE}.wav",
         _float_audio(_set_nan)),
    Case("annotate-audio-1-hz", ("annotate", "low.wav", "-o", "ann.jsonl", "--from", "audio"),
         "low.wav", _low_rate_wav),
    Case("judge-url-not-http", (*SCORE, "--judge-url", "ftp://x", "--judge-model", "m"),
         "--judge-url"),
    Case("dataset-empty-name", ("run", "--system", "silence", "--dataset", "", "--protocol",
                                "single", "--out", "out"), "--dataset"),
    Case("variant-unknown", (*SCORE, "--variant", "nope"), "--variant"),
    Case("reference-distribution-without-peer", (*SCORE, "--variant", "flexi",
                                                 "--reference-distribution", "nope.json"),
         "--reference-distribution"),
    # -- numeric options ---------------------------------------------------------------------
    Case("window-inf", (*PLAN, "--window", "inf"), "--window"),
    Case("window-nan", (*PLAN, "--window", "nan"), "--window"),
    Case("window-negative", (*PLAN, "--window", "-1"), "--window"),
    Case("window-zero", (*RUN, "--window", "0"), "--window"),
    Case("window-subnormal", (*PLAN, "--window", "5e-324"), "--window"),
    Case("window-a-microsecond", (*RUN, "--window", "1e-6"), "--window"),
    Case("window-huge", (*PLAN, "--window", "1e300"), "--window"),
    Case("window-word", (*PLAN, "--window", "ten"), "--window"),
    Case("context-max-len-nan", (*PLAN, "--protocol", "multi-gen", "--context-max-len", "nan"),
         "--context-max-len"),
    Case("channels-2", (*PLAN, "--channels", "2"), "--channels"),
    Case("channels-twice", (*PLAN, "--channels", "0,0"), "--channels"),
    Case("seed-nan", (*RUN, "--seed", "nan"), "--seed"),
    Case("batch-size-zero", (*RUN, "--batch-size", "0"), "--batch-size"),
    Case("sample-rate-zero", (*RUN, "--system-arg", "sample_rate=0"), "sample_rate"),
    Case("sample-rate-huge", (*RUN, "--system-arg", "sample_rate=99999999"), "sample_rate"),
    Case("frame-size-zero", (*RUN, "--system-arg", "frame_size=0"), "frame_size"),
    Case("delay-nan", ("run", "--system", "scripted", *RUN[3:], "--system-arg", "delay=nan"),
         "delay"),
    Case("delay-negative", ("run", "--system", "scripted", *RUN[3:], "--system-arg",
                            "delay=-1"), "delay"),
    Case("jitter-inf", ("run", "--system", "scripted", *RUN[3:], "--system-arg", "jitter=inf"),
         "jitter"),
    Case("command-timeout-zero", ("run", "--system", "command", *RUN[3:], "--system-arg",
                                  "cmd=python model.py {input_wav} {output_wav}",
                                  "--system-arg", "timeout=0"), "timeout"),
    Case("cascade-latency-nan", ("run", "--system", "cascade", *RUN[3:], "--system-arg",
                                 "asr_latency=nan"), "asr_latency"),
    Case("cascade-asr-window-over-30", ("run", "--system", "cascade", *RUN[3:], "--system-arg",
                                        "asr_window=31"), "asr_window"),
    Case("cascade-asr-window-one", ("run", "--system", "cascade", *RUN[3:], "--system-arg",
                                    "asr_window=1"), "asr_window"),
    Case("cascade-asr-window-min-over-window", ("run", "--system", "cascade", *RUN[3:],
                                               "--system-arg", "asr_window_min=25"),
         "asr_window_min"),
    Case("system-arg-no-value", (*RUN, "--system-arg", "delay"), "--system-arg"),
    Case("system-unknown", ("run", "--system", "nope", *RUN[3:]), "nope"),
    Case("ipu-gap-nan", ("annotate", "ds", "-o", "ann.jsonl", "--ipu-gap", "nan"), "--ipu-gap"),
    Case("bc-max-inf", ("annotate", "ds", "-o", "ann.jsonl", "--bc-max", "inf"), "--bc-max"),
    Case("max-shift-overlap-negative", ("annotate", "ds", "-o", "ann.jsonl",
                                        "--max-shift-overlap", "-1"), "--max-shift-overlap"),
    Case("vad-threshold-db-zero", ("annotate", "ds", "-o", "ann.jsonl", "--vad-threshold-db",
                                   "0"), "--vad-threshold-db"),
    Case("vad-threshold-nan", (*ANALYZE, "--vad-threshold", "nan"), "--vad-threshold"),
    Case("vad-threshold-above-one", (*ANALYZE, "--vad-threshold", "1.5"), "--vad-threshold"),
    Case("asr-processes-zero", (*ANALYZE, "--asr-processes", "0"), "--asr-processes"),
    Case("latency-nan", (*SCORE, "--variant", "flexi", "--latency", "nan"), "--latency"),
    Case("judge-timeout-inf", (*SCORE, "--judge-timeout", "inf"), "--judge-timeout"),
    Case("judge-concurrency-zero", (*SCORE, "--judge-concurrency", "0"), "--judge-concurrency"),
    Case("tolerance-nan", ("accuracy", "run", "--tolerance", "nan"), "--tolerance"),
    Case("judge-temperature-nan", ("segment", "ds", "-o", "seg.jsonl", "--judge-temperature",
                                   "nan"), "--judge-temperature"),
    Case("k-zero", ("segment", "ds", "-o", "seg.jsonl", "-k", "0"), "-k"),
    Case("synth-sample-rate-zero", ("synth", "spec.json", "-o", "synth", "--sample-rate", "0"),
         "--sample-rate"),
    Case("compare-seed-inf", ("compare", "run", "run", "--seed", "inf"), "--seed"),
    Case("compare-seed-negative", ("compare", "run", "run", "--seed", "-1"), "--seed"),
    Case("run-seed-huge", (*RUN, "--seed", "9" * 23), "--seed"),
    Case("command-cmd-blank", ("run", "--system", "command", *RUN[3:], "--system-arg", "cmd= "),
         "cmd"),
    Case("asr-processes-huge", (*ANALYZE, "--asr-processes", "1000000"), "--asr-processes"),
    Case("judge-concurrency-huge", (*SCORE, "--judge-concurrency", "100000"),
         "--judge-concurrency"),
    Case("batch-size-huge", (*RUN, "--batch-size", "1000000000000"), "--batch-size"),
    Case("k-huge", ("segment", "ds", "-o", "seg.jsonl", "-k", "1000000000"), "-k"),
    Case("compare-json-too-long", ("compare", "run", "run", "--json", LONG), "--json"),
    Case("compare-json-a-folder", ("compare", "run", "run", "--json", "ds"),
         "ds: is a folder"),
    Case("split-a-symlink-loop", ("validate", "ds"), "ds/test.jsonl: a symbolic link",
         _symlink_loop("ds/test.jsonl")),
    Case("split-scores-nan", ("data", "split", "ds", "--from", "all", "--scores", "s.json"),
         "s.json", _both(_rename("ds/test.jsonl", "ds/all.jsonl"),
                         _write("s.json", '{"' + DIALOGUE + '": NaN}'))),
    Case("demo-data-missing", ("demo", "--quick", "--data", "nope"), "nope"),
    Case("demo-data-a-file", ("demo", "--quick", "--data", "spec.json"), "spec.json"),
    Case("eval-limit-zero", ("eval", "m3", "--system", "silence", "--limit", "0", "-o", "b"),
         "--limit"),
    # -- output paths ------------------------------------------------------------------------
    Case("run-out-a-file", (*RUN[:-1], "spec.json"), "spec.json"),
    Case("run-out-under-a-file", (*RUN[:-1], "spec.json/out"), "spec.json"),
    Case("run-out-too-long", (*RUN[:-1], LONG), "--out"),
    Case("score-out-a-file", (*SCORE, "-o", "spec.json"), "spec.json"),
    Case("score-m3-out-too-long", (*SCORE_M3[:-1], f"a/{LONG}"), "-o"),
    Case("report-out-a-file", ("report", "run", "-o", "spec.json"), "spec.json"),
    Case("synth-out-a-file", ("synth", "spec.json", "-o", "model.py"), "model.py"),
    Case("synth-split-escapes", ("synth", "spec.json", "-o", "synth", "--split", "../escape"),
         "--split"),
    Case("annotate-out-a-folder", ("annotate", "ds", "-o", "ds"), "ds"),
    Case("schema-out-under-a-file", ("results", "schema", "-o", "spec.json/schema.json"),
         "spec.json"),
    Case("run-out-the-current-folder", (*RUN[:-1], "."), "."),
    Case("run-out-a-dataset", (*RUN[:-1], "ds"), "ds"),
    Case("eval-out-a-dataset", ("eval", "m3", "--system", "silence", "--limit", "1",
                                "--protocol", "single", "-o", "ds"), "ds"),
    Case("annotate-out-its-input", ("annotate", "ds", "-o", "ds/test.jsonl"), "ds/test.jsonl"),
    Case("segment-out-its-input", ("segment", "ds", "-o", "ds/test.jsonl"), "ds/test.jsonl"),
    # -- run directories ---------------------------------------------------------------------
    Case("not-a-run", ("analyze", "ds", "--vad", "energy", "--asr", "none"),
         "ds/metadata.jsonl"),
    Case("metadata-missing-field", ANALYZE, "run/metadata.jsonl:1",
         _edit_line("run/metadata.jsonl", _meta("input_start", None))),
    Case("metadata-nan-time", ANALYZE, "run/metadata.jsonl:1",
         _edit_line("run/metadata.jsonl", _meta("input_start", float("nan")))),
    Case("metadata-not-utf8", SCORE, "run/metadata.jsonl", _write("run/metadata.jsonl", b"\xff\n")),
    Case("metadata-bad-json", ANALYZE, "run/metadata.jsonl:1",
         _write("run/metadata.jsonl", "{oops\n")),
    Case("metadata-deep-nesting", SCORE, "run/metadata.jsonl:1",
         _write("run/metadata.jsonl", DEEP + "\n")),
    Case("metadata-a-list", ANALYZE, "run/metadata.jsonl:1", _write("run/metadata.jsonl", "[]\n")),
    Case("config-a-folder", SCORE, "run/config.json", _make_dir("run/config.json")),
    Case("config-a-folder-on-resume", (*RUN[:-1], "run"), "run/config.json",
         _make_dir("run/config.json")),
    Case("run-other-configuration", (*RUN[:-4], "--window", "3", "--out", "run"),
         "run holds a run with a different configuration"),
    Case("wav-cut-short-analyze", ANALYZE, WAV, _truncate(WAV)),
    Case("wav-cut-short-score", SCORE, WAV, _truncate(WAV)),
    Case("wav-missing", ANALYZE, WAV, _remove(WAV)),
    Case("wav-garbage-mid-analysis", (*ANALYZE[:-1], "none", "--vad-threshold", "0.4"), WAV,
         _both(_write(WAV, b"RIFF0000WAVEjunk"), _old_record(WAV.replace(".wav", ".json")))),
    Case("m3-nan-input-start", SCORE_M3, "m3/asr/metadata_mfa.jsonl:1",
         _edit_line("m3/asr/metadata_mfa.jsonl", _meta("input_start", float("nan")))),
    Case("m3-inf-event-end", SCORE_M3, "m3/asr/metadata_mfa.jsonl:2",
         _edit_line("m3/asr/metadata_mfa.jsonl", _meta("event_end", float("inf")), 2)),
    Case("m3-not-utf8", SCORE_M3, "m3/asr/metadata_mfa.jsonl",
         _write("m3/asr/metadata_mfa.jsonl", b"\xff\n")),
    Case("m3-deep-nesting", SCORE_M3, "m3/asr/metadata_mfa.jsonl:1",
         _write("m3/asr/metadata_mfa.jsonl", DEEP + "\n")),
    Case("metadata-time-1e308", SCORE, "run/metadata.jsonl:1",
         _edit_line("run/metadata.jsonl", _meta("event_start", 1e308))),
    Case("m3-5000-digit-time", SCORE_M3, "m3/asr/metadata_mfa.jsonl:1",
         _replace("m3/asr/metadata_mfa.jsonl", '"input_start": ', '"input_start": ' + "9" * 5000
                  + ', "was": ')),
    Case("m3-transcript-key-absent", (*SCORE_M3, "--transcript-key", "nope"),
         "m3/asr/metadata_mfa.jsonl"),
    Case("m3-event-type-unknown", SCORE_M3, "m3/asr/metadata_mfa.jsonl:1",
         _edit_line("m3/asr/metadata_mfa.jsonl", _meta("event_type", "SNEEZE"))),
    Case("m3-line-twice", SCORE_M3, "m3/asr/metadata_mfa.jsonl:",
         _duplicate_first_line("m3/asr/metadata_mfa.jsonl")),
    Case("m3-input-reversed", SCORE_M3, "m3/asr/metadata_mfa.jsonl:1",
         _edit_line("m3/asr/metadata_mfa.jsonl", _meta("input_start", 1000.0))),
    Case("m3-metadata-empty", SCORE_M3, "m3/asr/metadata_mfa.jsonl",
         _write("m3/asr/metadata_mfa.jsonl", "")),
    Case("metadata-event-id-escapes", ANALYZE, "run/metadata.jsonl:1",
         _edit_line("run/metadata.jsonl", _meta("event_id", "../../x"))),
    Case("metadata-emptied", ANALYZE, "run/metadata.jsonl", _write("run/metadata.jsonl", "")),
    Case("config-window-nan", SCORE, "run/config.json",
         _edit_json("run/config.json", lambda c: c["config"]["plan"].update(window=math.nan))),
    Case("metadata-line-twice", ANALYZE, "run/metadata.jsonl:",
         _duplicate_first_line("run/metadata.jsonl")),
    Case("metadata-input-reversed", ANALYZE, "run/metadata.jsonl:1",
         _edit_line("run/metadata.jsonl", _meta("input_start", 1000.0))),
    Case("m3-missing", ("score", "--m3", "nope", "-o", "m3scores"), "nope"),
    # -- results files -----------------------------------------------------------------------
    Case("results-bad-json", ("report", "run", "-o", "tables"), "run/scores/m3/results.json",
         _write("run/scores/m3/results.json", "{")),
    Case("results-a-folder", ("report", "run", "-o", "tables"), "run/scores/m3/results.json",
         _make_dir("run/scores/m3/results.json")),
    Case("results-mean-nan", ("report", "run", "-o", "tables"), "run/scores/m3/results.json",
         _edit_json("run/scores/m3/results.json", _first_aggregate("mean", float("nan")))),
    Case("results-n-negative", ("report", "run", "-o", "tables"), "run/scores/m3/results.json",
         _edit_json("run/scores/m3/results.json", _first_aggregate("n", -5))),
    Case("results-wrong-shape", ("report", "run", "-o", "tables"),
         "run/scores/m3/results.json", _write("run/scores/m3/results.json", '{"a": 1}')),
    Case("results-not-utf8", ("report", "run", "-o", "tables"), "run/scores/m3/results.json",
         _write("run/scores/m3/results.json", b"\xff")),
    Case("results-deep-nesting", ("report", "run", "-o", "tables"),
         "run/scores/m3/results.json", _write("run/scores/m3/results.json", DEEP)),
    Case("verify-missing", ("verify", "nope"), "nope"),
    # -- specs -------------------------------------------------------------------------------
    Case("spec-bad-json", ("synth", "spec.json", "-o", "synth"), "spec.json",
         _write("spec.json", '{"id": ')),
    Case("spec-missing-turns", ("synth", "spec.json", "-o", "synth"), "spec.json",
         _write("spec.json", json.dumps({k: v for k, v in SPEC.items() if k != "turns"}))),
    Case("spec-unknown-language", ("synth", "spec.json", "-o", "synth"), "spec.json",
         _write("spec.json", json.dumps({**SPEC, "language": "xx"}))),
    Case("spec-missing", ("synth", "nope.json", "-o", "synth"), "nope.json"),
    Case("spec-not-utf8", ("synth", "spec.json", "-o", "synth"), "spec.json",
         _write("spec.json", b"\xff")),
    Case("spec-two-unknown-keys", ("synth", "spec.json", "-o", "synth"), "spec.json",
         _spec(lambda s: s.update(foo=1, bar=2))),
    Case("spec-voice-unknown", ("synth", "spec.json", "-o", "synth"), "spec.json",
         _spec(lambda s: s["speakers"][0].update(voice="nope"))),
    Case("spec-text-blank", ("synth", "spec.json", "-o", "synth"), "spec.json",
         _spec(lambda s: s["turns"][0].update(text="\n\t "))),
    Case("spec-background-gain-minus-infinity", ("synth", "spec.json", "-o", "synth"),
         "spec.json", _spec(lambda s: s.update(background=[
             {"channel": 0, "text": "Next train.", "gain_db": float("-inf")}]))),
]


BAR = re.compile(r"\[\d\d:\d\d(<[\d:?]+)?, ")
"""What every tqdm progress bar shows (``[00:00<00:01, 9.5sample/s]``)."""


def _run(argv: tuple[str, ...], capsys: pytest.CaptureFixture[str]) -> tuple[int, list[str]]:
    """The exit code and the lines on stderr, but the progress bars' (an error line glued to a
    bar counts as a bar, so it goes missing and the case fails)."""
    capsys.readouterr()
    code = _quiet_main(list(argv))
    err = capsys.readouterr().err
    return code, [line for line in err.splitlines() if line.strip() and not BAR.search(line)]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input_is_one_line_exit_2_and_changes_nothing(
        case: Case, tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    if case.setup is not None:
        case.setup(tree)
    top = tree.parent
    skip = (top / "cache",)
    before = snapshot(top, skip)
    code, lines = _run(case.argv, capsys)
    assert code == 2, lines
    assert len(lines) == 1, lines
    assert lines[0].startswith("duplexeval: ") and "Traceback" not in lines[0]
    assert case.names in lines[0], lines
    assert snapshot(top, skip) == before


@dataclass(frozen=True)
class ModelCase:
    """A ``command`` model's output: the exit code and, for failed samples, the reason."""

    mode: str
    code: int
    reason: str = ""


MODEL_CASES = [
    ModelCase("nan", 1, "non-finite"),
    ModelCase("inf", 1, "non-finite"),
    ModelCase("rate", 1, "at 22050 Hz, expected 16000 Hz"),
    ModelCase("empty", 1, "is empty"),
    ModelCase("silence", 0),
    ModelCase("clipped", 0),
    ModelCase("short", 0),
    ModelCase("long", 0),
]


@pytest.mark.parametrize("case", MODEL_CASES, ids=[c.mode for c in MODEL_CASES])
def test_bad_model_output_fails_its_samples_on_stderr(
        case: ModelCase, tree: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_MODE", case.mode)
    top = tree.parent
    skip = (top / "cache", tree / "out")
    before = snapshot(top, skip)
    argv = ("run", "--system", "command", "--system-arg",
            f"cmd={sys.executable} model.py {{input_wav}} {{output_wav}}", *RUN[3:])
    code, lines = _run(argv, capsys)
    assert code == case.code, lines
    assert not any("Traceback" in line for line in lines)
    assert snapshot(top, skip) == before  # nothing outside --out
    records = [json.loads(p.read_text()) for p in (tree / "out" / "samples").rglob("*.json")]
    assert records
    failed = [r["sample"]["event_id"] for r in records if r["status"] == "failed"]
    if case.code == 1:  # one line per failed sample, then their count
        assert len(failed) == len(records) == len(lines) - 1
        for event_id in failed:  # each failed sample named on stderr, with the reason
            assert any(event_id in line and case.reason in line for line in lines), lines
        assert f": {len(failed)} of {len(records)} samples failed" in lines[-1]
    else:
        assert not failed and not lines
        for wav in (tree / "out" / "samples").rglob("*.wav"):
            x, _ = sf.read(wav, dtype="float32")
            assert np.isfinite(x).all() and np.abs(x).max() <= 1.0


def test_the_corpus_has_at_least_60_cases() -> None:
    assert len(CASES) + len(MODEL_CASES) >= 60
    assert len({c.id for c in CASES}) == len(CASES)


def test_run_reruns_a_sample_whose_wav_was_cut_short(tree: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    assert _quiet_main(list(RUN)) == 0
    wav = tree / "out" / WAV.removeprefix("run/")
    whole = wav.read_bytes()
    _truncate(str(wav))(tree)
    code, lines = _run(RUN, capsys)
    assert code == 0 and not lines, lines
    assert wav.read_bytes() == whole  # the same sample again, byte for byte
    assert _quiet_main(["analyze", "out", "--vad", "energy", "--asr", "none"]) == 0
