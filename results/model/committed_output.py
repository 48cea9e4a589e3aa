"""What the model scripts of this folder share: their command line ([--write | --check]
[OVB_MODEL]) and what they do with the text they compute - print it, also write it beside the
script (--write), or exit 1 when the committed file is not today's output (--check, their ctest).
"""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def parse_args(argv):
    """(write, check, ovb-model path) from the arguments after the script's name."""
    write, check = "--write" in argv, "--check" in argv
    rest = [a for a in argv if a not in ("--write", "--check")]
    return write, check, rest[0] if rest else str(ROOT / "build/host/analysis/model/ovb-model")


def finish(script, text, write, check):
    """Print, write or check `text` against SCRIPT's committed .txt beside it."""
    script = Path(script).resolve()
    committed = script.with_suffix(".txt")
    if check:
        if committed.read_text(encoding="utf-8") != text:
            sys.exit(f"{script.stem}: {committed} is not today's output; "
                     f"run results/model/{script.name} --write")
        return
    if write:
        committed.write_text(text, encoding="utf-8")
    sys.stdout.write(text)
