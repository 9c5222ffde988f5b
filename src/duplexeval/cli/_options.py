"""Argument types and the option groups shared by several subcommands (declared once here).

Defaults that a handler must tell apart from "given" are ``None``; the handler fills them from
the settings objects (:class:`~duplexeval.plan._samples.PlanOptions`,
:class:`~duplexeval.analysis._pipeline.AnalysisOptions`), never from copied literals.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from contextlib import nullcontext
from dataclasses import replace
from pathlib import Path
from typing import Any

from duplexeval._fileio import name_problem, output_problem
from duplexeval.errors import DuplexevalError
from duplexeval.errors import number_type as number

__all__ = [
    "MAX_SECONDS",
    "add_analysis_options",
    "add_executor_options",
    "add_judge_call_options",
    "add_judge_endpoint_options",
    "add_plan_options",
    "add_user_policy_options",
    "analysis_options",
    "channels",
    "dataset_folder",
    "event_kinds",
    "executor_from",
    "fraction",
    "http_url",
    "non_negative",
    "number",
    "out_file",
    "out_folder",
    "plan_options",
    "positive",
    "positive_int",
    "random_seed",
    "sample_rate",
    "split_name",
    "system_args",
    "user_policy",
    "variant_name",
    "warn",
    "worker_count",
]


def channels(text: str) -> tuple[int, ...]:
    """``0``, ``1`` or ``0,1``: user channels."""
    try:
        values = tuple(int(part) for part in text.split(",") if part.strip() != "")
    except ValueError:
        raise argparse.ArgumentTypeError(f"channels must be like 0,1 (got {text!r})") from None
    if not values or any(v not in (0, 1) for v in values) or len(set(values)) < len(values):
        raise argparse.ArgumentTypeError(
            f"channels must be 0, 1 or 0,1, each once (got {text!r})")
    return values


def event_kinds(text: str) -> frozenset[Any]:
    """``TURN_SHIFT,BC``: evaluated event kinds (official names; SHIFT, PAUSE and the other
    table labels too)."""
    from duplexeval.events import EVENT_TO_TASK, TASK_TABLE, EventKind

    labels = {t.short: t.kind for t in TASK_TABLE if t.kind is not EventKind.SHORTPAUSE}
    known = {k.value: k for k in EVENT_TO_TASK} | labels
    parts = [part.strip().upper() for part in text.split(",") if part.strip()]
    unknown = [p for p in parts if p not in known]
    if not parts or unknown:
        raise argparse.ArgumentTypeError(
            f"events must be a comma-separated list of {', '.join(known)} (got {text!r})")
    return frozenset(known[p] for p in parts)


MAX_SECONDS = 86400.0
"""The longest duration an option takes (a day): a bigger one is a typo, not a setting."""

positive = number(float, 0, MAX_SECONDS, low_open=True, unit="seconds")
"""Seconds > 0 (finite)."""

non_negative = number(float, 0, MAX_SECONDS, unit="seconds")
"""Seconds >= 0 (finite)."""

positive_int = number(int, 1)
"""An integer of at least 1."""

worker_count = number(int, 1, 256)
"""Processes or threads to start (``--jobs``, ``--workers``, ``--asr-processes``, judge calls at
once): 1 to 256; a bigger count is a typo (each process may hold a model)."""

repeat_count = number(int, 1, 100)
"""Tries per sample (``--repeats``): 1 to 100 (:data:`~duplexeval.plan._samples.MAX_REPEATS`)."""

random_seed = number(int, 0, 2**63 - 1)
"""A random seed: 0 to 2**63 - 1 (numpy's generators take no negative seed)."""

fraction = number(float, 0, 1)
"""A number in [0, 1] (probabilities, thresholds)."""

sample_rate = number(int, 1000, 384000)
"""A sample rate in Hz (1 kHz to 384 kHz)."""


def http_url(text: str) -> str:
    """An argparse ``type=`` of an HTTP endpoint (``--judge-url``): ``http://`` or
    ``https://`` with a host, refused at once otherwise (``ftp://x`` was taken, and every
    judge call then failed)."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(text)
        ok = parts.scheme in ("http", "https") and bool(parts.hostname)
        parts.port  # noqa: B018 - raises ValueError on a port that is not a number
    except ValueError:
        ok = False
    if not ok:
        raise argparse.ArgumentTypeError(f"expected an http:// or https:// URL with a host, "
                                         f"got {text!r}")
    return text


def variant_name(text: str) -> str:
    """An argparse ``type=`` of ``--variant``: a registered timing variant, refused at once
    naming the option and the known ones."""
    from duplexeval.metrics._base import VARIANTS

    if text not in VARIANTS:
        raise argparse.ArgumentTypeError(f"unknown metric variant {text!r} (known: "
                                         f"{', '.join(VARIANTS.names())})")
    return text


def out_folder(text: str) -> str:
    """An argparse ``type=`` of an output folder (``-o``/``--out``): refused at once when it
    cannot be made or written (:func:`~duplexeval._fileio.output_problem`)."""
    problem = output_problem(Path(text), folder=True)
    if problem is not None:
        raise argparse.ArgumentTypeError(problem)
    return text


def out_file(text: str) -> str:
    """An argparse ``type=`` of an output file (``-o FILE``): refused at once when it cannot
    be written (:func:`~duplexeval._fileio.output_problem`)."""
    problem = output_problem(Path(text), folder=False)
    if problem is not None:
        raise argparse.ArgumentTypeError(problem)
    return text


def split_name(text: str) -> str:
    """An argparse ``type=``: a split name, which names a file (``{split}.jsonl``) inside the
    dataset folder, so it must be a safe file name (:func:`~duplexeval._fileio.name_problem`:
    no ``/``, no ``..``)."""
    problem = name_problem(text)
    if problem is not None:
        raise argparse.ArgumentTypeError(f"split {text!r} cannot be used in a file name: "
                                         f"{problem}")
    return text


def warn(lines: Sequence[str]) -> None:
    """Print warnings to stderr, one per line."""
    for line in lines:
        print(f"warning: {line}", file=sys.stderr)


def add_plan_options(p: argparse.ArgumentParser) -> None:
    """What to plan: the options of ``plan`` and ``run``."""
    p.add_argument("--split", type=split_name, default="test")
    p.add_argument("--protocol", required=True, choices=["single", "multi-gen", "multi-ref"])
    p.add_argument("--channels", type=channels, default=None,
                   help="user channels to evaluate, e.g. 0,1 (chat) or 1 (QA); default: the "
                        "suite's (also for a folder built from one), else 0,1")
    p.add_argument("--window", type=number(float, 0.1, MAX_SECONDS, unit="seconds"),
                   default=None, help="evaluation window after the event (s, at least 0.1; "
                   "default 10)")
    p.add_argument("--context-max-len", type=positive, default=None,
                   help="longest context (s); default: from the dialogue start")
    p.add_argument("--include-short-pause", action="store_true",
                   help="also evaluate SHORTPAUSE events (the official pipeline ignores them)")
    p.add_argument("--events", type=event_kinds, default=None, metavar="KIND[,KIND]",
                   help="plan only these event kinds, e.g. BC,BARGE_IN (TURN_SHIFT, "
                        "TURN_HOLD, SHORTPAUSE, BC, BARGE_IN or the table labels SHIFT, "
                        "PAUSE; default: all); the others are recorded as ignored_events in "
                        "the run's configuration")
    p.add_argument("--no-mute", action="store_true",
                   help="play the user channel as recorded through the window instead of "
                        "muting it after the event (MTR-style rounds: background voices, "
                        "backchannels and the next turn are heard)")
    p.add_argument("--counterfactual", nargs="?", const="silence", default=None,
                   choices=("silence", "noise"), metavar="silence|noise",
                   help="add each backchannel, barge-in and annotated background-speech "
                        "sample's twin with the user's act replaced from its onset (one more "
                        "continuation of the shared prefix); scoring reports the paired "
                        "effect of the act: silence (the default: the act removed) or noise "
                        "(signal-correlated noise: the act's envelope and onset without its "
                        "speech, so the effect is that of its content)")
    p.add_argument("--repeats", type=repeat_count, default=1, metavar="K",
                   help="tries per sample: K forks of the same snapshot with K seeds (sample "
                        "ids gain _r0 .. _r{K-1}); scoring then reports pass@k, pass^k and "
                        "stability (default 1: one try, ids unchanged)")


def plan_options(args: argparse.Namespace) -> Any:
    """The :class:`~duplexeval.plan._samples.PlanOptions` the arguments ask for (without
    ``--channels``: the dataset's user channels)."""
    from duplexeval.plan._samples import EvalProtocol, PlanOptions

    given: dict[str, Any] = {"protocol": EvalProtocol(args.protocol),
                             "context_max_len": args.context_max_len,
                             "include_short_pause": args.include_short_pause,
                             "mute": not args.no_mute,
                             "counterfactual": args.counterfactual is not None,
                             "counterfactual_replacement": args.counterfactual or "silence",
                             "repeats": getattr(args, "repeats", 1)}
    if getattr(args, "events", None) is not None:
        from duplexeval.events import EVENT_TO_TASK

        given["ignored_events"] = frozenset(EVENT_TO_TASK) - args.events
    if args.channels is not None:
        given["channels"] = args.channels
    if args.window is not None:
        given["window"] = args.window
    return PlanOptions(**given)


policy_seconds = number(float, 0, 60, unit="seconds")
"""A simulated user's delay: 0 to 60 seconds (finite)."""


def add_user_policy_options(p: argparse.ArgumentParser) -> None:
    """The simulated user's policy under ``--protocol interactive``
    (:class:`~duplexeval.runs._interactive.UserPolicy`; the defaults are its own)."""
    g = p.add_argument_group("simulated user (--protocol interactive)",
                             "how the user reacts to what it hears of the system; its turn "
                             "gaps are drawn from the dataset's reference gaps")
    g.add_argument("--patience", type=policy_seconds, default=None, metavar="SECONDS",
                   help="the user's next turn starts this long after its last one ends when "
                        "the system stays silent, and a backchannel or background speech "
                        "waiting for the system's reply gives up after it (default 3)")
    g.add_argument("--barge-in-after", type=policy_seconds, default=None, metavar="SECONDS",
                   help="a scripted barge-in starts this long after the system's heard "
                        "speech onset (default 1)")
    g.add_argument("--bc-after", type=policy_seconds, default=None, metavar="SECONDS",
                   help="a backchannel falls this long into the system's heard turn, if it "
                        "still speaks then (else it is skipped; default 1)")
    g.add_argument("--yield-delay", type=policy_seconds, default=None, metavar="SECONDS",
                   help="the user stops this long after the system barges in on it, where "
                        "the dialogue says it yielded (default 0.2)")
    g.add_argument("--no-yield", action="store_true",
                   help="the user never yields to a system barge-in (talks its turn out)")


_POLICY_KEYS = {"patience": "patience", "barge_in_after": "barge_in_after",
                "bc_after": "bc_after", "yield_delay": "yield_delay"}


def user_policy(args: argparse.Namespace) -> Any:
    """The :class:`~duplexeval.runs._interactive.UserPolicy` the options ask for (``None``
    when none is given: the default); a policy option with a static protocol is one
    :class:`DuplexevalError`."""
    given = {key: getattr(args, dest) for dest, key in _POLICY_KEYS.items()
             if getattr(args, dest, None) is not None}
    if getattr(args, "no_yield", False):
        given["yield_to_barge_in"] = False
    if not given:
        return None
    if args.protocol != "interactive":
        names = ", ".join("--" + k.replace("_", "-") for k in sorted(given))
        raise DuplexevalError(f"{names.replace('yield-to-barge-in', 'no-yield')}: the "
                              "simulated user's options need --protocol interactive")
    from duplexeval.runs._simulated_user import UserPolicy

    return UserPolicy(**given)


def add_analysis_options(p: argparse.ArgumentParser) -> None:
    """How to analyse a run's audio: the options of ``analyze`` and ``score``."""
    p.add_argument("--vad", choices=["silero", "energy", "webrtc"], default=None,
                   help="voice activity engine (default silero, energy-refined)")
    p.add_argument("--vad-threshold", type=fraction, default=None,
                   help="silero speech probability threshold (default 0.5)")
    p.add_argument("--asr", default=None,
                   help="faster-whisper model name or path; base-packaged (offline default) "
                        "or none (voice activity only)")
    p.add_argument("--language", default=None, help="ASR language (default: the dataset's)")
    p.add_argument("--scope", choices=["default", "timing"], default=None,
                   help="what Whisper transcribes: default = the words the timing metrics read "
                        "(system segments under 1 s) and the full transcripts of the TURN_SHIFT "
                        "samples that the content metrics read; timing = the former only")
    p.add_argument("--asr-processes", type=worker_count, default=None, metavar="N",
                   help="processes decoding Whisper windows (default: one per CPU, at most 4); "
                        "speed only, the words are the same")


def analysis_options(args: argparse.Namespace) -> Any:
    """The :class:`~duplexeval.analysis._pipeline.AnalysisOptions` asked for, or ``None`` when
    no analysis option was given (the caller's default applies)."""
    from duplexeval.analysis._pipeline import AnalysisOptions
    from duplexeval.speech._activity import VadEngine

    keys = ("vad", "vad_threshold", "asr", "language", "scope", "asr_processes")
    if all(getattr(args, k) is None for k in keys):
        return None
    options = AnalysisOptions()
    if args.vad is not None:
        options = replace(options, vad=replace(options.vad, engine=VadEngine(args.vad)))
    if args.vad_threshold is not None:
        options = replace(options, vad=replace(options.vad, silero_threshold=args.vad_threshold))
    if args.asr is not None:
        options = replace(options, asr=args.asr)
    if args.language is not None:
        options = replace(options, language=args.language)
    if args.scope == "timing":
        options = replace(options, content_event_types=())
    if args.asr_processes is not None:
        options = replace(options, asr_processes=args.asr_processes)
    return options


def add_executor_options(p: argparse.ArgumentParser, units: bool) -> None:
    """Where the work runs: ``--executor local|dask`` (with ``units``, ``run`` and ``eval``,
    also ``processes``), ``--scheduler``, ``--workers``, and with ``units``
    ``--unit-resources``."""
    what = ("the run's work units (one pass with its forks, or one sample under single)"
            if units else "the analysis's sample batches and the judge calls")
    g = p.add_argument_group("executor", f"where {what} run; the outputs are the same")
    choices = ("local", "processes", "dask") if units else ("local", "dask")
    g.add_argument("--executor", choices=choices, default="local",
                   help="local: in this process (default); "
                        + ("processes: the units in a pool of worker processes on this "
                           "machine, one thread each; " if units else "")
                        + "dask: on a Dask cluster")
    g.add_argument("--scheduler", metavar="tcp://HOST:PORT",
                   help="the Dask scheduler to use (default: a local cluster on 127.0.0.1)")
    g.add_argument("--workers", type=worker_count, metavar="N",
                   help="worker processes of the local Dask cluster or of --executor "
                        "processes (default: one per CPU)")
    if units:
        g.add_argument("--unit-resources", action="append", default=[], metavar="NAME=AMOUNT",
                       help="Dask worker resources every unit needs, e.g. GPU=1 (repeatable)")


def executor_from(args: argparse.Namespace) -> Any:
    """The executor the options of :func:`add_executor_options` name, a context manager
    (entered: connected; ``None`` for the local executor)."""
    resources = getattr(args, "unit_resources", [])
    dask_only = [name for name, given in (("--scheduler", args.scheduler),
                                          ("--workers", args.workers is not None),
                                          ("--unit-resources", resources)) if given]
    if args.executor == "local":
        if dask_only:
            raise DuplexevalError(f"{', '.join(dask_only)} needs --executor dask")
        return nullcontext()
    if args.executor == "processes":
        if args.scheduler or resources:
            raise DuplexevalError("--scheduler and --unit-resources need --executor dask")
        from duplexeval.runs._pool_executor import ProcessExecutor

        return ProcessExecutor(args.workers)
    if args.workers is not None and (args.workers < 1 or args.scheduler):
        raise DuplexevalError("--workers needs a positive count and no --scheduler (the "
                              "scheduler's own workers run the tasks)")
    from duplexeval.runs._dask_executor import DaskExecutor, parse_resources

    return DaskExecutor(args.scheduler, args.workers, parse_resources(resources))


def system_args(pairs: Sequence[str]) -> dict[str, str]:
    """``--system-arg KEY=VALUE`` pairs as a dict."""
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise DuplexevalError(f"--system-arg {pair!r}: expected KEY=VALUE")
        out[key] = value
    return out


def dataset_folder(text: str) -> Path:
    """A dataset folder, or a bundled suite name (built, or taken from the cache)."""
    from duplexeval.suites import SUITES, build_suite

    if not text.strip():  # Path("") is the current folder
        raise DuplexevalError("--dataset: empty; give a dataset folder or a suite name")
    path = Path(text)
    if path.exists() or "/" in text or "\\" in text:
        return path
    if text in SUITES:
        return build_suite(text)
    raise DuplexevalError(f"{text}: no such dataset folder, and not a bundled suite "
                          f"({', '.join(SUITES.names())})")


def add_judge_endpoint_options(g: argparse._ArgumentGroup) -> None:
    """The judge endpoint options shared by ``score`` and ``segment``: ``--judge-url``,
    ``--judge-model``, ``--judge-concurrency``, ``--judge-timeout``, ``--judge-cache``."""
    g.add_argument("--judge-url", type=http_url, default=None, metavar="URL",
                   help="an OpenAI-compatible endpoint, e.g. http://127.0.0.1:8080/v1 (key from "
                        "DUPLEXEVAL_JUDGE_API_KEY or OPENAI_API_KEY)")
    g.add_argument("--judge-model", default=None, metavar="MODEL", help="the judge model")
    add_judge_call_options(g)


def add_judge_call_options(g: argparse._ArgumentGroup) -> None:
    """How judges are called, whichever judges are named: ``--judge-concurrency``,
    ``--judge-timeout``, ``--judge-cache``."""
    g.add_argument("--judge-concurrency", type=worker_count, default=4, metavar="N",
                   help="requests in flight at once (default 4)")
    g.add_argument("--judge-timeout", type=positive, default=60.0, metavar="SECONDS",
                   help="seconds per request (default 60)")
    g.add_argument("--judge-cache", default=None, metavar="FILE",
                   help="the SQLite answer cache (default: the shared one in the cache folder)")
