"""DNSMOS P.835 and P.808 (Microsoft, MIT): non-intrusive speech quality, offline.

The ONNX models ship in the PyPI package ``speechmos`` (pinned by the extra
``duplexeval[quality]``); only its model files are used, never its Python code (which imports
librosa and requests).  Each file's SHA-256 is checked against :data:`MODEL_SHA256` once per
process before it is loaded, so a changed package is refused rather than silently scored with.

The computation follows ``speechmos.dnsmos`` (the DNS-Challenge ``dnsmos_local.py``) exactly:

* the audio is mono at 16 kHz (other rates are resampled with soxr, "HQ"), float in [-1, 1]
  (clipped);
* a clip shorter than :data:`INPUT_SECONDS` (9.01 s) is repeated (doubled until long enough);
* windows of 9.01 s start every ``hop`` seconds (1 s; ``int(floor(len/16000) - 9.01) + 1``
  windows); each window goes to the P.835 model (``sig_bak_ovr.onnx``, raw waveform), whose
  three outputs are mapped by the published polynomials to SIG, BAK and OVRL, and its first
  144,000 samples' mel spectrogram to the P.808 model (``model_v8.onnx``);
* the clip's scores are the means over windows.  All scores are MOS on a 1-5 scale.

The mel spectrogram is librosa's ``melspectrogram(n_fft=321, hop_length=160, n_mels=120)`` and
``(power_to_db(S, ref=np.max) + 40) / 40``, reimplemented in numpy: periodic Hann window,
centred frames (padding :data:`PAD_MODE`, librosa 0.9's default, the version DNSMOS was
released with), power spectrum, Slaney-style mel filters with Slaney area normalisation,
``10 log10(max(S, 1e-10))`` relative to the maximum and floored 80 dB below it.

Checked once against the originals (librosa 0.10.2, speechmos 0.0.1.1, onnxruntime 1.32):
the features equal librosa's with ``pad_mode="reflect"`` to 3.4e-6 (the golden values in
``tests/test_data_quality.py``); on a 12.3 s clip-bank clip, clean and at 5 dB SNR, SIG, BAK
and OVRL equal ``speechmos.dnsmos.run`` exactly and P.808 within 0.0015 (librosa 0.10 pads
with zeros, which changes only the edge frames).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import cache
from importlib import metadata, resources
from pathlib import Path
from typing import Any

import numpy as np

from duplexeval.errors import DuplexevalError

__all__ = ["MODEL_SHA256", "Dnsmos", "DnsmosScores", "mel_db", "mel_filters", "model_provenance"]

RATE = 16000
"""The models' sample rate (Hz)."""
INPUT_SECONDS = 9.01
"""One window of the P.835 model (s)."""
PAD_MODE = "reflect"
"""STFT edge padding of the P.808 features (librosa 0.9's default; 0.10 pads with zeros)."""
SPEECHMOS_VERSION = "0.0.1.1"
MODEL_SHA256 = {
    "sig_bak_ovr.onnx": "269fbebdb513aa23cddfbb593542ecc540284a91849ac50516870e1ac78f6edd",
    "model_v8.onnx": "9246480c58567bc6affd4200938e77eef49468c8bc7ed3776d109c07456f6e91",
}
"""SHA-256 of the two model files in ``speechmos==0.0.1.1`` (``speechmos/dnsmos_models/``)."""
_POLY = {"sig": (-0.08397278, 1.22083953, 0.0052439),
         "bak": (-0.13166888, 1.60915514, -0.39604546),
         "ovrl": (-0.06766283, 1.11546468, 0.04602535)}
"""The non-personalised polynomials (highest power first) from raw P.835 outputs to MOS."""


@dataclass(frozen=True)
class DnsmosScores:
    """One clip's DNSMOS: P.835 SIG (signal), BAK (background), OVRL (overall) and P.808 MOS,
    each the mean over ``windows`` 9.01 s windows (MOS, 1-5)."""

    sig: float
    bak: float
    ovrl: float
    p808: float
    windows: int

    def to_json(self) -> dict[str, float | int]:
        """The scores rounded to 4 decimals."""
        return {"sig": round(self.sig, 4), "bak": round(self.bak, 4),
                "ovrl": round(self.ovrl, 4), "p808": round(self.p808, 4),
                "windows": self.windows}


def _model_file(name: str) -> Path:
    try:
        root = resources.files("speechmos")
    except ModuleNotFoundError:
        raise DuplexevalError("DNSMOS needs the package speechmos (its ONNX models): pip "
                              "install 'duplexeval[quality]'") from None
    path = Path(str(root.joinpath("dnsmos_models").joinpath(name)))
    if not path.is_file():
        raise DuplexevalError(f"speechmos is installed but has no dnsmos_models/{name}: "
                              "pip install --force-reinstall 'duplexeval[quality]'")
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if digest != MODEL_SHA256[name]:
        raise DuplexevalError(f"{path}: SHA-256 {digest[:12]}... is not that of speechmos "
                              f"{SPEECHMOS_VERSION}'s {name}; install duplexeval[quality]")
    return path


def model_provenance() -> dict[str, Any]:
    """What scored: the package version and the model files' SHA-256."""
    try:
        version = metadata.version("speechmos")
    except metadata.PackageNotFoundError:
        version = None
    return {"package": "speechmos", "version": version, "models": dict(MODEL_SHA256),
            "pad_mode": PAD_MODE}


