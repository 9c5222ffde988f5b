"""Whisper's words do not depend on where it runs: any thread count, another process with the
thread variables a Dask nanny sets (``OMP_NUM_THREADS=1`` ...), because the CPU kernels are
pinned (:mod:`duplexeval.speech._kernels`) and the log-Mel product uses no BLAS
(:class:`~duplexeval.speech._whisper_model.BlasFreeMatrix`: on an AVX-512 CPU OpenBLAS's float32
product differs between 1 and 2 threads); and the kernel mode is part of the ASR settings."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from conftest import REPO, ModuleTemp, needs_extra
from duplexeval.errors import DuplexevalError
from duplexeval.speech import _kernels as kernels
from duplexeval.speech import _whisper_model as whisper_model
from duplexeval.speech._asr import Transcriber

pytestmark = needs_extra("asr")

# Transcribes eight English clips of the clip bank, each after 0.4 s of silence, as two
# channels (two Whisper windows or more), with `threads` CTranslate2 threads, and prints the words
# (run in a child process, so that each run loads its own CTranslate2).
TRANSCRIBE = """
import json, sys
import numpy as np
from duplexeval.speech._asr import Transcriber
from duplexeval.speech._clipbank import ClipBank
from duplexeval.timeline import Span
x, regions = np.zeros(0, np.float32), []
for clip in ClipBank.load().clips("en")[:8]:
    a = len(x) / 16000 + 0.4
    x = np.concatenate([x, np.zeros(6400, np.float32), clip.resampled(16000)])
    regions.append(Span(a, len(x) / 16000))
