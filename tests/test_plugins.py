"""Third-party plugins of every kind, found through entry points (:mod:`duplexeval.registry`).

A fake distribution ``duplexeval-plugin-demo`` is written into a folder on ``sys.path``: a
package with one item of each kind, and a ``.dist-info`` whose ``entry_points.txt`` names them
under the groups ``duplexeval.systems``, ``.variants``, ``.peers``, ``.recipes``,
``.tts_engines``, ``.suites`` and ``.benchmarks``.  Each registry must then list the item with the
distribution as its origin, load it, and serve it where the command line reads it.
"""

from __future__ import annotations

import importlib
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from duplexeval.benchmarks import BENCHMARKS
from duplexeval.cli import main
from duplexeval.data.recipes import RECIPES, recipe
from duplexeval.errors import DuplexevalError
from duplexeval.metrics import VARIANTS, get_variant
from duplexeval.peers import PEERS, get_peer
from duplexeval.registry import Registry
from duplexeval.speech._tts import TTS_ENGINES, load_engine
from duplexeval.suites import SUITES, get_suite
from duplexeval.systems import SYSTEMS, load_system

DIST = "duplexeval-plugin-demo"
PLUGIN = '''
import numpy as np
from pathlib import Path

from duplexeval.data.recipes import Recipe
from duplexeval.metrics.timing._m3 import M3Timing
from duplexeval.peers import PeerScorer
from duplexeval.speech._tts import TtsEngine, Utterance
from duplexeval.suites import Suite
from duplexeval.systems.builtin._replay import SilenceSystem


class QuietSystem(SilenceSystem):
    name = "plugin-quiet"


class StrictM3(M3Timing):
    name = "plugin-m3"


def _score(task, path, out, options):
    return {"task": task, "samples": 0}


PEER = PeerScorer(name="plugin-peer", tasks=("turn_taking",), score=_score,
                  description="a peer of the plugin")


def _arguments(parser):
    parser.add_argument("--greeting", default="hello")


def _run(args, staging):
    (staging / "note.txt").write_text(args.greeting)
    return f"{staging}: greeted"


RECIPE = Recipe("plugin-format", "the plugin's corpus", "a folder", _arguments, _run)


class ToneEngine(TtsEngine):
    name = "plugin-tone"
    language = "en"

    def voices(self):
        return ["a4"]

    def _synthesize(self, text, voice, speed):
        t = np.arange(int(0.1 * 16000 * len(text.split()))) / 16000
        return Utterance((0.1 * np.sin(2 * np.pi * 440 * t)).astype(np.float32), 16000)


SUITE = Suite("plugin-suite", "the plugin's suite", "en", "chat",
              specs=Path(__file__).parent / "specs")

from duplexeval.benchmarks import Benchmark, Cell
from duplexeval.benchmarks._m3 import M3
from duplexeval.plan import EvalProtocol

BENCH = Benchmark(name="plugin-bench", version="2", title="the plugin's benchmark", seed="none",
                  cells=(Cell("plugin-suite", EvalProtocol.MULTI_GEN, "plugin-m3"),),
                  write_tables=M3.write_tables)
'''
GROUPS = {
    "systems": "plugin-quiet = duplexeval_plugin_demo:QuietSystem",
    "variants": "plugin-m3 = duplexeval_plugin_demo:StrictM3",
    "peers": "plugin-peer = duplexeval_plugin_demo:PEER",
    "recipes": "plugin-format = duplexeval_plugin_demo:RECIPE",
    "tts_engines": "plugin-tone = duplexeval_plugin_demo:ToneEngine",
    "suites": "plugin-suite = duplexeval_plugin_demo:SUITE",
    "benchmarks": "plugin-bench = duplexeval_plugin_demo:BENCH",
}


@pytest.fixture
def plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "site"
    package = root / "duplexeval_plugin_demo"
    (package / "specs").mkdir(parents=True)
    (package / "__init__.py").write_text(textwrap.dedent(PLUGIN), encoding="utf-8")
    info = root / "duplexeval_plugin_demo-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {DIST}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("".join(
        f"[duplexeval.{group}]\n{line}\n\n" for group, line in GROUPS.items()))
    monkeypatch.syspath_prepend(str(root))
    importlib.invalidate_caches()
    yield root
    sys.modules.pop("duplexeval_plugin_demo", None)


