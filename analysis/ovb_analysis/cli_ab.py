"""`ovb-analysis ab`: an option's cost from interleaved A/B runs of two commands (ab.py)."""

from . import ab
from .io_util import atomic_write_json


def add_parsers(sub):
    p = sub.add_parser("ab", help="cost of an option from interleaved A/B runs",
                       description="Runs two variants of a command alternately (A B A B ...), "
                       "after warm-up pairs that are left out, and reports the per-pair ratio B/A: "
                       "median and p10/p90. The measure is each run's wall time, or with --field "
                       "a number from the JSON result each run writes at {out} (e.g. "
                       "summary.p50_ms of gpt4d --out {out}).")
    p.add_argument("--a", required=True, metavar="CMD", help="variant A, a shell command line")
    p.add_argument("--b", required=True, metavar="CMD", help="variant B, a shell command line")
    p.add_argument("--pairs", type=int, default=ab.MIN_PAIRS,
                   help=f"timed pairs (at least {ab.MIN_PAIRS}, the default)")
    p.add_argument("--warmup-pairs", type=int, default=1, help="untimed pairs first (default 1)")
    p.add_argument("--field", metavar="DOTTED.PATH",
                   help="measure: this number of the JSON each run writes at {out}")
    p.add_argument("--json", metavar="OUT.json", help="also write the result document")
    p.add_argument("--keep", metavar="DIR",
                   help="keep each run's result in DIR/{A,B}<pair>.json as it ends")
    p.add_argument("--loss-rtol", type=float, metavar="X",
                   help="compare each pair's per-iteration losses (iterations[].loss of the "
                   "results at {out}); exit 1 when one differs by more than X relatively")
    p.set_defaults(handler=cmd_ab)


def cmd_ab(args):
    doc = ab.interleaved(args.a, args.b, args.pairs, args.warmup_pairs, args.field,
                         keep=args.keep, loss_rtol=args.loss_rtol)
    if args.json:
        atomic_write_json(args.json, doc)
    print(ab.markdown(doc))
    return 0 if doc.get("loss_same", True) else 1
