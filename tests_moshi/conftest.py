"""Fixtures of the moshi-environment tests (``make test-moshi``): tiny random-weight
checkpoints (Moshi-shaped and PersonaPlex-shaped) and the ``moshi`` and ``personaplex``
systems loaded from them, on CPU with one thread (several threads on a shared 2-core machine
make each 80 ms step 30 times slower)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

# before torch loads: pins the CPU kernels (oneDNN's instruction set, read when torch loads) for
# this process and for the moshi servers it starts, so both sides of the wire compute alike (a
# server started after duplexeval.cli was imported would otherwise run other kernels than a
# process whose torch loaded first: Mimi's PCM then differs in the last bit)
import duplexeval.speech  # noqa: F401

torch = pytest.importorskip("torch", reason="the moshi tests run in .venv-moshi (make test-moshi)")
pytest.importorskip("moshi", reason="the moshi tests run in .venv-moshi (make test-moshi)")

from tiny import PERSONAPLEX_CONFIG, write_checkpoint  # noqa: E402

torch.set_num_threads(1)


@pytest.fixture(scope="session")
def tiny_args(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """``--system-arg`` values of a tiny random-weight checkpoint (configs + tokenizer)."""
    return write_checkpoint(tmp_path_factory.mktemp("tiny-moshi"))


@pytest.fixture(scope="session")
def tiny_system(tiny_args: dict[str, str]) -> Any:
    from duplexeval.systems import load_system

    return load_system("moshi", tiny_args)


@pytest.fixture(scope="session")
def tiny_folder(tiny_args: dict[str, str]) -> Path:
    return Path(tiny_args["config"]).parent


@pytest.fixture(scope="session")
def plex_args(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """``--system-arg`` values of a tiny random-weight PersonaPlex-shaped checkpoint."""
    return write_checkpoint(tmp_path_factory.mktemp("tiny-plex"), PERSONAPLEX_CONFIG)


@pytest.fixture(scope="session")
def plex_system(plex_args: dict[str, str]) -> Any:
    from duplexeval.systems import load_system

    return load_system("personaplex", {**plex_args, "text_prompt": "hello there"})


@pytest.fixture
def fork_batches(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The row count of every ``fork_batch`` call on a Moshi-family session: Moshi's and
    PersonaPlex's, which defines its own (a count of Moshi's alone stays empty for a
    PersonaPlex run), so a test can show that continuations really ran as batch rows."""
    from duplexeval.systems.adapters.moshi_inproc._session import MoshiSession
    from duplexeval.systems.adapters.personaplex_inproc._session import PersonaPlexSession

    calls: list[int] = []

    def counting(original: Any) -> Any:
        def fork_batch(self: Any, states: Any, seeds: Any) -> Any:
            calls.append(len(states))
            return original(self, states, seeds)
        return fork_batch

    for cls in (MoshiSession, PersonaPlexSession):
        monkeypatch.setattr(cls, "fork_batch", counting(cls.__dict__["fork_batch"]))
    return calls
