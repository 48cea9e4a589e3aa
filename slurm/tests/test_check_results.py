"""Unit tests of check_results.py's reference checks on small synthetic results folders: a clean
folder passes, and each wrong number (a microbenchmark's `wrong` counter, a loss off between grids,
a missing or malformed machine file, a report listing a failed step, a merged predicted-and-measured
trace missing an event or misaligned) makes it fail.

Run: python3 -m unittest discover -s slurm/tests -v      (ctest: slurm_driver_unit)
"""

import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.realpath(__file__))
CHECK = os.path.join(HERE, "check_results.py")
LOSSES = [5.5388961, 5.5628605, 5.5437126]
STEPS = ["microbench-gemm", "gpt4d-a", "gpt4d-b", "model-calibrate", "model-search",
         "model-compare", "analyze-a", "report"]


def write(path, doc):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(doc if isinstance(doc, str) else json.dumps(doc))


def gpt4d(grid, losses, seed=1234, **model):
    cfg = {"model": {"layers": 2, "hidden": 64, "heads": 4, "seq": 32, "vocab": 256,
                     "preset": "", **model}, "batch": 8, "seed": seed, "data": "synthetic", "dtype": "fp32",
           "iters": len(losses), "lr": 1e-3, "grid": grid, "overlap": []}
    return {"context": {}, "config": cfg, "summary": {},
            "iterations": [{"iter": i, "loss": x} for i, x in enumerate(losses)]}