t = Transcriber(cpu_threads=int(sys.argv[1]))
words = t.transcribe_many([(x, 16000, regions), (x, 16000, None)], "en")
print(json.dumps([[(w.start, w.end, w.text) for w in ws] for ws in words]))
"""


def transcribe_in_child(threads: int, env: dict[str, str]) -> list[list[list[object]]]:
    done = subprocess.run([sys.executable, "-c", TRANSCRIBE, str(threads)], capture_output=True,
                          text=True, check=True, env={**os.environ, **env}, cwd=REPO)
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def model_cache(module_tmp: ModuleTemp) -> Path:
    root = module_tmp.mktemp("determinism-cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("DUPLEXEVAL_CACHE", str(root))
        whisper_model.packaged_model_dir()
    return root


@pytest.mark.slow
def test_words_are_the_same_for_any_thread_count_and_process(model_cache: Path) -> None:
    env = {"DUPLEXEVAL_CACHE": str(model_cache)}
    one = transcribe_in_child(1, env)
    assert sum(len(ws) for ws in one) > 20  # real speech was recognised
    assert transcribe_in_child(3, env) == one
    # what distributed's nanny puts in a worker's environment
    nanny = {**env, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
    assert transcribe_in_child(2, nanny) == one
    assert transcribe_in_child(1, {**env, "OPENBLAS_NUM_THREADS": "1"}) == one


def test_the_mel_product_is_a_plain_sum_of_products() -> None:
    """The filter bank's ``@`` equals numpy's product up to rounding and is the same in any
    thread configuration (it calls no BLAS)."""
    import numpy as np

    rng = np.random.default_rng(0)
    filters = rng.random((80, 201), dtype=np.float32)
    power = rng.random((201, 300), dtype=np.float32)
    mine = filters.view(whisper_model.BlasFreeMatrix) @ power
    assert type(mine) is np.ndarray and mine.dtype == np.float32
    assert np.allclose(mine, filters @ power, rtol=1e-5)
    batched = filters.view(whisper_model.BlasFreeMatrix) @ power[None]
    assert batched.shape == (1, 80, 300) and np.array_equal(batched[0], mine)


def test_the_kernel_mode_is_recorded_and_native_is_another_setting(
        monkeypatch: pytest.MonkeyPatch) -> None:
    portable = Transcriber().settings()["cpu_kernels"]
    assert portable == {"mode": "portable", "CT2_USE_MKL": "0", "CT2_FORCE_CPU_ISA": "AVX2",
                        "ONEDNN_MAX_CPU_ISA": "AVX2"}
    monkeypatch.setenv(kernels.MODE_VARIABLE, "native")
    monkeypatch.delenv("ONEDNN_MAX_CPU_ISA")
    native = Transcriber().settings()["cpu_kernels"]
    assert native["mode"] == "native" and native["ONEDNN_MAX_CPU_ISA"] is None
    monkeypatch.setenv(kernels.MODE_VARIABLE, "fastest")
    with pytest.raises(DuplexevalError, match="DUPLEXEVAL_CPU_KERNELS='fastest': expected"):
        Transcriber().settings()


def test_importing_duplexeval_speech_pins_before_ctranslate2_loads() -> None:
    env = {k: v for k, v in os.environ.items() if k not in kernels.PORTABLE}
    probe = ("import os, sys; import duplexeval.speech._asr; import ctranslate2; "
             "from duplexeval.speech._kernels import kernel_settings; "
             "print(os.environ['CT2_USE_MKL'], kernel_settings()['CT2_USE_MKL'])")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         check=True, env=env).stdout.split()
    assert out == ["0", "0"]
    late = ("import ctranslate2; from duplexeval.speech._kernels import kernel_settings; "
            "print(kernel_settings()['CT2_USE_MKL'])")
    out = subprocess.run([sys.executable, "-c", late], capture_output=True, text=True,
                         check=True, env=env).stdout
    assert out.startswith("unpinned: ctranslate2 was imported before")



@pytest.mark.slow
def test_worker_processes_give_the_words_of_one_process(model_cache: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DUPLEXEVAL_CACHE", str(model_cache))
    one = transcribe_in_child(2, {"DUPLEXEVAL_CACHE": str(model_cache)})
    scope: dict[str, object] = {}
    exec(TRANSCRIBE.replace("t = Transcriber(cpu_threads=int(sys.argv[1]))",
                            "t = Transcriber(processes=2)").replace("print(", "found = ("), scope)
    transcriber = scope["t"]
    assert isinstance(transcriber, Transcriber) and transcriber._pool is not None  # it was used
    transcriber.close()
    assert json.loads(str(scope["found"])) == one


def test_analysis_scope_and_processes_options() -> None:
    from duplexeval.cli import build_parser
    from duplexeval.cli._options import analysis_options

    args = build_parser().parse_args(["analyze", "RUN", "--scope", "timing",
                                      "--asr-processes", "3"])
    options = analysis_options(args)
    assert options.content_event_types == () and options.asr_processes == 3
    # the worker count is not a setting: it changes speed, not the analysis
    assert options.settings() == replace(options, asr_processes=1).settings()
    default = analysis_options(build_parser().parse_args(["analyze", "RUN", "--scope",
                                                          "default"]))
    assert default.content_event_types == ("TURN_SHIFT",)


@pytest.mark.parametrize(("variable", "value", "message"), [
    ("DUPLEXEVAL_CPU_KERNELS", "fast", "DUPLEXEVAL_CPU_KERNELS='fast': expected 'portable'"),
    ("DUPLEXEVAL_ASR_PROCESSES", "0", "DUPLEXEVAL_ASR_PROCESSES='0': expected a whole number"),
    ("DUPLEXEVAL_ASR_PROCESSES", "nan", "DUPLEXEVAL_ASR_PROCESSES='nan': expected a whole"),
])
def test_a_bad_environment_variable_is_refused_before_any_work(
        sample_voiced: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str], variable: str, value: str, message: str) -> None:
    from duplexeval.cli import main

    run = tmp_path / "run"
    assert main(["run", "--system", "silence", "--dataset", str(sample_voiced), "--protocol",
                 "single", "--out", str(run)]) == 0
    before = sorted(p.relative_to(run) for p in run.rglob("*"))
    capsys.readouterr()
    monkeypatch.setenv(variable, value)
    monkeypatch.setenv("DUPLEXEVAL_CACHE", str(tmp_path / "cache"))
    assert main(["analyze", str(run)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0]
    assert sorted(p.relative_to(run) for p in run.rglob("*")) == before
    assert not (tmp_path / "cache").exists()


UNGUARDED = """
import os, sys
print("top-level", os.getpid(), flush=True)
import numpy as np
from duplexeval.speech._asr import Transcriber
from duplexeval.speech._clipbank import ClipBank
clips = [c.resampled(16000) for c in ClipBank.load().clips("en")[:8]]
x = np.concatenate(clips * 4)  # over a minute: several Whisper windows, so the pool runs
words = Transcriber(processes=2).transcribe_many([(x, 16000, None), (x.copy(), 16000, None)],
                                                  "en")
print("words", sum(len(w) for w in words), flush=True)
"""


@pytest.mark.slow
def test_a_script_without_a_main_guard_is_not_run_again_by_the_asr_workers(
        model_cache: Path, tmp_path: Path) -> None:
    """The README's snippet has no ``if __name__ == "__main__"``: the pool's spawned workers
    must not import that script again (each would run the user's evaluation once more and die
    bootstrapping, breaking the pool), so its top level runs once and the words come back."""
    script = tmp_path / "unguarded.py"
    script.write_text(UNGUARDED)
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          cwd=tmp_path, timeout=300, env={**os.environ,
                                                          "DUPLEXEVAL_CACHE": str(model_cache)})
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.count("top-level") == 1
    assert int(done.stdout.split("words")[1]) > 10
