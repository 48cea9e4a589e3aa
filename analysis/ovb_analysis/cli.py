"""The `ovb-analysis` command line: argparse subcommands, each in a small handler module.

Bad input ends with one line on stderr ("ovb-analysis: error: ...") and a non-zero exit status
(1 for bad data, 2 for bad usage); set OVB_ANALYSIS_DEBUG=1 to get the Python traceback instead.
"""

import argparse
import os
import sys

from . import (__version__, cli_ab, cli_megatron, cli_nccl, cli_plots, cli_summarize,
               cli_timeline)
from .errors import AnalysisError
from .io_util import is_stdout_name, stdout_for_results

PROG = "ovb-analysis"


class Parser(argparse.ArgumentParser):
    """argparse that reports a usage error as one line instead of usage text + error."""

    def error(self, message):
        sub = self.prog.removeprefix(PROG).strip()
        where = f"{sub}: " if sub else ""
        self.exit(2, f"{PROG}: error: {where}{message} (see {self.prog} --help)\n")


def build_parser():
    p = Parser(prog=PROG, description="OverlapBench analysis: Megatron-LM launch, log parsing and "
               "comparison, paper-style plots and the results report.")
    p.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    sub.required = True
    cli_megatron.add_parsers(sub)
    cli_nccl.add_parsers(sub)
    cli_plots.add_parsers(sub)
    cli_summarize.add_parsers(sub)
    cli_ab.add_parsers(sub)
    cli_timeline.add_parsers(sub)
    return p


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    # A result to "-": stdout carries it alone, the other text goes to stderr.
    to_stdout = any(is_stdout_name(getattr(args, k, None)) for k in ("json", "out"))
    try:
        with stdout_for_results(to_stdout):
            return args.handler(args) or 0
    except AnalysisError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 1
    except BrokenPipeError:
        # Output piped into e.g. `head`: not an error; keep Python quiet at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    except Exception as e:  # noqa: BLE001  a bug or unforeseen input: one line, no traceback
        if os.environ.get("OVB_ANALYSIS_DEBUG"):
            raise
        print(f"{PROG}: error: unexpected {type(e).__name__}: {e} "
              "(set OVB_ANALYSIS_DEBUG=1 for the traceback)", file=sys.stderr)
        return 3
