#!/usr/bin/env python3
"""Pins the suite's planning rule (ovb_suite.presets.fits) to gpt4d's own validation.

The suite plans without a build, so presets.fits() restates gpt4d's rules; this test asks
`gpt4d --check-config --json` (one process, no ranks) about every preset model on the grids the
suite derives, and about small shapes chosen so that each rule - hidden % heads, hidden % Gx*Gy,
heads % Gy, vocab % Gy, batch % Gdata*Gz, batch % micro-batch*Gdata*Gz, every weight block % Gz -
decides some case, and fails on the first disagreement.

  python3 slurm/tests/config_parity.py build/host/endtoend/gpt4d
"""

import itertools
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from ovb_suite import presets  # noqa: E402


def gpt4d_verdict(gpt4d, model, grid, batch, micro_batch):
    """(valid, error) as gpt4d --check-config --json says."""
    cmd = [gpt4d, "--check-config", "--json", "--backend", "host",
           "--layers", str(model.layers), "--hidden", str(model.hidden),
           "--heads", str(model.heads), "--seq", str(model.seq), "--vocab", str(model.vocab),
           "--batch", str(batch), "--gx", str(grid[0]), "--gy", str(grid[1]),
           "--gz", str(grid[2]), "--gdata", str(grid[3]), "--micro-batch", str(micro_batch)]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    lines = [ln for ln in p.stdout.splitlines() if ln.startswith("{")]
    if not lines:
        raise SystemExit(f"config_parity: no JSON from {' '.join(cmd)} (exit {p.returncode}): "
                         f"{p.stderr.strip()}")
    doc = json.loads(lines[-1])
    if doc["valid"] != (p.returncode == 0):
        raise SystemExit(f"config_parity: exit {p.returncode} disagrees with {doc} for "
                         f"{' '.join(cmd)}")
    return doc["valid"], doc.get("error", "")


def cases():
    """(model, grid, batch, micro-batch): the presets on their grids, then shapes that each rule
    decides."""
    seen = set()
    for (name, backend), p in sorted(presets._TABLE.items()):
        for ranks in (4, 8):
            batch = presets.global_batch(p.model, ranks)
            for pat in p.grid_patterns:
                g = presets.grid_for(pat, ranks)
                if (p.model, g, batch) not in seen:
                    seen.add((p.model, g, batch))
                    yield p.model, g, batch, 0
    # Gz = 3 splits some weight blocks and not others; Gy = 2 the heads and vocabulary or not.
    grids = ((1, 1, 3, 1), (1, 2, 1, 2), (2, 1, 3, 1))
    for hidden, heads, vocab, grid in itertools.product((48, 64), (3, 4), (255, 256), grids):
        batch = 6
        yield presets.Model(1, hidden, heads, 8, vocab, batch, 1), grid, batch, 0
    # batch not divisible by Gdata*Gz.
    yield presets.Model(1, 64, 4, 8, 256, 3, 1), (1, 1, 1, 2), 3, 0
    # Micro-batches: batch divisible by micro-batch*Gdata*Gz or not.
    for grid, micro_batch in itertools.product(((1, 1, 3, 1), (1, 2, 1, 2), (1, 1, 1, 1)),
                                               (1, 4, 5)):
        yield presets.Model(1, 64, 4, 8, 256, 12, 1), grid, 12, micro_batch


def main():
    if len(sys.argv) != 2:
        raise SystemExit("usage: config_parity.py GPT4D")
    gpt4d = sys.argv[1]
    n = accepted = 0
    failures = []
    for model, grid, batch, micro_batch in cases():
        ours = presets.fits(model, grid, batch, micro_batch)
        theirs, error = gpt4d_verdict(gpt4d, model, grid, batch, micro_batch)
        n += 1
        accepted += theirs
        if ours != theirs:
            failures.append(f"{model} grid {grid} batch {batch} micro-batch {micro_batch}: "
                            f"presets.fits says {ours}, gpt4d says {theirs} {error}")
    for f in failures:
        print("config_parity: MISMATCH", f)
    # Both verdicts must occur, or the comparison proves nothing.
    if accepted in (0, n):
        raise SystemExit(f"config_parity: all {n} cases {'valid' if accepted else 'invalid'}")
    print(f"config_parity: {n} cases ({accepted} valid), {len(failures)} mismatches")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
