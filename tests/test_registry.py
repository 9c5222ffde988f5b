"""Systems plug in through the ``duplexeval.systems`` entry-point group."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from duplexeval.cli import main
from duplexeval.systems import available_systems, load_system

PLUGIN = '''
import numpy as np
from duplexeval.systems import Capabilities, Session, StepOutput, System

class _Echo(Session):
    def step(self, user, force=None):
        return StepOutput(np.asarray(user, dtype=np.float32) * 0.5)

class EchoSystem(System):
    name = "echo"
    version = "2.1"
    capabilities = Capabilities(sample_rate=16000, frame_size=160)

    def open(self, spec):
        return _Echo()
'''


@pytest.fixture
def plugin_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A minimal installed distribution: a module and its dist-info with an entry point."""
    (tmp_path / "echo_plugin.py").write_text(PLUGIN, encoding="utf-8")
    info = tmp_path / "echo_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: echo-plugin\nVersion: 0.1\n",
                                   encoding="utf-8")
    (info / "entry_points.txt").write_text(
        "[duplexeval.systems]\necho = echo_plugin:EchoSystem\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    sys.modules.pop("echo_plugin", None)


def test_third_party_system_is_found_listed_and_loaded(
        plugin_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    systems = available_systems()
    assert systems["echo"].origin == "echo-plugin"
    system = load_system("echo")
    assert system.version == "2.1" and system.capabilities.frame_size == 160
    assert main(["systems"]) == 0
    out = capsys.readouterr().out
    assert "echo" in out and "echo-plugin" in out and "scripted" in out


def test_module_class_form_and_bad_arguments(capsys: pytest.CaptureFixture[str]) -> None:
    assert load_system("duplexeval.systems.builtin._replay:SilenceSystem").name == "silence"
    with pytest.raises(Exception, match="takes no argument"):
        load_system("silence", {"bogus": "1"})
    assert main(["run", "--system", "no.such.module:X", "--dataset", ".", "--protocol",
                 "single"]) == 2
    assert "cannot import" in capsys.readouterr().err


def test_yes_no_arguments_and_bearer_headers(monkeypatch: pytest.MonkeyPatch) -> None:
    from duplexeval.errors import DuplexevalError
    from duplexeval.systems import SystemFailure
    from duplexeval.systems.realtime import _credentials as credentials

    system = load_system("duplexcascade", {"url": "ws://127.0.0.1:9", "verify": "No"})
    assert system.bool_arg("verify", True) is False and system.bool_arg("absent", True) is True
    assert load_system("freeze-omni", {"verify": "YES"}).settings.verify is True
    with pytest.raises(DuplexevalError,
                       match=r"verify must be true or false \(1 or 0\), got 'maybe'"):
        load_system("freeze-omni", {"verify": "maybe"})
    with pytest.raises(DuplexevalError, match="truncate must be true or false"):
        load_system("openai-realtime", {"truncate": "2"})
    assert credentials.bearer("") == () and credentials.bearer(None) == ()
    monkeypatch.setenv("DUPLEXEVAL_TEST_TOKEN", "s3cret-value")
    assert credentials.bearer("DUPLEXEVAL_TEST_TOKEN") == (
        ("Authorization", "Bearer s3cret-value"),)
    monkeypatch.delenv("DUPLEXEVAL_TEST_TOKEN")
    with pytest.raises(SystemFailure, match=r"DUPLEXEVAL_TEST_TOKEN .* is not set"):
        credentials.bearer("DUPLEXEVAL_TEST_TOKEN")
