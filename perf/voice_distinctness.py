"""Are the user, the system and the background speaker different voices in every English suite?

Builds (or reuses, from the default cache) each English suite's quick subset, or the full suite
with ``--full``, and prints per role the median F0 (Harvest), the formants F1-F3 and the seconds
measured, then per pair of roles the F0 difference in semitones, the F2 ratio and the MFCC-mean
distance against the within-role distance (``duplexeval.synth._voice_distinctness``).  Then the
ASR round trip (Whisper WER) of each role's voice on the same user texts, which the derived
voices must keep within :data:`WER_BUDGET`.

Usage: .venv/bin/python perf/voice_distinctness.py [--full] [--wer-texts N] [SUITE ...]
"""

from __future__ import annotations

import argparse
import time

WER_BUDGET = 0.08
"""The highest corpus WER a voice of the English suites may have on the round-trip texts; the
dependency study measured 0.036 on piper's own voice."""
ENGLISH = ("m3-chat-en", "m3-qa-en", "flexi-en", "mtr-en")


def _fmt(value: float | None, spec: str = ".0f") -> str:
    return "-" if value is None else format(value, spec)


def _suite(name: str, full: bool) -> None:
    from duplexeval.data import Need, load_dataset
    from duplexeval.suites import build_suite
    from duplexeval.synth._voice_distinctness import role_voices

    start = time.perf_counter()
    path = build_suite(name, progress=False, limit=None if full else "quick")
    built = time.perf_counter() - start
    dataset, _ = load_dataset(path, audio=Need.REQUIRE)
    start = time.perf_counter()
    voices = role_voices(dataset)
    print(f"\n{name}{'' if full else ' (quick subset)'}: {len(dataset.dialogues)} dialogues, "
          f"built or loaded in {built:.1f} s, measured in {time.perf_counter() - start:.1f} s")
    for role, p in voices.profiles.items():
        f1, f2, f3 = p.formants_hz
        print(f"  {role:10s} {p.seconds:6.1f} s  F0 {_fmt(p.f0_hz):>4s} Hz  "
              f"F1/F2/F3 {_fmt(f1)}/{_fmt(f2)}/{_fmt(f3)} Hz  "
              f"within-role MFCC {voices.within[role]:.2f}")
    for pair in voices.pairs:
        print(f"  {pair.roles[0]:>10s} vs {pair.roles[1]:10s} F0 {_fmt(pair.semitones, '5.1f')} "
              f"semitones  F2 ratio {_fmt(pair.f2_ratio, '.3f')}  MFCC {pair.mfcc:.2f}  "
              f"{'distinct' if pair.distinct else 'NOT distinct'}")


def _wer(texts: int) -> None:
    """Whisper WER of each English voice on the first ``texts`` user turns of m3-qa-en."""
    import jiwer
    import soxr

    from duplexeval.speech._asr import Transcriber
    from duplexeval.speech._tts import load_engine
    from duplexeval.suites import get_suite
    from duplexeval.synth._quality import normalize_en
    from duplexeval.synth._spec import load_specs

    specs = load_specs(get_suite("m3-qa-en").spec_folder())
    said = [t.text for s in specs for t in s.turns if t.speaker == "user"][:texts]
    engine, transcriber = load_engine("piper"), Transcriber()
    print(f"\nASR round trip (Whisper base, packaged) on {len(said)} user turns of m3-qa-en:")
    for voice in engine.voices():
        start = time.perf_counter()
        refs, hyps, seconds = [], [], 0.0
        for text in said:
            utt = engine.synthesize(text, voice)
            audio = soxr.resample(utt.audio, utt.sample_rate, 16000)
            seconds += utt.duration
            words = transcriber.transcribe(audio, 16000, "en")
            refs.append(normalize_en(text))
            hyps.append(normalize_en(" ".join(w.text for w in words)))
        wer = float(jiwer.wer(refs, hyps))
        print(f"  {voice:9s} WER {wer:.3f} ({'within' if wer <= WER_BUDGET else 'OVER'} the "
              f"{WER_BUDGET} budget)  {seconds:.0f} s of speech, synthesized and transcribed "
              f"in {time.perf_counter() - start:.1f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("suites", nargs="*", default=list(ENGLISH))
    parser.add_argument("--full", action="store_true", help="the full suites, not quick")
    parser.add_argument("--wer-texts", type=int, default=40,
                        help="user turns of m3-qa-en in the ASR round trip (0: none)")
    args = parser.parse_args()
    for name in args.suites:
        _suite(name, args.full)
    if args.wer_texts > 0:
        _wer(args.wer_texts)


if __name__ == "__main__":
    main()
