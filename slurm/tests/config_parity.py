#!/usr/bin/env python3
"""Pins the suite's planning rule (ovb_suite.presets.fits) to gpt4d's own validation.

The suite plans without a build, so presets.fits() restates gpt4d's rules; this test asks
`gpt4d --check-config --json` (one process, no ranks) about every preset model on the grids the
suite derives, and about small shapes chosen so that each rule - hidden % heads, hidden % Gx*Gy,
heads % Gy, vocab % Gy, batch % Gdata*Gz, batch % micro-batch*Gdata*Gz, every weight block % Gz,
and Llama's heads % kv-heads, even head dimension, kv-heads % Gy, SwiGLU width % Gy, GQA or other
MLP widths only for Llama - decides some case; every mismatch is listed and fails the test.
It also pins the Python spelling of the overlap flags (ovb_analysis.overlap_flags) to gpt4d's
table: `--overlap all` and the Python ALL give FLAGS, each flag alone itself, and "all" with the
opt-in flags (tp) every flag, in the table's order.

  python3 slurm/tests/config_parity.py build/host/endtoend/gpt4d
"""

import itertools
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from ovb_suite import presets  # noqa: E402

from ovb_analysis import overlap_flags  # noqa: E402 (the path is set by ovb_suite.util)


def gpt4d_verdict(gpt4d, model, grid, batch, micro_batch):
    """(valid, error) as gpt4d --check-config --json says."""
    cmd = [gpt4d, "--check-config", "--json", "--backend", "host",
           *presets.model_args(model, batch), "--gx", str(grid[0]), "--gy", str(grid[1]),
           "--gz", str(grid[2]), "--gdata", str(grid[3]), "--micro-batch", str(micro_batch)]
    if model.arch == "gpt" and (model.kv_heads or model.ffn_hidden):
        # A GPT shape with GQA or another MLP width: gpt4d must refuse it as well.
        cmd += ["--kv-heads", str(model.kv()), "--ffn-hidden", str(model.ffn())]
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


def gpt4d_overlap(gpt4d, value):
    """The overlap list gpt4d --check-config --json writes for --overlap VALUE, None if refused."""
    model = presets.Model(1, 64, 4, 8, 256, 4, 1)
    cmd = [gpt4d, "--check-config", "--json", "--backend", "host", *presets.model_args(model, 4),
           "--overlap", value]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    lines = [ln for ln in p.stdout.splitlines() if ln.startswith("{")]
    if p.returncode != 0 or not lines:
        return None
    return json.loads(lines[-1])["config"]["overlap"]


def overlap_flag_mismatches(gpt4d):
    """Where the Python overlap flags and gpt4d's table disagree (an empty list when they agree)."""
    want = list(overlap_flags.FLAGS)
    every = want + list(overlap_flags.OPT_IN)  # the table's order
    cases = [("all", want), (overlap_flags.ALL, want), (overlap_flags.NONE, [])]
    cases += [(f, [f]) for f in every]
    cases += [(",".join(["all", *overlap_flags.OPT_IN]), every), (",".join(reversed(every)), every)]
    out = []
    for value, expected in cases:
        got = gpt4d_overlap(gpt4d, value)
        if got != expected:
            out.append(f"--overlap {value}: gpt4d writes {got}, ovb_analysis.overlap_flags says "
                       f"{expected}")
    return out


def cases():
    """(model, grid, batch, micro-batch): the presets on their grids, then shapes that each rule
    decides."""
    seen = set()
    archs = [(name, backend, arch) for (name, backend) in sorted(presets._TABLE)
             for arch in presets.ARCHS if arch == "gpt" or (name, backend) in presets._LLAMA]
    for name, backend, arch in archs:
        p = presets.preset(name, backend, arch)
        models = [p.model] + ([p.arch_check] if p.arch_check else [])
        for model, ranks in itertools.product(models, (4, 8)):
            batch = presets.global_batch(model, ranks)
            for pat in p.grid_patterns:
                g = presets.grid_for(pat, ranks)
                if (model, g, batch) not in seen:
                    seen.add((model, g, batch))
                    yield model, g, batch, 0
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
    # Llama, each rule alone deciding some case: heads 4 with kv-heads 3 (heads % kv-heads); hidden
    # 72 with 8 heads (head dimension 9: rotary embeddings need it even); kv-heads 1 on Gy = 2
    # (kv-heads % Gy); SwiGLU width 171 on Gy = 2 (ffn % Gy); Gz = 3 splits the GQA-shaped QKV
    # block of hidden 48 and not of hidden 64.
    grids = ((1, 1, 1, 1), (1, 2, 1, 2), (1, 4, 1, 1), (1, 1, 3, 1))
    for (hidden, heads), kv, ffn, grid in itertools.product(
            ((64, 4), (48, 6), (72, 8)), (1, 2, 3), (171, 176), grids):
        yield presets.Model(1, hidden, heads, 8, 264, 12, 1, "llama", kv, ffn), grid, 12, 0
    # GQA or a SwiGLU-like width on a GPT: refused by both.
    for kv, ffn in ((2, 0), (0, 176)):
        yield presets.Model(1, 64, 4, 8, 256, 4, 1, "gpt", kv, ffn), (1, 1, 1, 1), 4, 0


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
    flag_failures = overlap_flag_mismatches(gpt4d)
    failures += flag_failures
    for f in failures:
        print("config_parity: MISMATCH", f)
    # Both verdicts must occur, or the comparison proves nothing.
    if accepted in (0, n):
        raise SystemExit(f"config_parity: all {n} cases {'valid' if accepted else 'invalid'}")
    print(f"config_parity: {n} cases ({accepted} valid), overlap flags "
          f"{','.join(overlap_flags.FLAGS + overlap_flags.OPT_IN)} "
          f"{'differ' if flag_failures else 'agree'}, "
          f"{len(failures)} mismatches")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
