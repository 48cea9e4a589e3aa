"""The executable: --help everywhere, bad input gives one stderr line and no traceback."""

import os

import pytest

from conftest import EXECUTABLE, LOGS, RESULTS, run_executable

SUBCOMMANDS = ("megatron-log", "megatron-cmd", "compare-megatron", "plot", "report", "ab")


def test_executable_file():
    assert os.access(EXECUTABLE, os.X_OK)
    assert EXECUTABLE.read_text().startswith("#!/usr/bin/env python3\n")


def test_an_interpreter_without_the_requirements_hands_over_to_the_one_with_them():
    import subprocess
    import sys
    # -S: no site-packages, so numpy and matplotlib cannot be imported, as with a bare system
    # Python; the executable must run again with OVB_PYTHON (else the repository's .venv).
    env = dict(os.environ, OVB_PYTHON=sys.executable)
    env.pop("OVB_ANALYSIS_REEXEC", None)
    r = subprocess.run([sys.executable, "-S", str(EXECUTABLE), "--version"], capture_output=True,
                       text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "ovb-analysis" in r.stdout + r.stderr
    # Already handed over once and still nothing: one line naming the fix, no loop.
    env["OVB_ANALYSIS_REEXEC"] = "1"
    r = subprocess.run([sys.executable, "-S", str(EXECUTABLE), "--version"], capture_output=True,
                       text=True, env=env, timeout=300)
    assert r.returncode == 1 and "install the requirements" in r.stderr


def test_help_on_every_subcommand(cli):
    top = run_executable("--help")
    assert top.returncode == 0
    for sub in SUBCOMMANDS:
        assert sub in top.stdout
        rc, out, _ = cli(sub, "--help")
        assert rc == 0 and out.startswith(f"usage: ovb-analysis {sub}")


@pytest.mark.parametrize("args, code, text", [
    (("megatron-log", "/nonexistent/x.log"), 1, "/nonexistent/x.log: no such file"),
    (("megatron-log", LOGS / "no_iterations.log"), 1, "no Megatron-LM iteration lines"),
    (("plot", "gemm", RESULTS / "broken" / "gpt4d_killed.json", "-o", "/tmp/ovb-none"), 1,
     "cannot make the gemm plot"),
    (("compare-megatron", "--gpt4d", RESULTS / "broken" / "gpt4d_killed.json", "--megatron",
      LOGS / "current.log"), 1, "malformed JSON"),
    (("megatron-log", LOGS / "current.log", "--bogus"), 2, "unrecognized arguments: --bogus"),
    (("frobnicate",), 2, "invalid choice: 'frobnicate'"),
    ((), 2, "the following arguments are required: COMMAND"),
    (("megatron-cmd", "--gpus", "x"), 2, "invalid int value: 'x'"),
    (("megatron-log", LOGS / "current.log", "--warmup", "-1"), 2,
     "megatron-log: argument --warmup: must not be negative: '-1'"),
    (("report", RESULTS, "--peak", "0"), 2, "argument --peak: must be a positive number: '0'"),
    (("plot", "all", RESULTS / "broken", "-o", "/tmp/ovb-none"), 1,
     "no plot could be made from the inputs (no result file of the suite)"),
    (("megatron-cmd", "--preset", "1.3B", "--gpus", 8, "--global-batch", 8, "--tp", 3), 1,
     "invalid Megatron-LM configuration: TP*PP = 3 does not divide the GPU count 8; attention "
     "heads 16 not divisible by TP=3"),
    (("report", RESULTS, "-o", "/proc/ovb-report"), 1, "cannot write /proc/ovb-report: "),
])
def test_bad_input_is_one_line_without_traceback(args, code, text):
    res = run_executable(*args)
    assert res.returncode == code
    assert "Traceback" not in res.stderr
    lines = [line for line in res.stderr.splitlines()
             if not line.startswith(("warning:", "note:"))]
    assert len(lines) == 1 and text in lines[0], res.stderr
    assert lines[0].startswith("ovb-analysis: error: ")