def test_every_registry_lists_and_loads_its_plugin(plugin: Path) -> None:
    registries: dict[str, Registry[object]] = {
        "systems": SYSTEMS, "variants": VARIANTS, "peers": PEERS, "recipes": RECIPES,
        "tts_engines": TTS_ENGINES, "suites": SUITES, "benchmarks": BENCHMARKS}
    for group, registry in registries.items():
        name = GROUPS[group].split(" = ")[0]
        entry = registry.entries()[name]
        assert registry.group == f"duplexeval.{group}"
        assert (entry.origin, entry.target) == (DIST, GROUPS[group].split(" = ")[1])
        assert registry.get(name) is registry.get(name)  # loaded once

    assert load_system("plugin-quiet").name == "plugin-quiet"
    assert get_variant("plugin-m3").name == "plugin-m3"
    assert get_peer("plugin-peer").score("turn_taking", plugin, plugin, None) == {
        "task": "turn_taking", "samples": 0}
    assert recipe("plugin-format").help == "the plugin's corpus"
    spoken = load_engine("plugin-tone").synthesize("two words")
    assert spoken.sample_rate == 16000 and len(spoken.audio) == 3200
    assert np.abs(spoken.audio).max() > 0.09
    assert get_suite("plugin-suite").spec_folder() == plugin / "duplexeval_plugin_demo" / "specs"
    bench = BENCHMARKS.get("plugin-bench")
    assert (bench.version, bench.cells[0].variant) == ("2", "plugin-m3")


def test_the_command_line_lists_the_plugins(plugin: Path, tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["systems"]) == 0
    row = next(line for line in capsys.readouterr().out.splitlines()
               if line.startswith("plugin-quiet"))
    assert DIST in row
    assert main(["data", "list"]) == 0
    assert "plugin-suite" in capsys.readouterr().out
    out = tmp_path / "imported"
    assert main(["data", "import", "plugin-format", str(tmp_path), "-o", str(out),
                 "--greeting", "hi"]) == 0
    assert (out / "note.txt").read_text() == "hi"


def test_a_built_in_name_wins_and_a_broken_plugin_is_one_line(
        plugin: Path, tmp_path: Path) -> None:
    info = plugin / "duplexeval_plugin_demo-0.1.dist-info" / "entry_points.txt"
    info.write_text("[duplexeval.systems]\nsilence = duplexeval_plugin_demo:QuietSystem\n"
                    "broken = duplexeval_plugin_demo:Nothing\n"
                    "gone = no_such_module_here:System\n\n"
                    "[duplexeval.suites]\nnot-a-suite = duplexeval_plugin_demo:PEER\n")
    importlib.invalidate_caches()
    assert SYSTEMS.entries()["silence"].origin == "builtin"
    assert load_system("silence").name == "silence"
    with pytest.raises(DuplexevalError, match="system 'broken': duplexeval_plugin_demo has no "
                                              "Nothing"):
        SYSTEMS.get("broken")
    with pytest.raises(DuplexevalError, match="system 'gone': cannot import no_such_module"):
        SYSTEMS.get("gone")
    with pytest.raises(DuplexevalError, match=r"suite 'not-a-suite': .* is not a Suite"):
        SUITES.get("not-a-suite")
    with pytest.raises(DuplexevalError, match="unknown suite 'nope'; known: m3-qa-en, "):
        SUITES.get("nope")



def test_a_system_module_in_the_current_folder_is_found(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """``--system mybot:Bot`` with ``mybot.py`` in the current folder, without PYTHONPATH
    (the console script does not put the folder on the path)."""
    import sys

    (tmp_path / "mybot_here.py").write_text(
        "from duplexeval.systems.builtin._replay import SilenceSystem as Bot\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    from duplexeval.systems import load_system

    assert load_system("mybot_here:Bot").name == "silence"
