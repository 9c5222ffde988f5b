"""``data quality DATASET_DIR``: the Table 2-style data-quality report (DNSMOS per channel, the
ASR round trip, what is not computed), and the DNSMOS scores ``data split --dnsmos`` ranks by."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from duplexeval.cli._options import out_file, positive, worker_count
from duplexeval.errors import DuplexevalError

__all__ = ["REPORT_FILE", "SCORES_FILE", "add_dnsmos_options", "add_quality", "dnsmos_for_split"]

REPORT_FILE = "data_quality.json"
"""The report, written into the dataset folder (or ``--output``)."""
SCORES_FILE = "dnsmos_scores.json"
"""``{dialogue id: score}`` next to the report: ``data split --scores`` reads it."""

Subparsers = Any  # argparse's private _SubParsersAction


def add_dnsmos_options(q: argparse.ArgumentParser) -> None:
    """``--dnsmos-hop``, ``--dnsmos-measure`` and ``--jobs``, shared by ``quality`` and
    ``split``."""
    q.add_argument("--dnsmos-hop", type=positive, default=1.0, metavar="SECONDS",
                   help="seconds between DNSMOS's 9.01 s windows (default 1, as DNSMOS's own "
                        "script; larger is faster and coarser)")
    q.add_argument("--dnsmos-measure", choices=["ovrl", "sig", "bak", "p808"], default="ovrl",
                   help="the dialogue score ranked by (default ovrl; a dialogue's score is "
                        "the mean of its channels)")
    q.add_argument("--jobs", type=worker_count, default=1,
                   help="dialogues scored at once, and ASR worker processes (default 1)")


def add_quality(data_sub: Subparsers) -> None:
    """``data quality DATASET_DIR [--split test] [--json] [--no-asr] [--no-dnsmos]``."""
    q = data_sub.add_parser("quality", help="data-quality report like the M3 paper's Table 2: "
                            "DNSMOS per channel and dialogue, the ASR round trip, and the "
                            "measures not computed")
    q.add_argument("dataset", metavar="DATASET_DIR")
    q.add_argument("--split", default="test")
    q.add_argument("-o", "--output", type=out_file, default=None, metavar="FILE.json",
                   help=f"where the report goes (default: DATASET_DIR/{REPORT_FILE}; the "
                        f"scores go to {SCORES_FILE} beside it)")
    q.add_argument("--json", action="store_true", help="print the report as JSON")
    q.add_argument("--no-asr", action="store_true", help="skip the ASR round trip")
    q.add_argument("--no-dnsmos", action="store_true", help="skip DNSMOS")
    q.add_argument("--asr-model", default=None, metavar="NAME",
                   help="faster-whisper model of the round trip (default: the packaged base)")
    add_dnsmos_options(q)
    q.set_defaults(func=_quality)


def _progress(total: int) -> Any:
    """A progress bar on stderr (hidden when there is nothing to count) and its tick."""
    from tqdm import tqdm

    bar = tqdm(total=total, desc="dnsmos", unit="dialogue", file=sys.stderr,
               disable=total == 0)
    return bar, lambda _id: bar.update(1)


def _quality(args: argparse.Namespace) -> int:
    from duplexeval._fileio import atomic_write_json
    from duplexeval.data._validate import Need, load_dataset
    from duplexeval.report._text import format_table
    from duplexeval.synth._data_quality import dnsmos_scores, quality_table, table2_rows

    root = Path(args.dataset)
    dataset, _ = load_dataset(root, args.split, audio=Need.REQUIRE)
    transcriber = None
    if not args.no_asr and args.asr_model:
        from duplexeval.speech._asr import Transcriber

        transcriber = Transcriber(args.asr_model, processes=args.jobs)
    bar, tick = _progress(0 if args.no_dnsmos else len(dataset.dialogues))
    try:
        with bar:
            report = quality_table(dataset, dnsmos=not args.no_dnsmos, asr=not args.no_asr,
                                   hop=args.dnsmos_hop, jobs=args.jobs,
                                   transcriber=transcriber, progress=tick)
    finally:
        if transcriber is not None:
            transcriber.close()
    out = Path(args.output) if args.output else root / REPORT_FILE
    atomic_write_json(out, report)
    if "dnsmos" in report:
        atomic_write_json(out.parent / SCORES_FILE,
                          dnsmos_scores(report["dnsmos"]["dialogues"], args.dnsmos_measure))
    if args.json:
        json.dump(report, sys.stdout, ensure_ascii=False, indent=2)
        print()
        return 0
    print(f"{root} [{args.split}]: {report['dialogues']} dialogue(s), {report['hours']:.2f} h")
    print("\n".join(format_table(["measure", "value"], table2_rows(report))))
    print("not computed: " + "; ".join(f"{k} ({v})" for k, v in report["not_computed"].items()))
    print(f"report in {out}")
    return 0


def dnsmos_for_split(args: argparse.Namespace, dataset: Any) -> dict[str, float]:
    """The DNSMOS score of every dialogue of ``dataset`` for ``data split --dnsmos``; a
    dialogue without audio is an error (it could not be ranked)."""
    from duplexeval.synth._data_quality import dnsmos_dataset, dnsmos_scores

    silent = [d.id for d in dataset.dialogues if d.audio is None]
    if silent:
        raise DuplexevalError(f"--dnsmos: {len(silent)} dialogue(s) without audio "
                              f"(first: {silent[0]})")
    bar, tick = _progress(len(dataset.dialogues))
    with bar:
        per = dnsmos_dataset(dataset, args.dnsmos_hop, args.jobs, progress=tick)
    return dnsmos_scores(per, args.dnsmos_measure)
