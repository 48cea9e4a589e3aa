"""Unit tests of slurm/emit-sbatch (jobs from an `ovb-model search` JSON): which configurations get
jobs, what each job runs, the job array, and one-line errors for bad input.

Run: python3 -m unittest discover -s slurm/tests -v      (ctest: slurm_driver_unit)
"""

import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.realpath(__file__))
EMIT = os.path.join(os.path.dirname(HERE), "emit-sbatch")
FIXTURE = os.path.join(HERE, "fixtures", "search.json")


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


class EmitSbatch(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="emit-test-")
        self.out = os.path.join(self.tmp.name, "jobs")

    def tearDown(self):
        self.tmp.cleanup()

    def emit(self, *args, search=FIXTURE):
        return subprocess.run([sys.executable, EMIT, "--search", search, "--out-dir", self.out,
                               *args], capture_output=True, text=True, timeout=60)

    def test_one_job_per_fitting_top_k_configuration(self):
        r = self.emit("--top-k", "3", "--gpt4d-args", "--iters 5", "--gpus-per-node", "2")
        self.assertEqual(r.returncode, 0, r.stderr)
        names = sorted(os.listdir(self.out))
        # rank 3 (4x1x1x1) does not fit in memory: the third job is rank 4.
        self.assertEqual(names, ["logs", "submit-all.sh", "top1-g2x2x1x1.sbatch",
                                 "top2-g1x2x2x1-yxz.sbatch", "top4-g1x1x1x4.sbatch"])
        job = read(os.path.join(self.out, "top2-g1x2x2x1-yxz.sbatch"))
        for want in ("#SBATCH --nodes=2", "#SBATCH --ntasks=4", "#SBATCH --ntasks-per-node=2",
                     "#SBATCH --gpus-per-node=2", "#SBATCH --requeue", "#SBATCH --signal=B:USR1@",
                     "--name gpt4d-top2-g1x2x2x1-yxz", "--output gpt4d/top2-g1x2x2x1-yxz.json",
                     "--gx 1 --gy 2 --gz 2 --gdata 1 --grid-order y,x,z",
                     "--layers 2 --hidden 64 --heads 4 --seq 32 --vocab 256 --batch 8",
                     "--overlap oar,ors,oag", "--iters 5",
                     f"--out {os.path.join(self.out, 'results')} "):
            self.assertIn(want, job)
        self.assertNotIn("--grid-order", read(os.path.join(self.out, "top1-g2x2x1x1.sbatch")))
        self.assertEqual(subprocess.run(["bash", "-n", os.path.join(self.out,
                                                                    "top1-g2x2x1x1.sbatch")]
                                        ).returncode, 0)
        submit = read(os.path.join(self.out, "submit-all.sh"))
        self.assertEqual(submit.count("slurm/submit"), 3)

    def test_each_job_runs_the_micro_batch_and_sharding_the_search_chose(self):
        with open(FIXTURE, encoding="utf-8") as f:
            doc = json.load(f)
        doc["inputs"].update(micro_batch="auto", shard_optimizer="auto")
        doc["configs"][0].update(micro_batch=1, micro_steps=8, shard_optimizer=False)
        doc["configs"][1].update(micro_batch=4, micro_steps=1, shard_optimizer=False)
        doc["configs"][3].update(micro_batch=1, micro_steps=2, shard_optimizer=True)
        path = os.path.join(self.out + "-in", "auto.json")
        os.makedirs(os.path.dirname(path))
        with open(path, "w", encoding="utf-8") as f:
            json.dump(doc, f)
        r = self.emit("--top-k", "3", search=path)
        self.assertEqual(r.returncode, 0, r.stderr)
        top1 = read(os.path.join(self.out, "top1-g2x2x1x1.sbatch"))
        top2 = read(os.path.join(self.out, "top2-g1x2x2x1-yxz.sbatch"))
        top4 = read(os.path.join(self.out, "top4-g1x1x1x4.sbatch"))
        self.assertIn("--micro-batch 1 ", top1)
        self.assertNotIn("--shard-optimizer", top1)
        # One micro-step: gpt4d's default, no option.
        self.assertNotIn("--micro-batch", top2)
        self.assertIn("--micro-batch 1 --shard-optimizer ", top4)
        # An older file pinned in its inputs: every job gets the pinned values.
        for c in doc["configs"]:
            for k in ("micro_batch", "micro_steps", "shard_optimizer"):
                c.pop(k, None)
        doc["inputs"].update(micro_batch=2, shard_optimizer=True)
        with open(path, "w", encoding="utf-8") as f:
            json.dump(doc, f)
        r = self.emit("--top-k", "1", search=path)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("--micro-batch 2 --shard-optimizer ",
                      read(os.path.join(self.out, "top1-g2x2x1x1.sbatch")))

    def test_a_llama_search_emits_llama_jobs(self):
        with open(FIXTURE, encoding="utf-8") as f:
            doc = json.load(f)
        model = doc["inputs"].setdefault("model", {})
        model.update(arch="llama", kv_heads=2, ffn_hidden=176, rope_theta=500000.0)
        path = os.path.join(self.out + "-in", "llama.json")
        os.makedirs(os.path.dirname(path))
        with open(path, "w", encoding="utf-8") as f:
            json.dump(doc, f)
        r = self.emit("--top-k", "1", search=path)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("--vocab 256 --arch llama --kv-heads 2 --ffn-hidden 176 --rope-theta 500000 "
                      "--batch 8", read(os.path.join(self.out, "top1-g2x2x1x1.sbatch")))
        model["arch"] = "bert"
        with open(path, "w", encoding="utf-8") as f:
            json.dump(doc, f)
        r = self.emit("--top-k", "1", search=path)
        self.assertEqual(r.returncode, 2)
        self.assertIn("inputs.model.arch 'bert' is neither gpt nor llama", r.stderr)

    def test_array(self):
        r = self.emit("--array", "--top-k", "2", "--backend", "host", "--results",
                      os.path.join(self.tmp.name, "res"))
        self.assertEqual(r.returncode, 0, r.stderr)
        job = read(os.path.join(self.out, "search-array.sbatch"))
        self.assertIn("#SBATCH --array=0-1", job)
        self.assertIn("  0)\n", job)
        self.assertIn("  1)\n", job)
        self.assertNotIn("  2)\n", job)
        self.assertIn("--backend host", job)
        self.assertIn(f"--out {os.path.join(self.tmp.name, 'res')} ", job)
        self.assertEqual(subprocess.run(["bash", "-n", os.path.join(self.out,
                                                                    "search-array.sbatch")]
                                        ).returncode, 0)

    def bad(self, doc, message):
        path = os.path.join(self.tmp.name, "bad.json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump(doc, f)
        r = self.emit(search=path)
        self.assertEqual(r.returncode, 2, r.stdout)
        self.assertIn(message, r.stderr)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)

    def test_bad_input_gives_one_line(self):
        good = json.loads(read(FIXTURE))
        doc = json.loads(read(FIXTURE))
        del doc["inputs"]["batch"]
        self.bad(doc, "missing 'batch'")
        doc = json.loads(read(FIXTURE))
        doc["configs"][0]["gx"] = 3
        self.bad(doc, "grid (3, 2, 1, 1) does not multiply to 4 GPUs")
        doc = json.loads(read(FIXTURE))
        for c in doc["configs"]:
            c["fits"] = False
        self.bad(doc, "no configuration that fits in memory")
        self.bad({"configs": good["configs"]}, "missing 'inputs'")
        doc = json.loads(read(FIXTURE))
        doc["strategy"] = "megatron"
        self.bad(doc, "a search of strategy 'megatron': the jobs run gpt4d")
        r = self.emit(search=os.path.join(self.tmp.name, "none.json"))
        self.assertEqual(r.returncode, 2)
        self.assertIn("no such file", r.stderr)


