"""results/model/deepspeed-schedule.txt is what results/model/deepspeed-schedule.py prints, and the
simulation agrees with the independent formula for a pipeline without communication: both
schedules take (m + p - 1)(F + B). A schedule read wrongly (a deadlock, or a step mapped to the
wrong micro-batch) would break one or the other.

Run: pytest analysis/tests/test_claims_deepspeed_schedule.py
"""

import subprocess
import sys

from conftest import ANALYSIS, load_script

SCRIPT = ANALYSIS.parent / "results" / "model" / "deepspeed-schedule.py"


def load():
    return load_script(SCRIPT, "deepspeed_schedule")


def test_the_committed_table_is_the_scripts_output():
    out = subprocess.run([sys.executable, str(SCRIPT)], capture_output=True, text=True, check=True)
    assert out.stdout == SCRIPT.with_suffix(".txt").read_text(encoding="utf-8")


def test_without_communication_both_take_the_1f1b_formula():
    mod = load()
    for p, m, f, b in ((2, 8, 1.0, 3.0), (5, 12, 1.0, 2.0), (35, 160, 1.0, 3.0)):
        want = (m + p - 1) * (f + b)
        assert mod.deepspeed_time(p, m, f, b, 0.0) == want
        assert mod.one_f_one_b_time(p, m, f, b, 0.0) == want


def test_every_micro_batch_passes_every_stage_once_each_way():
    mod = load()
    p, m = 6, 9
    for s in range(p):
        cmds = mod.deepspeed_commands(p, m, s)
        assert sorted(mb for op, _, mb in cmds if op == "F") == list(range(m))
        assert sorted(mb for op, _, mb in cmds if op == "B") == list(range(m))