class CheckResults(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="ovb-check-test-")
        self.root = self.tmp.name
        groups = {"microbench-gemm": "microbench", "gpt4d-a": "gpt4d", "gpt4d-b": "gpt4d",
                  "analyze-a": "trace", "report": "report"}
        steps = [{"step": s, "group": groups.get(s, "model"), "status": "finished"}
                 for s in STEPS]
        write(os.path.join(self.root, ".suite", "status.json"), {"steps": steps})
        for s in STEPS:
            write(os.path.join(self.root, "logs", s + ".txt"), "log\n")
        bench = {"name": "gemm/fp32/128", "run_type": "iteration", "wrong": 0.0}
        write(self.path("microbench/gemm.json"), {"context": {}, "benchmarks": [bench]})
        write(self.path("gpt4d/a.json"), gpt4d({"gx": 2}, LOSSES))
        write(self.path("gpt4d/b.json"), gpt4d({"gdata": 2}, [x * (1 + 2e-6) for x in LOSSES]))
        write(self.path("gpt4d/a.trace-analysis.json"), {"context": {}, "ranks": [], "summary": {}})
        for f in ("search", "compare"):
            write(self.path(f"model/{f}.json"), {"context": {}, "configs": []})
        write(self.path("model/machine.json"), {"name": "m", "gpu": {}, "comm": {},
                                                "calibration": {}, "sources": {"gemm": "x"}})
        write(self.path("report/report.html"), "<html></html>")
        write(self.path("report/report.md"), "# OverlapBench report: r\n\n## Figures\n")

    def tearDown(self):
        self.tmp.cleanup()

    def path(self, rel):
        return os.path.join(self.root, rel)

    def check(self, *extra):
        return subprocess.run([sys.executable, CHECK, self.root, *extra], capture_output=True,
                              text=True)

    def assert_fails(self, text, *extra):
        r = self.check(*extra)
        self.assertEqual(r.returncode, 1, r.stdout)
        self.assertIn(text, r.stdout)

    def test_clean_folder_passes(self):
        r = self.check()
        self.assertEqual(r.returncode, 0, r.stdout)

    def test_wrong_counter_fails(self):
        bench = {"name": "gemm/fp32/128", "run_type": "iteration", "wrong": 3.0}
        write(self.path("microbench/gemm.json"), {"context": {}, "benchmarks": [bench]})
        self.assert_fails("wrong = 3.0")
        write(self.path("microbench/gemm.json"), {"context": {}, "benchmarks": [{"name": "g"}]})
        self.assert_fails("no 'wrong' counter")

    def test_loss_off_between_grids_fails(self):
        write(self.path("gpt4d/b.json"), gpt4d({"gdata": 2}, LOSSES[:2] + [LOSSES[2] * 1.0001]))
        self.assert_fails("at iteration 2 differs")
        write(self.path("gpt4d/b.json"), gpt4d({"gdata": 2}, LOSSES[:2] + [float("nan")]))
        self.assert_fails("not finite")

    def test_runs_of_different_trainings_are_not_compared(self):
        write(self.path("gpt4d/b.json"), gpt4d({"gdata": 2}, [x + 1 for x in LOSSES], seed=7))
        self.assert_fails("no two gpt4d runs of the same training")

    def test_llama_first_loss_must_be_near_ln_vocab(self):
        llama = {"arch": "llama", "kv_heads": 2, "ffn_hidden": 176}
        write(self.path("gpt4d/a.json"), gpt4d({"gx": 2}, LOSSES, **llama))
        write(self.path("gpt4d/b.json"), gpt4d({"gdata": 2}, LOSSES, **llama))
        r = self.check()
        self.assertEqual(r.returncode, 0, r.stdout)  # 5.539 against ln 256 = 5.545
        # 5.83 is 5.1% above ln 256; both runs agree, so only the start is off.
        off = [5.83] + LOSSES[1:]
        write(self.path("gpt4d/a.json"), gpt4d({"gx": 2}, off, **llama))
        write(self.path("gpt4d/b.json"), gpt4d({"gdata": 2}, off, **llama))
        self.assert_fails("first loss 5.83 of a Llama run is not within 5% of ln(vocab) = 5.5452")
        # The same numbers from GPT runs are not held to it.
        write(self.path("gpt4d/a.json"), gpt4d({"gx": 2}, off))
        write(self.path("gpt4d/b.json"), gpt4d({"gdata": 2}, off))
        self.assertEqual(self.check().returncode, 0)

    def test_machine_file_missing_or_malformed_fails(self):
        write(self.path("model/machine.json"), "{")
        self.assert_fails("machine.json: cannot be read as JSON")
        write(self.path("model/machine.json"), {"name": "m"})
        self.assert_fails("machine.json: missing gpu, comm, calibration, sources")
        os.unlink(self.path("model/machine.json"))
        self.assert_fails("machine.json: missing (the calibration's machine file)")

    def write_timelines(self, shift_us=0.0, drop=0):
        """A traced run's measured rank (5 iterations of 100 200 150 120 130 us: the warm-up rule
        leaves out 3, the kept 120 and 130 have the median 125, the first nearest is index 3 at
        450 us), its predicted trace, and their merge with the predicted iteration `shift_us` off
        index 3."""
        durs, t, meas = [100, 200, 150, 120, 130], 0, []
        for d in durs:
            meas += [{"ph": "X", "cat": "user_annotation", "name": "iteration", "pid": 5, "tid": 5,
                      "ts": t, "dur": d, "args": {"category": "iteration"}},
                     {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": t,
                      "dur": 10}]
            t += d
        pred = [{"ph": "X", "cat": "gpu_user_annotation", "name": "iteration", "pid": 0,
                 "tid": 1000000, "ts": 0, "dur": 90, "args": {"category": "iteration"}},
                {"ph": "X", "cat": "kernel", "name": "gemm qkv.fwd", "pid": 0, "tid": 0, "ts": 0,
                 "dur": 90}]
        write(self.path("traces/traced-a/rank-00000.trace.json"),
              {"distributedInfo": {"rank": 0}, "traceEvents": meas})
        write(self.path("model/timeline-traced-a.trace.json"),
              {"distributedInfo": {"rank": 0}, "traceEvents": pred})
        names = [{"ph": "M", "name": "process_name", "pid": p, "args": {"name": n}}
                 for p, n in ((1000, "measured rank 0: GPU 0"), (1001, "measured rank 0: host"),
                              (1500, "predicted rank 0: predicted rank"))]
        moved = [dict(e, pid=1500, ts=e["ts"] + 450 + shift_us) for e in pred]
        merged = [dict(e, pid=1001 if e["pid"] == 5 else 1000) for e in meas] + moved
        write(self.path("model/timeline-vs-measured-traced-a.trace.json"),
              {"alignment": {"iteration": 3}, "traceEvents": names + merged[drop:]})

    def test_merged_timeline_must_hold_both_sources_aligned(self):
        self.write_timelines()
        r = self.check()
        self.assertEqual(r.returncode, 0, r.stdout)
        self.write_timelines(shift_us=0.5)
        self.assert_fails("median steady-state iteration is index 3 at 450 us")
        self.write_timelines(drop=1)
        self.assert_fails("X events per process")
        os.unlink(self.path("model/timeline-vs-measured-traced-a.trace.json"))
        self.assert_fails("timeline-vs-measured-traced-a.trace.json: missing")

    def test_report_must_list_exactly_the_unfinished_steps(self):
        table = ("# OverlapBench report: r\n\n## Suite steps that did not finish\n\n"
                 "| step | group | status | error |\n|---|---|---|---|\n"
                 "| gpt4d-b | gpt4d | failed | exit status 1 |\n\n## Figures\n")
        write(self.path("report/report.md"), table)
        self.assert_fails("report lists as not finished: gpt4d-b")
        # In a folder where gpt4d-b really failed, the records check wants it listed.
        with open(self.path(".suite/status.json"), encoding="utf-8") as f:
            status = json.load(f)
        status["steps"][2].update(status="failed", error="exit status 1")
        write(self.path(".suite/status.json"), status)
        self.assertEqual(self.check("--records").returncode, 0)
        write(self.path("report/report.md"), "# OverlapBench report: r\n")
        self.assert_fails("report does not list the unfinished gpt4d-b", "--records")


if __name__ == "__main__":
    unittest.main()
