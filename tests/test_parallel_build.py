"""Suite builds in a process pool: the same bytes whatever the number of workers, and a build
that stopped part-way resumes from the dialogues it had finished (cached one by one)."""

from __future__ import annotations

from pathlib import Path

import pytest

from duplexeval.suites import _build as suite_build


def _files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.slow  # synthesizes two m3-qa-en dialogues three times
def test_one_and_two_workers_and_a_resumed_build_write_the_same_bytes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """jobs=1 vs jobs=2 (separate caches): every file byte-identical.  Then, in a third cache,
    a build that got only the first dialogue done (``limit=1``, as a killed build leaves its
    finished dialogues) is resumed as the two-dialogue build: the first dialogue's file is
    not rewritten, one more appears, and the build's bytes are the same."""
    builds = {}
    for jobs in (1, 2):
        monkeypatch.setenv("DUPLEXEVAL_CACHE", str(tmp_path / f"cache{jobs}"))
        builds[jobs] = _files(suite_build.build_suite("m3-qa-en", limit=2, progress=False,
                                                      quality=False, jobs=jobs))
    assert builds[1] == builds[2]
    assert sum(name.endswith(".wav") for name in builds[1]) == 2

    monkeypatch.setenv("DUPLEXEVAL_CACHE", str(tmp_path / "cache3"))
    suite_build.build_suite("m3-qa-en", limit=1, progress=False, quality=False, jobs=1)
    cache = tmp_path / "cache3" / "dialogues"
    (first,) = cache.glob("*.pkl")
    stamp = first.stat().st_ino, first.stat().st_mtime_ns
    resumed = _files(suite_build.build_suite("m3-qa-en", limit=2, progress=False,
                                             quality=False, jobs=2))
    assert resumed == builds[1]
    assert len(list(cache.glob("*.pkl"))) == 2  # one more dialogue built
    assert (first.stat().st_ino, first.stat().st_mtime_ns) == stamp  # the first not redone
