"""The rehearsal, on a CPU machine, of the one GPU call `slurm/gpu-ab.sh OUT_DIR`: its dry run
checked against what the call must do (build gpt4d and its kernel tests alone for one
architecture, run the variants' kernel tests before any timing; per variant the
baseline and the variant alternately, ABAB, at least 5 timed pairs after a warm-up pair, 20 timed
iterations per run on the 1.3B shape, loss curves compared; the estimate inside the call), then the
call itself with a stand-in gpt4d (OVB_GPT4D) that writes a result whose median time and losses
the test chose: the summary and every variant's ab.json hold the ratio the stand-in makes, every
run's result is kept, a variant that changes the losses fails the call, and a variant that does
not fit in the call's time is not started.

Run: python3 slurm/tests/gpu_ab_plan.py -v      (ctest: slurm_gpu_ab_plan)
"""

import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import unittest

SLURM = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
SCRIPT = os.path.join(SLURM, "gpu-ab.sh")
CALL_LIMIT_S = 600

# A stand-in gpt4d: the baseline takes 140 ms per iteration, a variant (--gemm-autotune) 126 ms;
# losses 10.9, 10.8, ... unless STUB_LOSS_SHIFT moves the variant's.
STUB = r'''#!/usr/bin/env python3
import json, os, sys
args = sys.argv[1:]
out = args[args.index("--out") + 1]
variant = "--gemm-autotune" in args
shift = float(os.environ.get("STUB_LOSS_SHIFT", "0")) if variant else 0.0
iters = int(args[args.index("--iters") + 1])
doc = {"context": {"gpu_telemetry": {"available": False}},
       "summary": {"p50_ms": 126.0 if variant else 140.0},
       "iterations": [{"iter": i, "loss": 10.9 - 0.1 * i + shift} for i in range(iters)]}
with open(out, "w") as f:
    json.dump(doc, f)
'''


def run(args, env=None):
    full = dict(os.environ, OVB_PYTHON=os.environ.get("OVB_PYTHON", sys.executable), **(env or {}))
    return subprocess.run([SCRIPT, *args], capture_output=True, text=True, env=full, timeout=300)


class DryRun(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        r = run([os.path.join(self.tmp.name, "out"), "--dry-run"])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.out = r.stdout

    def test_builds_gpt4d_alone_for_one_architecture_and_checks_the_variants(self):
        self.assertRegex(self.out, r"cmake --preset cuda .*-DCMAKE_CUDA_ARCHITECTURES=90 ")
        self.assertRegex(self.out, r"cmake --build \S+ -j \d+ --target gpt4d "
                         r"ovb-gpt4d-cuda-kernel-tests\n")
        # The GPU-labelled tests of the autotuned GEMMs, before the variants' line.
        check = self.out.index("ovb-gpt4d-cuda-kernel-tests --gtest_filter=*LinearGemms*")
        self.assertLess(check, self.out.index("variant "))

    def test_every_variant_is_ab_of_baseline_and_flag_on_the_same_shape(self):
        lines = re.findall(r"^variant (\S+): (.*)$", self.out, re.M)
        self.assertEqual([n for n, _ in lines], ["gemm-autotune-8", "gemm-autotune-32"])
        for name, line in lines:
            words = shlex.split(line)
            a, b = words[words.index("--a") + 1], words[words.index("--b") + 1]
            flag = "--gemm-autotune " + name.rsplit("-", 1)[1]
            self.assertEqual(b, a + " " + flag)  # B is A plus the variant's flag, nothing else
            for part in ("--preset 1.3B", "--seq 2048", "--vocab 50304", "--batch 4",
                         "--iters 23", "--backend cuda", "--out {out}"):
                self.assertIn(part, a)
            # 23 iterations, gpt4d's warm-up rule max(3, ceil(23/10)) = 3: 20 timed.
            self.assertEqual(23 - max(3, -(-23 // 10)), 20)
            self.assertEqual(words[words.index("--field") + 1], "summary.p50_ms")
            self.assertGreaterEqual(int(words[words.index("--pairs") + 1]), 5)
            self.assertEqual(float(words[words.index("--loss-rtol") + 1]), 2.0**-7)
            self.assertEqual(words[words.index("--keep") + 1], f"{self.tmp.name}/out/{name}/runs")

    def test_estimate_fits_the_call(self):
        est = int(re.search(r"^estimate: (\d+) s of a call limit of (\d+) s", self.out,
                            re.M).group(1))
        # build 300 s + kernel tests 20 s + 2 variants x (1 + 5) pairs x 2 runs x 8 s.
        self.assertEqual(est, 300 + 20 + 2 * 6 * 2 * 8)
        self.assertLessEqual(est, CALL_LIMIT_S - 10)

    def test_bad_usage_is_one_line(self):
        for args, message in ((["--pairs", "4"], "--pairs 4: expected a number >= 5"),
                              (["--variants", "cuda-graph"], "unknown variant 'cuda-graph'"),
                              (["--frobnicate"], "unknown option '--frobnicate'")):
            r = run([os.path.join(self.tmp.name, "x"), "--dry-run", *args])
            self.assertEqual(r.returncode, 2)
            self.assertIn(message, r.stderr)
            self.assertEqual(r.stderr.strip().count("\n"), 0)


class CallWithStandIn(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.stub = os.path.join(self.tmp.name, "gpt4d")
        with open(self.stub, "w") as f:
            f.write(STUB)
        os.chmod(self.stub, 0o755)
        self.out = os.path.join(self.tmp.name, "out")

    def call(self, extra_env=None, args=()):
        return run([self.out, *args], {"OVB_GPT4D": self.stub, **(extra_env or {})})

    def test_ratio_summary_and_kept_runs(self):
        r = self.call()
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        for name in ("gemm-autotune-8", "gemm-autotune-32"):
            doc = json.load(open(os.path.join(self.out, name, "ab.json")))
            self.assertEqual(doc["order"], "ABAB")
            self.assertEqual([x["variant"] for x in doc["runs"]], ["A", "B"] * 6)
            self.assertAlmostEqual(doc["ratio_p50"], 126.0 / 140.0)
            self.assertTrue(doc["loss_same"])
            self.assertEqual(doc["loss_max_rel_diff"], 0.0)
            self.assertEqual(len(os.listdir(os.path.join(self.out, name, "runs"))), 12)
        summary = open(os.path.join(self.out, "summary.md")).read()
        self.assertIn("## gemm-autotune-32 (`--gemm-autotune 32`), exit status 0", summary)
        self.assertIn("B/A per pair: median 0.9000", summary)
        self.assertIn(f"speed-up A/B {140 / 126:.4f}", summary)

    def test_changed_losses_fail_the_call(self):
        # 0.1 on losses of ~9-11: ~1e-2 relatively, above 2^-7.
        r = self.call({"STUB_LOSS_SHIFT": "0.1"}, ["--variants", "gemm-autotune-8"])
        self.assertEqual(r.returncode, 1)
        summary = open(os.path.join(self.out, "summary.md")).read()
        self.assertIn("DIFFERENT", summary)

    def test_a_variant_that_does_not_fit_is_not_started(self):
        # 100 s of call, 10 kept: 90 s < one variant's 96 s.
        r = self.call({"OVB_CALL_LIMIT_S": "100"})
        self.assertEqual(r.returncode, 1)
        self.assertIn("variant gemm-autotune-8 not started", r.stdout)
        self.assertFalse(os.path.exists(os.path.join(self.out, "gemm-autotune-8", "ab.json")))
        self.assertIn("Not run: no time left", open(os.path.join(self.out, "summary.md")).read())


if __name__ == "__main__":
    unittest.main()
