"""``data download NAME`` against a loopback hub: a stdlib HTTP server on 127.0.0.1 that speaks
the part of the Hugging Face Hub's API that ``huggingface_hub.snapshot_download`` (2.4) calls
for a dataset repository::

    GET       /api/datasets/{repo}/revision/{rev}        {"id", "sha", "siblings"}
    GET       /api/datasets/{repo}/tree/{commit}         [{"type": "file", "path", "size", "oid"}]
    HEAD/GET  /datasets/{repo}/resolve/{commit}/{path}   X-Repo-Commit, ETag, Content-Length
                                                         (LFS files, here the audio: a 302 to
                                                         another host name with X-Linked-Etag
                                                         and X-Linked-Size)

and serves tiny fake releases laid out as the importers read them (plus files they do not read,
which must never be asked for).  No X-Xet-* header is sent, and Xet is off anyway.  Every test
sets HOME and the cache to temporary folders; nothing reaches the internet.
"""

from __future__ import annotations

import fnmatch
import hashlib
import io
import json
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit

import numpy as np
import pytest
import soundfile as sf

from duplexeval.cli import main
from duplexeval.data import Need, load_dataset
from duplexeval.data.recipes._download import RELEASES, official_dataset, official_root
from duplexeval.errors import DuplexevalError

RATE = 16000
REPO = Path(__file__).resolve().parents[1]


# -- the fake releases ---------------------------------------------------------------------------

def _wav(seconds: float, spans: list[tuple[float, float]], fmt: str = "WAV",
         channels: int = 1) -> bytes:
    """A tone over each ``(start, end)`` (on channel 0), silence elsewhere."""
    x = np.zeros((round(seconds * RATE), channels), dtype=np.float32)
    for a, b in spans:
        t = np.arange(round(a * RATE), round(b * RATE))
        x[t, 0] = 0.3 * np.sin(2 * np.pi * 220 * t / RATE)
    buf = io.BytesIO()
    sf.write(buf, x, RATE, format=fmt)
    return buf.getvalue()


def _json(obj: object) -> bytes:
    return json.dumps(obj).encode()


def _chunks(*words: tuple[str, float, float]) -> bytes:
    return _json({"text": " ".join(w for w, _, _ in words),
                  "chunks": [{"text": w, "timestamp": [a, b]} for w, a, b in words]})


def flexi_release() -> dict[str, bytes]:
    """Two FLEXI scenario folders (a turn-taking and a pause dialog) and files not read."""
    query = [("What", 0.5, 0.9), ("is", 1.0, 1.2), ("rain", 1.3, 2.0)]
    pause = [("I", 0.5, 1.0), ("think", 1.1, 2.0), ("so", 3.0, 3.5)]
    return {
        "turn_taking/dialog_1/input.wav": _wav(4.0, [(a, b) for _, a, b in query]),
        "turn_taking/dialog_1/input.json": _chunks(*query),
        "turn_taking/dialog_1/turn_taking.json": _json([{"timestamp": [2.0, 4.0]}]),
        "turn_taking/dialog_1/output.wav": _wav(4.0, []),
        "pause_handing/dialog_1/input.wav": _wav(5.0, [(a, b) for _, a, b in pause]),
        "pause_handing/dialog_1/input.json": _chunks(*pause),
        "pause_handing/dialog_1/pause.json": _json({"timestamp": [2.0, 3.0]}),
        "README.md": b"# FLEXI\n",
    }


def fdb_release() -> dict[str, bytes]:
    """FDB v1.0: a turn-taking and a pause sample, one context.wav that is not read."""
    return {
        "v1_0/candor_turn_taking/1/input.wav": _wav(4.0, [(0.2, 1.5)]),
        "v1_0/candor_turn_taking/1/transcription.json": _json([
            {"speaker": 1, "item": [{"text": "is", "timestamp": [0.2, 0.6]},
                                    {"text": "this", "timestamp": [0.7, 1.5]}]}]),
        "v1_0/candor_turn_taking/1/turn_taking.json": _json([{"text": "[TURN-TAKING]",
                                                              "timestamp": [2.0, 2.4]}]),
        "v1_0/synthetic_pause_handling/1/input.wav": _wav(4.0, [(0.5, 2.0), (3.0, 3.4)]),
        "v1_0/synthetic_pause_handling/1/pause.json": _json([{"text": "[PAUSE]",
                                                              "timestamp": [2.1, 2.9]}]),
        "v1_0/synthetic_pause_handling/1/context.wav": _wav(1.0, []),
    }


