"""Events annotated from a voiced suite's audio vs. its events from the word alignments: per
language and event kind, how many reference events the audio recovers within 100 ms (start and
end; ``duplexeval.app._demo.annotation_check``, the demo's annotation check), and the spurious ones;
then each language's totals per kind over the suites given (``all``).

Usage: .venv/bin/python perf/annotation_recovery.py [--full | --first N] [SUITE ...]
(default: the quick subsets of m3-chat-en, m3-chat-ja, m3-qa-en, m3-qa-ja)
"""

from __future__ import annotations

import argparse
import time


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("suites", nargs="*",
                        default=["m3-chat-en", "m3-chat-ja", "m3-qa-en", "m3-qa-ja"])
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--full", action="store_true", help="the full suites")
    group.add_argument("--first", type=int, help="the first N dialogues")
    args = parser.parse_args()

    from duplexeval.app._demo import ANNOTATION_TOLERANCE, annotation_check
    from duplexeval.data import Need, load_dataset
    from duplexeval.suites import build_suite, get_suite

    subset: int | str | None = None if args.full else args.first or "quick"
    print("recovered = same kind and channel, start and end within "
          f"{ANNOTATION_TOLERANCE * 1000:.0f} ms (Silero VAD on the built audio, "
          "M3 annotation rules)")
    by_language: dict[tuple[str, str], list[int]] = {}
    for name in args.suites:
        start = time.perf_counter()
        dataset, _ = load_dataset(build_suite(name, progress=False, limit=subset),
                                  audio=Need.REQUIRE)
        check = annotation_check(dataset)
        lang = get_suite(name).language
        for kind, (found, total) in check.recovered.items():
            _line(name, lang, kind, found, total)
            counts = by_language.setdefault((lang, kind), [0, 0])
            counts[0] += found
            counts[1] += total
        print(f"{name:12s} {lang}  spurious {check.spurious}  "
              f"({time.perf_counter() - start:.0f} s, subset {subset})")
    for (lang, kind), (found, total) in sorted(by_language.items()):
        _line("all", lang, kind, found, total)


def _line(name: str, lang: str, kind: str, found: int, total: int) -> None:
    flag = "" if total == 0 or found / total >= 0.9 else "  < 90 %"
    print(f"{name:12s} {lang}  {kind:10s} {found:4d}/{total:<4d} "
          f"{100 * found / max(total, 1):5.1f} %{flag}")


if __name__ == "__main__":
    main()
