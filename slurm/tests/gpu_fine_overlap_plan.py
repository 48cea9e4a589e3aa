"""The rehearsal, on a CPU machine, of the one GPU call `slurm/gpu-fine-overlap.sh OUT_DIR`: its dry
run checked against what the call must do - build one architecture and only ovb-overlap and
ovb-membw; run every step's program with its result written into OUT_DIR under the step's name and
that result validated by microbench/tests/check_results.py in the same step (a step whose result
is wrong fails); share the GPU only through --ranks-per-gpu equal to the ranks mpirun starts; the
memory classes first; --only selects steps and an unknown option or a missing OUT_DIR is one error
line with exit status 2.

Run: python3 slurm/tests/gpu_fine_overlap_plan.py -v      (ctest: slurm_gpu_fine_overlap_plan)
"""

import os
import re
import shlex
import subprocess
import tempfile
import unittest

SLURM = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
SCRIPT = os.path.join(SLURM, "gpu-fine-overlap.sh")
STEPS = ["membw", "decomp-check", "ring-check", "decomp-1rank", "decomp-2ranks", "ring-2ranks",
         "cta-2ranks"]


def dry_run(*args):
    out = tempfile.mkdtemp(prefix="gpu-fine-")
    r = subprocess.run([SCRIPT, out, "--dry-run", *args], capture_output=True, text=True,
                       timeout=60)
    return out, r


class DryRun(unittest.TestCase):
    def test_build_and_steps(self):
        out, r = dry_run()
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.splitlines()
        configure = next(l for l in lines if l.startswith("cmake --preset cuda"))
        self.assertEqual(len(re.findall(r"-DCMAKE_CUDA_ARCHITECTURES=(\S+)", configure)), 1)
        self.assertNotIn(";", re.search(r"-DCMAKE_CUDA_ARCHITECTURES=(\S+)", configure).group(1))
        build = next(l for l in lines if l.startswith("cmake --build"))
        targets = build.split("--target", 1)[1].split("--")[0].split()
        self.assertEqual(sorted(targets), ["ovb-membw", "ovb-overlap"])
        steps = [l.split(":", 1) for l in lines if re.match(r"^[a-z0-9-]+: ", l)]
        self.assertEqual([s for s, _ in steps], STEPS)
        for name, cmd in steps:
            run, _, check = cmd.partition("&&")
            words = shlex.split(run)
            result = os.path.join(out, name + ".json")
            self.assertIn("--benchmark_out=" + result, words, name)
            self.assertIn("--backend", words)
            self.assertEqual(words[words.index("--backend") + 1], "cuda", name)
            prog = next(w for w in words if w.endswith(("ovb-overlap", "ovb-membw")))
            kind = "membw" if prog.endswith("ovb-membw") else "overlap"
            checked = shlex.split(check)
            self.assertTrue(checked and checked[1].endswith("check_results.py"), name)
            self.assertIn(result, checked, name)
            self.assertEqual(checked[checked.index("--kind") + 1], kind, name)
            if words[0] == "mpirun":
                ranks = int(words[words.index("-np") + 1])
                if ranks > 1:
                    self.assertEqual(words[words.index("--ranks-per-gpu") + 1], str(ranks), name)
                if kind == "overlap":
                    self.assertEqual(checked[checked.index("--ranks") + 1], str(ranks), name)

    def test_checks_are_the_ctests_commands(self):
        # decomp-check and ring-check run what the GPU ctests run (without building the tests):
        # their ovb-overlap arguments must stay those of microbench/tests/CMakeLists.txt.
        cmake = open(os.path.join(os.path.dirname(SLURM), "microbench", "tests",
                                  "CMakeLists.txt")).read()
        out, r = dry_run("--only", "decomp-check,ring-check")
        self.assertEqual(r.returncode, 0, r.stderr)
        steps = dict(l.split(": ", 1) for l in r.stdout.splitlines()
                     if re.match(r"^[a-z0-9-]+: ", l))
        for step, test in (("decomp-check", "mb.overlap.decomposition.cuda.2"),
                           ("ring-check", "mb.overlap.ring.cuda.2")):
            i = cmake.index("NAME " + test)
            ctest_args = re.search(r'\\"\$1\\" (.*?) --benchmark_out', cmake[i:]).group(1)
            words = shlex.split(steps[step].partition("&&")[0])
            prog = next(j for j, w in enumerate(words) if w.endswith("ovb-overlap"))
            step_args = [w for w in words[prog + 1:] if not w.startswith("--benchmark_out")]
            self.assertEqual(step_args, ctest_args.split(), step)

    def test_only(self):
        _, r = dry_run("--only", "ring-check,cta-2ranks")
        self.assertEqual(r.returncode, 0, r.stderr)
        names = [l.split(":", 1)[0] for l in r.stdout.splitlines() if re.match(r"^[a-z0-9-]+: ", l)]
        self.assertEqual(names, ["ring-check", "cta-2ranks"])

    def test_bad_usage(self):
        for args in ([], ["--dry-run"], ["/tmp/x", "--frobnicate"]):
            r = subprocess.run([SCRIPT, *args], capture_output=True, text=True, timeout=60)
            self.assertEqual(r.returncode, 2, args)
            self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
            self.assertTrue(r.stderr.startswith("gpu-fine-overlap.sh: error: "), r.stderr)


if __name__ == "__main__":
    unittest.main()
