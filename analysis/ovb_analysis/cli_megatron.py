"""Subcommands megatron-log, megatron-cmd and compare-megatron."""

import json
import sys
from pathlib import Path

from . import megatron_compare, megatron_log, results, runs, stats
from .cli_types import non_negative_int, positive_float
from .errors import AnalysisError
from .io_util import atomic_write, dumps_json
from .megatron_cmd import add_cmd_parser


def warn(msg):
    print(f"warning: {msg}", file=sys.stderr)


def add_parsers(sub):
    p = sub.add_parser("megatron-log", help="parse a Megatron-LM training log",
                       description="Parse a Megatron-LM training log into one record per iteration "
                       "line; non-log lines are ignored, a cut-off last line is skipped with a "
                       "warning.")
    p.add_argument("log", metavar="LOG", help="Megatron-LM log file")
    p.add_argument("--json", action="store_true",
                   help="print a JSON array, one object per iteration line")
    p.add_argument("--warmup", type=non_negative_int, default=None, metavar="N",
                   help="warm-up iterations left out of the summary (default: max(3, 10%%))")
    p.set_defaults(handler=cmd_log)

    add_cmd_parser(sub)

    p = sub.add_parser("compare-megatron", help="compare a gpt4d run with a matched Megatron-LM run",
                       description="Iteration time and TFLOP/s per GPU of a gpt4d run and a "
                       "Megatron-LM run, both recomputed with the suite's formula; warm-up "
                       "excluded, medians with p10/p90 spread.")
    p.add_argument("--gpt4d", required=True, metavar="RESULT.json", help="gpt4d --out result file")
    p.add_argument("--megatron", required=True, metavar="LOG",
                   help="Megatron-LM log, its parsed JSON, or a run folder "
                   "(megatron_config.json + log)")
    p.add_argument("--warmup", type=non_negative_int, default=None, metavar="N",
                   help="warm-up iterations dropped on both sides (default: max(3, 10%% of the "
                   "iterations), at least one iteration kept)")
    p.add_argument("--json", metavar="OUT", help="also write the comparison as JSON to OUT")
    p.add_argument("--peak", type=positive_float, default=None, metavar="TFLOPS",
                   help="dense peak TFLOP/s per GPU when the gpt4d context has none")
    p.set_defaults(handler=cmd_compare)


def cmd_log(args):
    parsed = megatron_log.parse_log_file(args.log)
    for w in parsed.warnings:
        warn(w)
    if args.json:
        sys.stdout.write(json.dumps(parsed.records, indent=2, allow_nan=False) + "\n")
        return 0
    print(f"{'iter':>6} {'ms':>9} {'TFLOP/s':>8} {'lm loss':>10} {'grad norm':>9} {'skipped':>7}")
    for r in parsed.records:
        cells = [f"{r['iteration']:>6}", f"{r['elapsed_ms']:>9.1f}"]
        for key, width, spec in (("tflops_per_gpu", 8, ".1f"), ("lm_loss", 10, ".4f"),
                                 ("grad_norm", 9, ".3f")):
            cells.append(f"{'-':>{width}}" if r[key] is None else f"{r[key]:>{width}{spec}}")
        cells.append(f"{'-' if r['skipped_iterations'] is None else r['skipped_iterations']:>7}")
        print(" ".join(cells))
    drop = stats.default_warmup(len(parsed.records)) if args.warmup is None else args.warmup
    kept = [r["elapsed_ms"] for r in parsed.records[drop:]]
    if kept:
        med, p10, p90 = stats.spread(kept)
        print(f"{len(parsed.records)} iteration lines; after {drop} warm-up: median {med:.1f} ms "
              f"(p10 {p10:.1f}, p90 {p90:.1f})")
    return 0


def _megatron_file(path):
    path = Path(path)
    if path.is_dir():
        logs = sorted(p for p in path.iterdir() if p.suffix in results.LOG_SUFFIXES)
        if not logs:
            raise AnalysisError(f"{path}: run folder without a .log/.out file")
        path = logs[0]
    kind, doc = results.load_file(path)
    if kind != "megatron":
        raise AnalysisError(f"{path}: not a Megatron-LM log or parsed log (found {kind})")
    for w in doc["warnings"]:
        warn(w)
    return results.ResultFile(path, str(path), kind, doc)


def cmd_compare(args):
    kind, doc = results.load_file(args.gpt4d)
    if kind != "gpt4d":
        raise AnalysisError(f"{args.gpt4d}: not a gpt4d result (found {kind})")
    grun = runs.from_gpt4d(results.ResultFile(Path(args.gpt4d), args.gpt4d, kind, doc))
    if grun.peak is None:
        grun.peak = args.peak
    mfile = _megatron_file(args.megatron)
    if not mfile.doc.get("config"):
        print("note: the Megatron-LM run has no megatron_config.json or arguments block; assuming "
              "the gpt4d run's model and GPU count", file=sys.stderr)
    mrun = runs.from_megatron(mfile, fallback=grun)
    result = megatron_compare.compare(grun, mrun, args.warmup)
    sys.stdout.write(megatron_compare.format_table(result))
    for m in result["mismatches"]:
        warn(f"runs are not matched: {m}")
    if args.json:
        atomic_write(args.json, dumps_json(result))
    return 0
