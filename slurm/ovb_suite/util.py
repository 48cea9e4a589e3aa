"""Small shared pieces of the driver: its error type, atomic file writes, progress lines."""

import argparse
import json
import os
import re
import sys
import time
from datetime import datetime, timezone

# The analysis part's standard-library helpers (the suite runs the analysis, never the reverse).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.realpath(__file__)))), "analysis"))
from ovb_analysis import io_util  # noqa: E402
from ovb_analysis.errors import AnalysisError  # noqa: E402


class SuiteError(Exception):
    """A problem the user must fix (bad option, unreadable file, wrong folder); main() prints it as
    one line `ovb-suite: error: ...` and exits with status 2."""


class OneLineParser(argparse.ArgumentParser):
    """argparse that reports a usage error as one line (`PROG: error: ... (see --help)`), exit 2."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


# The in-process collective watchdog's variable (core/include/ovb/watchdog.hpp): seconds, 0 = off.
COMM_VAR = "OVB_COMM_TIMEOUT_S"


def parse_comm_timeout(value, where):
    """Seconds >= 0 from a string ("" or 0: the in-process watchdog off, as in core); SuiteError
    naming `where`. The driver passes the parsed value on (`:g`), so the binaries see a plain
    number."""
    try:
        x = float(value) if value != "" else 0.0
    except (TypeError, ValueError):
        x = -1.0
    if not x >= 0 or x == float("inf"):
        raise SuiteError(f"{where}={value!r}: expected seconds >= 0 (0: no collective watchdog)")
    return x


def now():
    return time.time()


def iso(t):
    """UTC time stamp of an epoch time, as in the result files' context."""
    return datetime.fromtimestamp(t, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def atomic_write_text(path, text):
    """Writes `text` to `path` atomically (the repository's one writer, analysis/ovb_analysis/
    io_util.py); a failure is a SuiteError naming the file."""
    try:
        io_util.atomic_write(path, text)
    except AnalysisError as e:
        raise SuiteError(str(e)) from None


def atomic_write_json(path, doc):
    try:
        io_util.atomic_write_json(path, doc)
    except AnalysisError as e:
        raise SuiteError(str(e)) from None


def read_json(path):
    """The parsed JSON of a file; SuiteError naming the file and the problem otherwise."""
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except FileNotFoundError:
        raise SuiteError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as e:
        raise SuiteError(f"{path}: cannot read: {e}") from None
    except json.JSONDecodeError as e:
        raise SuiteError(f"{path}: malformed JSON at line {e.lineno} column {e.colno}: {e.msg}") \
            from None


def progress(message):
    """One progress line on stdout (the Slurm job's output), flushed at once."""
    stamp = datetime.now().strftime("%H:%M:%S")
    sys.stdout.write(f"[ovb-suite {stamp}] {message}\n")
    sys.stdout.flush()


ANSI_RE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
# A program's own failure line: "PROG: error: ..." (run_main, "[rank N] " in front with several
# ranks) or Python's "XError: ...". Launcher banners (Open MPI's dashed boxes, "mpirun detected
# that ...", "srun: error: ...") are what comes after it and say less.
_OWN_ERROR_RE = re.compile(r"^(\[rank \d+\] )?[\w.+-]+: error: |^[A-Za-z_.]*(Error|Exception): ")
_LAUNCHER_RE = re.compile(r"^(-{5,}|={5,}|srun: |slurmstepd: |mpirun |prterun |\[[\w.-]+:\d+\] )")


def failure_line(lines):
    """The line that says why a step failed, from the end of its log: the last line in the
    program's own error format, else the last line that is not a launcher's banner, without
    terminal colour codes; "" when there is none."""
    clean = [ANSI_RE.sub("", line).strip() for line in lines]
    clean = [line for line in clean if line and not line.startswith("==== ovb-suite:")]
    for line in reversed(clean):
        if _OWN_ERROR_RE.search(line) and not line.startswith(("srun: ", "slurmstepd: ")):
            return line
    for line in reversed(clean):
        if not _LAUNCHER_RE.search(line):
            return line
    return clean[-1] if clean else ""


def tail_lines(path, n=20, max_bytes=65536):
    """The last `n` lines of a text file (reads at most `max_bytes` from its end)."""
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - max_bytes))
            data = f.read()
    except OSError:
        return []
    lines = data.decode("utf-8", errors="replace").splitlines()
    return [line.rstrip() for line in lines[-n:]]
