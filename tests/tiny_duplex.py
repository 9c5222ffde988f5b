"""A tiny dialogue for the real-time adapter tests: short samples, so a real-time run takes a
few seconds.

::

    ch0 user    ▆▆▆▆▆                ▆▆▆▆▆                 ... (4 user turns, every 3 s)
    ch1 system          ▆▆▆▆▆                ▆▆▆▆▆
                0.3    1.3 1.8  2.8 3.3   4.3 4.8  5.8     ... 12.0 s

Speech is a 200 Hz tone at 0.2 amplitude (16 kHz stereo wav); events under channel 1 (the
system takes the turn): four TURN_SHIFTs, at 1.3-1.8 s, 4.3-4.8 s, 7.3-7.8 s, 10.3-10.8 s.
Under ``single`` with ``--window 1`` each sample is 2 s long (the user's turn, then 1 s).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import soundfile as sf

from conftest import make_dataset

RATE = 16000
USER = tuple((3.0 * k + 0.3, 3.0 * k + 1.3) for k in range(4))
SYSTEM = tuple((b + 0.5, b + 1.5) for _, b in USER)


def tiny_dataset(root: Path) -> Path:
    """The dialogue above as a dataset folder (``d1``)."""
    events = {"0": [("TURN", a, b) for a, b in USER],
              "1": [("TURN", a, b) for a, b in SYSTEM]
              + [("TURN_SHIFT", b, b + 0.5) for _, b in USER]}
    make_dataset(root, events, audio_seconds=None)
    x = np.zeros((12 * RATE, 2), np.float32)
    for channel, spans in ((0, USER), (1, SYSTEM)):
        for a, b in spans:
            t = np.arange(round((b - a) * RATE)) / RATE
            x[round(a * RATE):round(a * RATE) + len(t), channel] = \
                0.2 * np.sin(2 * np.pi * 200 * t)
    (root / "audio").mkdir(exist_ok=True)
    sf.write(str(root / "audio" / "d1.wav"), x, RATE, subtype="FLOAT")
    return root
