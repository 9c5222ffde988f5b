"""Tiny random-weight Moshi checkpoints made on the spot (no download), and a tiny dataset.

The LM keeps Moshi's layout at toy size: text + 2 system + 2 user codebooks, delays text 0,
semantic 0, acoustic 1 (``max_delay`` 1), a depformer with weights per step; Mimi keeps its
architecture (SEANet at 24 kHz, 12.5 Hz frames, split RVQ, transformers) with 2 filters and
16-dimensional latents.  The tokenizer is a SentencePiece model of 60 pieces trained on a few
sentences, as many as the LM's ``text_card`` (moshi's server shows every sampled id as a piece).
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import soundfile as sf

SENTENCES = ["hello there how are you", "hi friend this is fine", "what do you think",
             "ok good thanks a lot", "the weather is nice today", "see you later then"]

LM_CONFIG = {
    "dim": 16, "text_card": 60, "existing_text_padding_id": 3, "n_q": 4, "dep_q": 2,
    "card": 32, "num_heads": 2, "num_layers": 2, "hidden_scale": 2, "causal": True,
    "context": 50, "max_period": 10000, "gating": "silu", "norm": "rms_norm_f32",
    "positional_embedding": "rope", "depformer_dim": 16, "depformer_dim_feedforward": 32,
    "depformer_num_heads": 2, "depformer_num_layers": 1, "depformer_multi_linear": True,
    "depformer_context": 2, "depformer_gating": "silu", "depformer_pos_emb": "none",
    "depformer_weights_per_step": True, "delays": [0, 0, 1, 0, 1],
}

_SEANET = {"channels": 1, "dimension": 16, "causal": True, "n_filters": 2,
           "n_residual_layers": 1, "activation": "ELU", "compress": 2, "dilation_base": 2,
           "disable_norm_outer_blocks": 0, "kernel_size": 7, "residual_kernel_size": 3,
           "last_kernel_size": 3, "norm": "none", "pad_mode": "constant",
           "ratios": [8, 6, 5, 4], "true_skip": True}
MIMI_CONFIG = {
    "sample_rate": 24000, "channels": 1, "frame_rate": 12.5, "seanet": _SEANET,
    "quantizer": {"dimension": 8, "n_q": 4, "bins": 32, "input_dimension": 16,
                  "output_dimension": 16},
    "transformer": {"d_model": 16, "num_heads": 2, "num_layers": 1, "causal": True,
                    "layer_scale": 0.01, "context": 50, "conv_layout": True,
                    "max_period": 10000, "gating": "none", "norm": "layer_norm",
                    "positional_embedding": "rope", "dim_feedforward": 32,
                    "input_dimension": 16, "output_dimensions": [16]},
}


PERSONAPLEX_CONFIG = {**LM_CONFIG, "dep_q": 4}
"""PersonaPlex's shape at toy size: the depformer predicts the user's 2 codebooks too."""


def write_checkpoint(folder: Path, lm_config: dict[str, object] = LM_CONFIG) -> dict[str, str]:
    """Config files and a tokenizer in ``folder``; the ``--system-arg`` values that name them
    (random weights)."""
    import sentencepiece

    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps(lm_config), encoding="utf-8")
    (folder / "mimi.json").write_text(json.dumps(MIMI_CONFIG), encoding="utf-8")
    model = io.BytesIO()
    sentencepiece.SentencePieceTrainer.train(
        sentence_iterator=iter(SENTENCES * 20), model_writer=model, vocab_size=60,
        model_type="bpe", character_coverage=1.0, pad_id=3, unk_id=1, bos_id=2, eos_id=0,
        minloglevel=2)
    (folder / "tokenizer.model").write_bytes(model.getvalue())
    return {"config": str(folder / "config.json"), "mimi_config": str(folder / "mimi.json"),
            "tokenizer": str(folder / "tokenizer.model"), "random_weights": "1",
            "device": "cpu", "top_k": "8", "top_k_text": "8"}


def write_dataset(root: Path, seconds: float = 8.0, seed: int = 0) -> Path:
    """One dialogue of noise bursts at 16 kHz with events on both channels and words::

        ch0  |== 0.0-2.0 ==|                |== 4.0-6.0 ==|
        ch1                  |== 2.4-3.6 ==|                 |== 6.4-7.6 ==|
    """
    root.mkdir(parents=True, exist_ok=True)
    events = {"0": [("TURN", 0.0, 2.0), ("TURN", 4.0, 6.0), ("TURN_SHIFT", 3.6, 4.0)],
              "1": [("TURN", 2.4, 3.6), ("TURN_SHIFT", 2.0, 2.4), ("TURN", 6.4, 7.6),
                    ("TURN_SHIFT", 6.0, 6.4)]}
    record = {"id": "d1", "events": {ch: [{"event": k, "time": [s, e]} for k, s, e in evs]
                                     for ch, evs in events.items()}}
    (root / "test.jsonl").write_text(json.dumps(record) + "\n", encoding="utf-8")
    words = [(0, 0.1, 0.9, "hello"), (0, 1.0, 1.9, "there"), (1, 2.5, 3.0, "hi"),
             (1, 3.05, 3.5, "friend"), (0, 4.1, 5.9, "what"), (1, 6.5, 7.5, "fine")]
    (root / "txt_align").mkdir(exist_ok=True)
    (root / "txt_align" / "d1.txt").write_text(
        "".join(f"{c}\t{s}\t{e}\t{w}\n" for c, s, e, w in words), encoding="utf-8")
    rate = 16000
    rng = np.random.default_rng(seed)
    stereo = np.zeros((round(seconds * rate), 2), dtype=np.float32)
    for ch, evs in events.items():
        for kind, start, end in evs:
            if kind == "TURN":
                a, b = round(start * rate), round(end * rate)
                stereo[a:b, int(ch)] = rng.uniform(-0.3, 0.3, b - a)
    (root / "audio").mkdir(exist_ok=True)
    sf.write(str(root / "audio" / "d1.wav"), stereo, rate, subtype="FLOAT")
    return root