def _hz_to_mel(f: np.ndarray) -> np.ndarray:
    """Slaney's mel scale: linear below 1 kHz, logarithmic above."""
    f_sp, min_log_hz = 200.0 / 3, 1000.0
    mels = f / f_sp
    min_log_mel, logstep = min_log_hz / f_sp, np.log(6.4) / 27.0
    high = f >= min_log_hz
    return np.where(high, min_log_mel + np.log(np.maximum(f, 1e-12) / min_log_hz) / logstep,
                    mels)


def _mel_to_hz(m: np.ndarray) -> np.ndarray:
    f_sp, min_log_hz = 200.0 / 3, 1000.0
    min_log_mel, logstep = min_log_hz / f_sp, np.log(6.4) / 27.0
    return np.where(m >= min_log_mel, min_log_hz * np.exp(logstep * (m - min_log_mel)),
                    f_sp * m)


@cache
def mel_filters(rate: int = RATE, n_fft: int = 321, n_mels: int = 120) -> np.ndarray:
    """librosa's ``filters.mel(sr=rate, n_fft=n_fft, n_mels=n_mels)`` (Slaney scale and
    normalisation, 0 Hz to Nyquist): shape ``(n_mels, 1 + n_fft // 2)``."""
    fft_hz = np.fft.rfftfreq(n_fft, 1.0 / rate)
    mel_hz = _mel_to_hz(np.linspace(_hz_to_mel(np.array(0.0)), _hz_to_mel(np.array(rate / 2)),
                                    n_mels + 2))
    fdiff = np.diff(mel_hz)
    ramps = mel_hz[:, None] - fft_hz[None, :]
    lower = -ramps[:-2] / fdiff[:-1, None]
    upper = ramps[2:] / fdiff[1:, None]
    weights = np.maximum(0.0, np.minimum(lower, upper))
    weights *= (2.0 / (mel_hz[2:] - mel_hz[:-2]))[:, None]
    return weights.astype(np.float32)


def mel_db(audio: np.ndarray, rate: int = RATE, n_fft: int = 321, hop: int = 160,
           n_mels: int = 120) -> np.ndarray:
    """The P.808 input features: ``(power_to_db(mel power spectrogram, ref=max) + 40) / 40``,
    shape ``(frames, n_mels)`` (see the module docstring)."""
    x = np.asarray(audio, dtype=np.float32)
    padded = np.pad(x, n_fft // 2, mode=PAD_MODE)  # type: ignore[call-overload]
    frames = 1 + (len(padded) - n_fft) // hop
    index = np.arange(n_fft)[None, :] + hop * np.arange(frames)[:, None]
    window = (0.5 - 0.5 * np.cos(2 * np.pi * np.arange(n_fft) / n_fft)).astype(np.float32)
    power = np.abs(np.fft.rfft(padded[index] * window, n=n_fft, axis=1)) ** 2
    mel = power @ mel_filters(rate, n_fft, n_mels).T
    log = 10.0 * np.log10(np.maximum(mel, 1e-10))
    log -= 10.0 * np.log10(max(1e-10, float(mel.max())))
    log = np.maximum(log, log.max() - 80.0)
    return ((log + 40.0) / 40.0).astype(np.float32)


class Dnsmos:
    """The two DNSMOS models loaded once (one ONNX session each, safe to share between threads;
    ``threads`` intra-op threads per session)."""

    def __init__(self, threads: int = 1) -> None:
        from duplexeval.speech._onnx import onnxruntime

        ort = onnxruntime()
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        providers = ["CPUExecutionProvider"]
        self._p835 = ort.InferenceSession(str(_model_file("sig_bak_ovr.onnx")), options,
                                          providers=providers)
        self._p808 = ort.InferenceSession(str(_model_file("model_v8.onnx")), options,
                                          providers=providers)

    def _window(self, seg: np.ndarray) -> tuple[float, float, float, float]:
        raw = self._p835.run(None, {"input_1": seg[None, :]})[0][0]
        feats = mel_db(seg[:-160])[None, :, :]
        p808 = float(self._p808.run(None, {"input_1": feats})[0][0][0])
        sig, bak, ovrl = (float(np.polyval(_POLY[k], float(v)))
                          for k, v in zip(("sig", "bak", "ovrl"), raw, strict=True))
        return sig, bak, ovrl, p808

    def score(self, audio: np.ndarray, rate: int, hop: float = 1.0) -> DnsmosScores:
        """The DNSMOS of one mono clip (any rate; ``hop``: seconds between windows)."""
        x = np.clip(np.asarray(audio, dtype=np.float32).reshape(-1), -1.0, 1.0)
        if rate != RATE:
            import soxr

            x = soxr.resample(x, rate, RATE, quality="HQ").astype(np.float32)
        if x.size == 0:
            raise ValueError("DNSMOS of an empty clip")
        need = int(INPUT_SECONDS * RATE)
        while len(x) < need:
            x = np.concatenate([x, x])
        step = round(hop * RATE)
        count = int((np.floor(len(x) / RATE) - INPUT_SECONDS) / hop) + 1
        rows = [self._window(x[i * step: i * step + need]) for i in range(count)
                if len(x[i * step: i * step + need]) == need]
        mean = np.mean(np.asarray(rows, dtype=np.float64), axis=0)
        return DnsmosScores(float(mean[0]), float(mean[1]), float(mean[2]), float(mean[3]),
                            count)
