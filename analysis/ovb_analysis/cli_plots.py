"""Subcommands plot and report."""

import sys
from pathlib import Path

from . import report, results
from .cli_types import non_negative_int, positive_float
from .errors import AnalysisError
from .plots import Options, kinds


def add_parsers(sub):
    names = list(kinds())
    p = sub.add_parser("plot", help="make one kind of plot from result files",
                       description="Make one kind of paper-style plot (PDF and PNG) from result "
                       "files or folders. Kinds: " + ", ".join(names) + "; 'all' makes every kind "
                       "that has data.")
    p.add_argument("kind", metavar="KIND", choices=names + ["all"], help=" | ".join(names + ["all"]))
    p.add_argument("inputs", metavar="INPUT", nargs="+", help="result files or folders")
    p.add_argument("-o", "--outdir", required=True, metavar="OUTDIR", help="folder for the figures")
    _common(p)
    p.set_defaults(handler=cmd_plot)

    p = sub.add_parser("report", help="build the HTML + Markdown report of a results folder",
                       description="Regenerate every plot from the result JSON in RESULTS_DIR "
                       "and write report.html (self-contained), report.md and the figures. Plots "
                       "that cannot be made and files that cannot be read are listed with the "
                       "reason.")
    p.add_argument("results_dir", metavar="RESULTS_DIR")
    p.add_argument("-o", "--outdir", metavar="OUTDIR", help="default: RESULTS_DIR/report")
    _common(p)
    p.set_defaults(handler=cmd_report)


def _common(p):
    p.add_argument("--warmup", type=non_negative_int, default=None, metavar="N",
                   help="warm-up iterations dropped from training runs (default: max(3, 10%%))")
    p.add_argument("--peak", type=positive_float, default=None, metavar="TFLOPS",
                   help="dense peak TFLOP/s per GPU for runs whose files carry none")


def _options(args):
    return Options(warmup=args.warmup, peak=args.peak)


def cmd_plot(args):
    options = _options(args)
    rs = results.load_inputs(args.inputs, exclude=[args.outdir])
    for rel, reason in rs.failed:
        print(f"warning: {rel}: {reason}", file=sys.stderr)
    only = None if args.kind == "all" else {args.kind}
    outputs, missing = report.make_plots(rs, Path(args.outdir), options, only)
    if args.kind != "all" and missing:
        raise AnalysisError(f"cannot make the {args.kind} plot: {missing[0][2]}")
    if not outputs:
        what = "no result file of the suite" if not rs.files else \
            "; ".join(f"{kind}: {reason}" for kind, _, reason in missing)
        raise AnalysisError(f"no plot could be made from the inputs ({what})")
    for kind, _, reason in missing:
        print(f"note: {kind} plot not made: {reason}", file=sys.stderr)
    for o in outputs:
        for f in o.files:
            print(f)
    return 0


def cmd_report(args):
    rep, written = report.build(args.results_dir, args.outdir, _options(args))
    for step, _, status, error in rep.steps:
        print(f"note: suite step {step} {status}" + (f": {error}" if error else ""), file=sys.stderr)
    for rel, reason in rep.failed:
        print(f"warning: could not read {rel}: {reason}", file=sys.stderr)
    for kind, _, reason in rep.missing:
        print(f"note: {kind} plot not made: {reason}", file=sys.stderr)
    print(f"wrote {written[-2]} and {written[-1]} ({len(rep.outputs)} figures, "
          f"{len(rep.missing)} plot kinds without data, {len(rep.failed)} unreadable files)")
    return 0