def mtr_release() -> dict[str, bytes]:
    """One dialogue-quality clip (stereo MP3) with its rounds, and files not read."""
    turns = [{"start": 0.5, "end": 1.5}, {"start": 3.0, "end": 4.0}]
    return {
        "data/Dialogue_Quality/clip1.mp3": _wav(6.0, [(0.5, 1.5), (3.0, 4.0)], "MP3", 2),
        "data/Scenarios_encoding/dialogue_quality/semantic_turned_time_v3.jsonl":
            _json({"id": "clip1", "filtered_turn": turns, "continuation_info": []}) + b"\n",
        "data/Safety/safety_data.json": _json([]),
        "code/Eval/eval.py": b"print()\n",
    }


def _lfs(path: str) -> bool:
    """Audio is stored with LFS in the fake repositories (as on the hub)."""
    return path.endswith((".wav", ".mp3"))


MAKERS = {"flexi": flexi_release, "fdb-v1": fdb_release, "mtr": mtr_release}


# -- the loopback hub ----------------------------------------------------------------------------

class FakeHub:
    """Repositories by id (``files``), every request seen (``requests``: method, path), and
    failures to inject: ``status`` answers every request, ``missing`` paths are 404s."""

    def __init__(self) -> None:
        self.repos: dict[str, dict[str, bytes]] = {}
        self.requests: list[tuple[str, str]] = []
        self.agents: list[str] = []
        self.status: int | None = None
        self.missing: set[str] = set()
        hub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                hub.answer(self, body=True)

            def do_HEAD(self) -> None:
                hub.answer(self, body=False)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.cdn = f"http://localhost:{self.server.server_address[1]}"
        """LFS files are served from here: another host name for the client."""
        self.blobs: dict[str, tuple[str, bytes]] = {}
        self.downloaded: list[str] = []
        """The repository path of every file body sent (from the hub or the CDN)."""
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def commit(self, repo: str) -> str:
        """A repository's commit: a hash of its files, so new contents are a new commit."""
        files = self.repos[repo]
        return hashlib.sha1(_json({p: hashlib.sha1(d).hexdigest()
                                   for p, d in sorted(files.items())})).hexdigest()

    def files_asked(self) -> set[str]:
        """The repository paths of every file request to the hub (HEAD or GET)."""
        return {p.split("/", 6)[6] for _, p in self.requests if "/resolve/" in p}

    def answer(self, req: BaseHTTPRequestHandler, body: bool) -> None:
        path = unquote(urlsplit(req.path).path)
        self.requests.append((req.command, path))
        self.agents.append(req.headers.get("User-Agent", ""))
        if self.status is not None:
            return self.send(req, self.status, b'{"error": "injected"}', body)
        parts = path.strip("/").split("/")
        if parts[:2] == ["api", "datasets"] and len(parts) >= 6:
            repo, kind = "/".join(parts[2:4]), parts[4]
            files = self.repos.get(repo)
            if files is None:
                return self.send(req, 404, b'{"error": "Repository not found"}', body,
                                 {"X-Error-Code": "RepoNotFound"})
            if kind == "revision":
                info = {"id": repo, "sha": self.commit(repo), "private": False,
                        "siblings": [{"rfilename": p} for p in sorted(files)]}
                return self.send(req, 200, _json(info), body)
            if kind == "tree":
                tree = [{"type": "file", "path": p, "size": len(data),
                         "oid": hashlib.sha1(data).hexdigest(),
                         **({"lfs": {"oid": hashlib.sha256(data).hexdigest(), "size": len(data),
                                     "pointerSize": 130}} if _lfs(p) else {})}
                        for p, data in sorted(files.items())]
                return self.send(req, 200, _json(tree), body)
        if parts[:1] == ["datasets"] and len(parts) >= 6 and parts[3] == "resolve":
            repo, name = "/".join(parts[1:3]), "/".join(parts[5:])
            data = self.repos.get(repo, {}).get(name)
            if data is None or name in self.missing:
                return self.send(req, 404, b'{"error": "Entry not found"}', body,
                                 {"X-Error-Code": "EntryNotFound",
                                  "X-Repo-Commit": self.commit(repo)})
            if _lfs(name):  # as the hub does for LFS files: a redirect to another host
                sha = hashlib.sha256(data).hexdigest()
                self.blobs[sha] = (name, data)
                return self.send(req, 302, b"", body, {
                    "Location": f"{self.cdn}/cdn/{sha}", "X-Repo-Commit": self.commit(repo),
                    "X-Linked-Etag": f'"{sha}"', "X-Linked-Size": str(len(data))})
            if body:
                self.downloaded.append(name)
            return self.send(req, 200, data, body, {
                "X-Repo-Commit": self.commit(repo), "ETag": f'"{hashlib.sha1(data).hexdigest()}"'})
        if parts[:1] == ["cdn"] and len(parts) == 2 and parts[1] in self.blobs:
            name, data = self.blobs[parts[1]]
            if body:
                self.downloaded.append(name)
            return self.send(req, 200, data, body)
        return self.send(req, 404, b'{"error": "no such route"}', body)

    @staticmethod
    def send(req: BaseHTTPRequestHandler, status: int, data: bytes, body: bool,
             headers: dict[str, str] | None = None) -> None:
        req.send_response(status)
        for key, value in (headers or {}).items():
            req.send_header(key, value)
        req.send_header("Content-Length", str(len(data)))
        req.send_header("Content-Type", "application/octet-stream")
        req.end_headers()
        if body:
            req.wfile.write(data)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeHub]:
    """A loopback hub serving every fake release at its pinned repository; HOME and the
    duplexeval cache in ``tmp_path``; HF_ENDPOINT pointing at the hub."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("DUPLEXEVAL_CACHE", str(tmp_path / "home" / "dx-cache"))
    monkeypatch.setenv("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    server = FakeHub()
    for name, make in MAKERS.items():
        server.repos[RELEASES[name].repo_id] = make()
    monkeypatch.setenv("HF_ENDPOINT", server.url)
    yield server
    server.close()


def _cache(tmp_path: Path) -> Path:
    return official_root(tmp_path / "home" / "dx-cache")


def _leftovers(root: Path) -> list[str]:
    return sorted(p.name for p in root.glob(".*.tmp-*"))


# -- the tests -----------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["flexi", "fdb-v1", "mtr"])
def test_download_imports_the_release_and_a_second_call_asks_nothing(
        name: str, hub: FakeHub, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["data", "download", name]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    target = _cache(tmp_path) / name
    assert out[-1].startswith(f"{name}: {target} from {RELEASES[name].repo_id}@main")
    assert "imported" in out[-1]
    dataset, _ = load_dataset(target, "test", alignment=Need.OPTIONAL)
    assert len(dataset.dialogues) == {"flexi": 2, "fdb-v1": 2, "mtr": 1}[name]
    assert main(["validate", "--annotations-only", str(target)]) == 0
    # only what the importer reads was asked for (once each), with telemetry off
    files = hub.repos[RELEASES[name].repo_id]
    wanted = {p for p in files
              if any(fnmatch.fnmatch(p, g) for g in RELEASES[name].allow_patterns)}
    assert hub.files_asked() == wanted and wanted < set(files)
    assert sorted(hub.downloaded) == sorted(wanted)  # audio through the CDN redirect
    assert any(p.startswith("/cdn/") for _, p in hub.requests)
    assert not any("agent/" in ua for ua in hub.agents)
    record = json.loads((target / "release.json").read_text())
    repo = RELEASES[name].repo_id
    assert record["commit"] == hub.commit(repo) and record["repo_id"] == repo
    assert record["files"] == sorted(wanted)
    assert _leftovers(_cache(tmp_path)) == []
    # the second call: no request at all, the same folder
    before = len(hub.requests)
    capsys.readouterr()
    assert main(["data", "download", name]) == 0
    assert "already in the cache" in capsys.readouterr().out
    assert official_dataset(name) == target
    assert len(hub.requests) == before


def test_force_resolves_again_and_reimports_from_the_hub_cache(hub: FakeHub,
                                                                tmp_path: Path) -> None:
    target = official_dataset("flexi", endpoint=hub.url)
    stamp = (target / "release.json").stat().st_mtime_ns
    hub.requests.clear()
    assert official_dataset("flexi", endpoint=hub.url, force=True) == target
    # the revision is resolved again; every file is in the hub cache already
    assert hub.requests == [("GET", "/api/datasets/qibai/FLEXI/revision/main")]
    assert (target / "release.json").stat().st_mtime_ns != stamp
    assert sorted(p.name for p in _cache(tmp_path).iterdir()) == [".flexi.lock", "flexi", "hub"]


def test_a_revision_is_recorded_and_a_killed_import_is_cleared(hub: FakeHub,
                                                                tmp_path: Path) -> None:
    root = _cache(tmp_path)
    killed = root / ".flexi.tmp-999-x" / "flexi"
    killed.mkdir(parents=True)
    (killed / "test.jsonl").write_text("{}\n")
    target = official_dataset("flexi", revision="v1.0")
    assert ("GET", "/api/datasets/qibai/FLEXI/revision/v1.0") in hub.requests
    assert json.loads((target / "release.json").read_text())["revision"] == "v1.0"
    assert _leftovers(root) == []
    # the pinned revision is another one: resolved and imported again (files from the cache)
    hub.requests.clear()
    assert official_dataset("flexi") == target
    assert hub.requests == [("GET", "/api/datasets/qibai/FLEXI/revision/main")]
    assert json.loads((target / "release.json").read_text())["revision"] == "main"


def test_an_unknown_name_is_one_line_exit_2(hub: FakeHub,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["data", "download", "candor"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["duplexeval: unknown official dataset 'candor'; known: flexi, mtr, fdb-v1"]
    assert hub.requests == []


@pytest.mark.parametrize("status, code, says", [(500, 1, "the hub failed (HTTP 500)"),
                                                (404, 2, "not found")])
def test_a_failing_hub_is_one_line_and_leaves_no_dataset(
        status: int, code: int, says: str, hub: FakeHub, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    hub.status = status
    assert main(["data", "download", "flexi"]) == code
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and says in err[0] and "qibai/FLEXI@main" in err[0], err
    assert not (_cache(tmp_path) / "flexi").exists()
    assert _leftovers(_cache(tmp_path)) == []


def test_a_repository_the_hub_lacks_is_exit_2(hub: FakeHub, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    del hub.repos["qibai/FLEXI"]
    assert main(["data", "download", "flexi"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "not found" in err[0] and "RepositoryNotFoundError" in err[0]
    assert not (_cache(tmp_path) / "flexi").exists()


def test_an_unreachable_hub_is_exit_1(hub: FakeHub, tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    assert main(["data", "download", "flexi", "--endpoint", f"http://127.0.0.1:{port}"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "cannot reach the hub" in err[0], err
    assert not (_cache(tmp_path) / "flexi").exists()


def test_an_interrupted_download_fetches_only_the_rest(hub: FakeHub, tmp_path: Path) -> None:
    hub.missing = {"pause_handing/dialog_1/pause.json"}
    with pytest.raises(DuplexevalError, match="not found") as failed:
        official_dataset("flexi")
    assert failed.value.exit_code == 2
    assert not (_cache(tmp_path) / "flexi").exists()
    # the other files are downloaded or not, as the threads went when the failure came
    got = set(hub.downloaded)
    assert "pause_handing/dialog_1/pause.json" not in got
    hub.missing = set()
    hub.requests.clear()
    official_dataset("flexi")
    # only the rest is asked for (HEAD or GET): the files downloaded before are not
    wanted = {p for p in hub.repos["qibai/FLEXI"]
              if any(fnmatch.fnmatch(p, g) for g in RELEASES["flexi"].allow_patterns)}
    assert len(wanted) == 6 and hub.files_asked() == wanted - got


def test_a_release_the_importer_cannot_read_leaves_nothing(hub: FakeHub, tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]
                                                           ) -> None:
    hub.repos["qibai/FLEXI"] = {"audio/dialog_1/input.wav": _wav(2.0, [(0.5, 1.0)])}
    assert main(["data", "download", "flexi"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "are not what `data import flexi` reads" in err[0], err
    assert not (_cache(tmp_path) / "flexi").exists()
    assert _leftovers(_cache(tmp_path)) == []
    hub.repos["qibai/FLEXI"] = {"README.md": b"moved to a zip\n"}
    assert main(["data", "download", "flexi", "--force"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "has no file matching" in err[0], err
    assert not (_cache(tmp_path) / "flexi").exists()


def test_offline_mode_is_respected(hub: FakeHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert main(["data", "download", "flexi"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "HF_HUB_OFFLINE" in err[0]
    assert hub.requests == []
    monkeypatch.delenv("HF_HUB_OFFLINE")
    target = official_dataset("flexi")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    hub.requests.clear()
    assert official_dataset("flexi") == target
    assert main(["data", "download", "flexi", "--force"]) == 2
    assert "force needs the hub" in capsys.readouterr().err
    assert hub.requests == [] and (target / "release.json").is_file()


def test_the_command_writes_nothing_outside_the_cache(hub: FakeHub, tmp_path: Path) -> None:
    """In a fresh process (so that huggingface_hub reads this environment at its import), with
    HOME in tmp_path, the endpoint from HF_ENDPOINT and no telemetry variable set by us."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("HF_", "XDG_", "DISABLE_TELEMETRY"))}
    env.update(HOME=str(home), DUPLEXEVAL_CACHE=str(home / "dx-cache"), HF_ENDPOINT=hub.url,
               PYTHONPATH=os.pathsep.join([str(REPO / "src"), env.get("PYTHONPATH", "")]))
    result = subprocess.run([sys.executable, "-m", "duplexeval.cli", "data", "download", "flexi"],
                            env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    written = [p for p in home.rglob("*") if not p.is_dir()]
    assert written and all(p.is_relative_to(home / "dx-cache" / "official") for p in written), \
        [str(p) for p in written if not p.is_relative_to(home / "dx-cache")]
    assert all(p.startswith(("/api/datasets/qibai/FLEXI/", "/datasets/qibai/FLEXI/resolve/",
                             "/cdn/")) for _, p in hub.requests), hub.requests
    assert not any("agent/" in ua for ua in hub.agents)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["home"]
