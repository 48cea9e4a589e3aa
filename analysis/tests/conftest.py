"""Shared test helpers: fixture paths, running the CLI in-process and as the executable."""

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ANALYSIS = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ANALYSIS))

FIXTURES = ANALYSIS / "tests" / "fixtures"
LOGS = FIXTURES / "megatron_logs"
RESULTS = FIXTURES / "results"
EXECUTABLE = ANALYSIS / "ovb-analysis"


@pytest.fixture
def cli(capsys):
    """Run ovb-analysis in-process: returns (exit status, stdout, stderr)."""
    from ovb_analysis.cli import main

    def run(*args):
        try:
            rc = main([str(a) for a in args])
        except SystemExit as e:  # argparse: usage errors and --help
            rc = e.code
        out = capsys.readouterr()
        return rc, out.out, out.err
    return run


def run_executable(*args, env=None):
    """Run the executable with this interpreter (which has the requirements installed)."""
    full_env = dict(os.environ, **(env or {}))
    return subprocess.run([sys.executable, str(EXECUTABLE), *map(str, args)], capture_output=True,
                          text=True, env=full_env, timeout=300)


def load_script(path, name):
    """A Python script of the repository (not a package module) loaded as a module, by path,
    with its folder on the import path as when it runs (for the modules beside it)."""
    folder = str(Path(path).parent)
    if folder not in sys.path:
        sys.path.append(folder)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod
