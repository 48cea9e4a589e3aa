"""Subcommand nccl-compare: ovb-collective's busbw beside nccl-tests' on the same collectives,
sizes and ranks (nccl_tests.py). Exit status 1 when a judged size is outside the tolerance."""

import sys

from . import nccl_tests
from .cli_types import non_negative_int, positive_float
from .errors import AnalysisError
from .io_util import atomic_write, dumps_json, load_json


def add_parsers(sub):
    p = sub.add_parser("nccl-compare", help="compare ovb-collective's busbw with nccl-tests'",
                       description="Parse nccl-tests output (all_reduce_perf, reduce_scatter_perf, "
                       "all_gather_perf) and compare its busbw, size by size and in and out of "
                       "place, with an ovb-collective --benchmark_out file of the same ranks.")
    p.add_argument("--nccl-tests", nargs="+", required=True, metavar="LOG",
                   help="nccl-tests output files (one per program run)")
    p.add_argument("--ovb", nargs="+", required=True, metavar="JSON",
                   help="ovb-collective --benchmark_out files (group world) of the same ranks")
    p.add_argument("--tolerance", type=positive_float, default=3.0, metavar="PCT",
                   help="largest |ovb/nccl - 1| in percent that counts as agreement (default 3)")
    p.add_argument("--min-bytes", type=non_negative_int, default=1 << 20, metavar="B",
                   help="judge only sizes of at least B bytes (default 1048576: smaller sizes "
                   "measure latency); smaller ones are listed")
    p.add_argument("--json", metavar="OUT", help="also write the comparison as JSON to OUT")
    p.set_defaults(handler=cmd_compare)


def cmd_compare(args):
    runs = [nccl_tests.parse_file(f) for f in args.nccl_tests]
    benchmarks = []
    for path in args.ovb:
        doc = load_json(path)
        found = doc.get("benchmarks") if isinstance(doc, dict) else None
        if not isinstance(found, list):
            raise AnalysisError(f"{path}: not a Google Benchmark file (no list 'benchmarks')")
        benchmarks += found
    result = nccl_tests.compare(runs, benchmarks, args.tolerance, args.min_bytes)
    sys.stdout.write(nccl_tests.format_table(result))
    if args.json:
        result["inputs"] = {"nccl_tests": list(args.nccl_tests), "ovb": list(args.ovb)}
        result["nccl_tests_avg_busbw"] = {r["op"]: r["avg_busbw"] for r in runs}
        atomic_write(args.json, dumps_json(result))
    if result["judged"] == 0:
        raise AnalysisError(f"no size of at least {args.min_bytes} B in both: nothing judged")
    return 1 if result["outside"] else 0
