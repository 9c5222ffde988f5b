"""The freeze-omni and duplexcascade wire formats, hand-computed."""

from __future__ import annotations

import json

import numpy as np
import pytest

from duplexeval.systems import SystemFailure
from duplexeval.systems.adapters.duplexcascade._wire import encode_frame, parse
from duplexeval.systems.adapters.freeze_omni._wire import audio_payload, parse_audio


def test_freeze_omni_audio_is_int16_bytes_as_a_json_list_of_uint8() -> None:
    payload = json.loads(audio_payload(np.array([0.5, -1.0, 2.0], np.float32)))
    # 0.5 * 32767 = 16383 (0x3fff), -32767 (0x8001), clipped 32767 (0x7fff), little-endian
    assert payload == {"sample_rate": 16000, "audio": [0xFF, 0x3F, 0x01, 0x80, 0xFF, 0x7F]}
    assert parse_audio(b"\x00\x40\x00\xc0").tolist() == [0.5, -0.5]
    with pytest.raises(SystemFailure, match="odd length"):
        parse_audio(b"\x00\x40\x00")
    with pytest.raises(SystemFailure, match="carrying str"):
        parse_audio("pcm")


def test_duplexcascade_messages() -> None:
    assert encode_frame(np.array([1.0, -0.5], np.float32)) == b"\x00\x00\x80\x3f\x00\x00\x00\xbf"
    audio = parse(b"\x00\x00\x80\x3f\x00\x00\x00\xbf")
    assert audio.kind == "audio" and audio.pcm is not None and audio.pcm.tolist() == [1.0, -0.5]
    assert parse('{"type": "audio_control", "action": "stop"}').kind == "stop"
    event = parse('{"type": "transcript", "text": "hi"}')
    assert event.kind == "event" and event.event == {"type": "transcript", "text": "hi"}
    assert parse('{"type": "audio_control", "action": "play"}').kind == "event"
    assert parse("not json").kind == "text" and parse("[1, 2]").kind == "text"
    with pytest.raises(SystemFailure, match="not a multiple of 4"):
        parse(b"\x00" * 6)
    with pytest.raises(SystemFailure, match="NaN"):
        parse(np.array([np.nan], "<f4").tobytes())
