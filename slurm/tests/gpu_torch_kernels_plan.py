"""The rehearsal, on a CPU machine, of the one GPU call `slurm/gpu-torch-kernels.sh OUT_DIR`: its
dry run checked against what the call must do - build nothing; run the PyTorch reference in every
step with its result and its trace written into OUT_DIR under the step's name; the 1.7B
Megatron-Core shape (sequence 4096, vocabulary 131,072) with cuDNN's attention first; the SDPA
backend and precision each step's name says; --only selects steps, and an unknown option, an
unknown step or a missing OUT_DIR is one error line with exit status 2.

Run: python3 slurm/tests/gpu_torch_kernels_plan.py -v      (ctest: slurm_gpu_torch_kernels_plan)
"""

import os
import re
import shlex
import subprocess
import tempfile
import unittest

SLURM = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
SCRIPT = os.path.join(SLURM, "gpu-torch-kernels.sh")
STEPS = ["mc1.7b-cudnn", "mc1.7b-cudnn-bf16", "gpt1.3b-cudnn", "mc1.7b-flash", "gpt1.3b"]
STEP_LINE = re.compile(r"^([a-z0-9.-]+): (.*)$")


def dry_run(*args):
    out = tempfile.mkdtemp(prefix="gpu-torch-")
    r = subprocess.run([SCRIPT, out, "--dry-run", *args], capture_output=True, text=True,
                       timeout=60)
    return out, r


def steps_of(stdout):
    return [m.groups() for m in map(STEP_LINE.match, stdout.splitlines()) if m]


def option(words, name):
    return words[words.index(name) + 1] if name in words else None


class DryRun(unittest.TestCase):
    def test_steps(self):
        out, r = dry_run()
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn("cmake", r.stdout)
        steps = steps_of(r.stdout)
        self.assertEqual([s for s, _ in steps], STEPS)
        for name, cmd in steps:
            words = shlex.split(cmd)
            self.assertTrue(words[1].endswith("endtoend/reference/pytorch_gpt.py"), name)
            self.assertEqual(option(words, "--out"), os.path.join(out, name + ".json"), name)
            self.assertEqual(option(words, "--trace"),
                             os.path.join(out, name + ".trace.json.gz"), name)
            self.assertEqual(option(words, "--preset"), "1.3B", name)
            parts = name.split("-")
            backend = parts[1] if len(parts) > 1 else None
            self.assertEqual(option(words, "--sdpa"), backend, name)
            self.assertEqual(option(words, "--precision"), "bf16" if parts[-1] == "bf16" else None,
                             name)
            if name.startswith("mc1.7b"):
                self.assertEqual((option(words, "--seq"), option(words, "--vocab"),
                                  option(words, "--batch")), ("4096", "131072", "$OVB_MC_BATCH"))
            else:
                self.assertEqual((option(words, "--seq"), option(words, "--vocab"),
                                  option(words, "--batch")), (None, None, "4"))
            self.assertGreater(int(option(words, "--iters")), int(option(words, "--warmup")))

    def test_only(self):
        _, r = dry_run("--only", "mc1.7b-flash,gpt1.3b")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual([s for s, _ in steps_of(r.stdout)], ["mc1.7b-flash", "gpt1.3b"])

    def test_bad_usage(self):
        for args in ([], ["--dry-run"], ["/tmp/x", "--frobnicate"],
                     ["/tmp/x", "--dry-run", "--only", "mc1.7b"]):
            r = subprocess.run([SCRIPT, *args], capture_output=True, text=True, timeout=60)
            self.assertEqual(r.returncode, 2, args)
            self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
            self.assertTrue(r.stderr.startswith("gpu-torch-kernels.sh: error: "), r.stderr)


if __name__ == "__main__":
    unittest.main()