class EmitRunsTheSearch(unittest.TestCase):
    """`emit-sbatch ... -- SEARCH_ARGS`: the slurm layer runs `ovb-model search` (here a stand-in
    that records its arguments and writes the fixture) and emits from the JSON it wrote."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="emit-search-test-")
        self.build = os.path.join(self.tmp.name, "build")
        self.out = os.path.join(self.tmp.name, "jobs")
        self.argv_log = os.path.join(self.tmp.name, "argv.json")
        os.makedirs(self.build)
        model = os.path.join(self.build, "ovb-model")
        with open(model, "w", encoding="utf-8") as f:
            f.write(f"""#!{sys.executable}
import json, shutil, sys
json.dump(sys.argv[1:], open({self.argv_log!r}, "w"))
if "--preset" in sys.argv and sys.argv[sys.argv.index("--preset") + 1] == "7B":
    print("ovb-model: error: unknown GPT preset '7B'", file=sys.stderr)
    sys.exit(2)
shutil.copy({FIXTURE!r}, sys.argv[sys.argv.index("--json") + 1])
""")
        os.chmod(model, 0o755)

    def tearDown(self):
        self.tmp.cleanup()

    def emit(self, *args):
        return subprocess.run([sys.executable, EMIT, "--build", self.build, "--out-dir", self.out,
                               *args], capture_output=True, text=True, timeout=60)

    def test_search_arguments_reach_ovb_model_and_its_json_is_used(self):
        r = self.emit("--top-k", "2", "--", "--machine", "m.json", "--gpus", "4")
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(self.argv_log, encoding="utf-8") as f:
            argv = json.load(f)
        self.assertEqual(argv, ["search", "--machine", "m.json", "--gpus", "4", "--json",
                                os.path.join(self.out, "search.json")])
        self.assertEqual(sorted(n for n in os.listdir(self.out) if n.endswith(".sbatch")),
                         ["top1-g2x2x1x1.sbatch", "top2-g1x2x2x1-yxz.sbatch"])

    def test_a_failed_search_ends_with_its_own_line_and_status(self):
        r = self.emit("--", "--preset", "7B")
        self.assertEqual(r.returncode, 2)
        self.assertEqual(r.stderr.strip(), "ovb-model: error: unknown GPT preset '7B'")
        self.assertFalse([n for n in os.listdir(self.out) if n.endswith(".sbatch")])

    def test_bad_combinations_give_one_line(self):
        for args, message in ((("--search", FIXTURE, "--", "--gpus", "4"), "not both"),
                              ((), "not neither"),
                              (("--",), "no ovb-model search arguments"),
                              (("--", "--gpus", "4", "--json", "x.json"), "--json among")):
            r = self.emit(*args)
            self.assertEqual(r.returncode, 2, (args, r.stdout))
            self.assertIn(message, r.stderr)
            self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        r = subprocess.run([sys.executable, EMIT, "--build", os.path.join(self.tmp.name, "none"),
                            "--out-dir", self.out, "--", "--gpus", "4"],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 2)
        self.assertIn("emit-sbatch: error: no build folder", r.stderr)


if __name__ == "__main__":
    unittest.main()
