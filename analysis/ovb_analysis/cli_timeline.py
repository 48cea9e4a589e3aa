"""Subcommand timeline: a predicted iteration (ovb-model explain --timeline) and a traced run's
measured one, per rank and stream, on one time axis (plots/timeline.py)."""

from .plots import timeline


def add_parsers(sub):
    p = sub.add_parser("timeline", help="draw a predicted and a measured iteration side by side",
                       description="Draw the predicted iteration (the trace ovb-model explain "
                       "--timeline writes) above one steady-state iteration of a traced run "
                       "(its folder of per-rank traces), per rank and stream, in ms from the "
                       "iteration's start; writes OUT.png and OUT.pdf.")
    p.add_argument("predicted", metavar="PREDICTED", help="trace of ovb-model explain --timeline")
    p.add_argument("traces", metavar="TRACE_DIR", help="the traced run's folder of rank traces")
    p.add_argument("-o", "--out", required=True, metavar="OUT.png", help="figure to write")
    p.set_defaults(handler=cmd_timeline)


def cmd_timeline(args):
    paths, pred_ms, meas_ms = timeline.make(args.predicted, args.traces, args.out)
    print(f"predicted {pred_ms:.3f} ms, measured {meas_ms:.3f} ms; wrote "
          + ", ".join(str(p) for p in paths))
