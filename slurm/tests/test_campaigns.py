"""Unit tests of what the campaign presets added to the driver - the time budget, "does not fit"
and conditional steps, steps that run at every call, arguments taken from an earlier step's file,
--param - and of the campaign plans themselves (no binaries run).

Run: python3 -m unittest discover -s slurm/tests -v      (ctest: slurm_driver_unit)
"""

import json
import os
import subprocess
import sys
import tempfile
import time
import unittest

from test_driver import DRIVER, DriverCase, read, sh

from ovb_suite.campaigns import CAMPAIGNS, build, default_budget  # noqa: E402
from ovb_suite.campaigns import parse_params  # noqa: E402
from ovb_suite.mps import Mps  # noqa: E402
from ovb_suite.plan import Target  # noqa: E402
from ovb_suite.util import SuiteError  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))


class Budget(DriverCase):
    def test_step_past_the_budget_is_left_for_the_next_call(self):
        f = self.steps_file([sh("sleep 6", name="a"), sh("echo ran > {tmp}/b.txt", name="b",
                                                         outputs=["b.txt"])])
        r = self.run_driver(f, "--budget", "25")
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("b: left for the next call", r.stdout)
        # a's watchdog limit was cut from 600 s to what was left of the 25 s budget
        self.assertRegex(r.stdout, r"a: started \(1 process, watchdog 2[0-5] s")
        self.assertFalse(os.path.exists(os.path.join(self.out, ".suite", "state", "b.json")))
        status = json.loads(read(os.path.join(self.out, ".suite", "status.json")))
        row = next(s for s in status["steps"] if s["step"] == "b")
        self.assertEqual(row["status"], "pending")
        self.assertIn("25 s budget", row["error"])
        r = self.run_driver(f, "--budget", "25")  # the next call goes on where this one stopped
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(self.state("a")["attempt"], 1)
        self.assertEqual(read(os.path.join(self.out, "b.txt")), "ran\n")


class BudgetCut(DriverCase):
    def test_a_step_stopped_at_the_budgets_cut_is_interrupted_not_failed(self):
        mark = os.path.join(self.dir, "slow-once")
        f = self.steps_file([sh(f"[ -e {mark} ] || {{ touch {mark}; sleep 60; }}; "
                                "echo ran > {tmp}/a.txt", name="a", outputs=["a.txt"]),
                             sh("echo ran > {tmp}/b.txt", name="b", outputs=["b.txt"]),
                             sh("true", name="summary", always=True)])
        # 21 s: a starts (20 s needed) with its 600 s limit cut to ~21 s and is stopped there
        r = self.run_driver(f, "--budget", "21", "--grace", "1")
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        a = self.state("a")
        self.assertEqual(a["status"], "interrupted", a)
        self.assertIn("cut by the call's budget", a["error"])
        self.assertIn("its own limit 600 s", a["error"])
        self.assertNotIn("failed:", r.stdout)
        self.assertIn("b: left for the next call", r.stdout)
        self.assertEqual(self.state("summary")["status"], "finished")  # the call still ends well
        r = self.run_driver(f, "--budget", "60")  # redone, not skipped as failed
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(self.state("a")["attempt"], 2)
        self.assertEqual(self.state("a")["status"], "finished")

    def test_a_step_past_its_own_limit_still_fails(self):
        f = self.steps_file([sh("sleep 30", name="a", timeout_s=2)])
        r = self.run_driver(f, "--budget", "60", "--grace", "1")
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertEqual(self.state("a")["status"], "failed")
        self.assertIn("no completion within 2 s (timeout)", self.state("a")["error"])


class BudgetStart(DriverCase):
    def test_the_budget_counts_from_budget_start(self):
        f = self.steps_file([sh("echo ran > {tmp}/a.txt", name="a", outputs=["a.txt"]),
                             sh("true", name="summary", always=True)])
        # 25 s from a start 10 s ago: 15 s left, under the 20 s a step needs to start
        r = self.run_driver(f, "--budget", "25", "--budget-start", str(int(time.time()) - 10))
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("a: left for the next call", r.stdout)
        self.assertEqual(self.state("summary")["status"], "finished")  # always: outside it
        suite = json.loads(read(os.path.join(self.out, ".suite", "suite.json")))
        self.assertTrue(suite["jobs"][-1]["budget_start"].endswith("Z"))
        r = self.run_driver(f, "--budget", "25", "--budget-start", str(int(time.time())))
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        for bad, msg in (("soon", "'soon' is not a time in seconds since the epoch"),
                         (str(int(time.time()) + 3600), "is not within the last day")):
            r = self.run_driver(f, "--budget-start", bad)
            self.assertEqual(r.returncode, 2)
            self.assertIn(msg, r.stderr)
            self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)

    def test_estimates_in_a_steps_file_and_the_plan(self):
        f = self.steps_file([sh("true", name="a", estimate_s=12.5), sh("true", name="b")])
        r = self.run_driver(f, "--dry-run")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("a (custom)  [~12.5 s]", r.stdout)
        self.assertIn("b (custom)\n", r.stdout)
        r = self.run_driver(self.steps_file([sh("true", name="a", estimate_s=-1)]))
        self.assertEqual(r.returncode, 2)
        self.assertIn("estimate_s must be >= 0", r.stderr)


class Unfit(DriverCase):
    STEPS = [
        sh("echo 'gpt4d: error: needs 99.0 GiB per rank, 80 free'; exit 2", name="big",
           unfit="needs .* GiB per rank"),
        sh("echo smaller > {tmp}/small.txt", name="small", outputs=["small.txt"], if_unfit="big"),
        sh("echo bigger > {tmp}/bigger.txt", name="bigger", outputs=["bigger.txt"],
           unless_unfit=["big"]),
        sh("echo fine", name="fits", unfit="needs .* GiB per rank"),
        sh("echo other > {tmp}/o.txt", name="other", outputs=["o.txt"], if_unfit="fits"),
    ]

    def test_unfit_is_a_result_and_decides_the_conditional_steps(self):
        r = self.run_driver(self.steps_file(self.STEPS))
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        got = {s["name"]: self.state(s["name"])["status"] for s in self.STEPS}
        self.assertEqual(got, {"big": "unfit", "small": "finished", "bigger": "skipped",
                               "fits": "finished", "other": "skipped"})
        self.assertIn("does not fit (memory)", self.state("big")["error"])
        r = self.run_driver(self.steps_file(self.STEPS))  # unfit is not redone
        self.assertEqual(r.returncode, 0)
        self.assertEqual(self.state("big")["attempt"], 1)

    def test_a_failure_that_is_not_the_pattern_stays_a_failure(self):
        f = self.steps_file([sh("echo 'segmentation fault'; exit 3", name="big",
                                unfit="needs .* GiB per rank"),
                             sh("true", name="small", if_unfit="big")])
        r = self.run_driver(f)
        self.assertEqual(r.returncode, 1)
        self.assertEqual(self.state("big")["status"], "failed")
        self.assertEqual(self.state("small")["status"], "skipped")

    def test_condition_on_a_later_step_is_refused(self):
        r = self.run_driver(self.steps_file([sh("true", name="a", if_unfit="b"),
                                             sh("true", name="b")]))
        self.assertEqual(r.returncode, 2)
        self.assertIn("depends on 'b', which is not an earlier step", r.stderr)


class AlwaysAndArgs(DriverCase):
    def test_always_step_runs_at_every_call_and_under_only(self):
        f = self.steps_file([sh("true", name="a", group="g"), sh("true", name="b", group="h"),
                             sh("true", name="summary", group="report", always=True)])
        self.assertEqual(self.run_driver(f).returncode, 0)
        r = self.run_driver(f, "--only", "g")
        self.assertEqual(r.returncode, 0, r.stdout)
        self.assertEqual(self.state("summary")["attempt"], 2)
        self.assertEqual(self.state("a")["attempt"], 1)

    def test_arguments_from_an_earlier_steps_file(self):
        picks = {"runs": [{"args": ["--gx", "2"]}, {"args": ["--gy", "4"]}]}
        f = self.steps_file([
            sh(f"echo '{json.dumps(picks)}' > {{tmp}}/picks.json", name="picks",
               outputs=["picks.json"]),
            dict(name="use", command=["sh", "-c", 'echo "$@" > {tmp}/used.txt', "sh",
                                      "{args:{out}/picks.json:1}"], outputs=["used.txt"]),
            dict(name="beyond", command=["echo", "{args:{out}/picks.json:2}"]),
        ])
        r = self.run_driver(f)
        self.assertEqual(r.returncode, 1)
        self.assertEqual(read(os.path.join(self.out, "used.txt")), "--gy 4\n")
        self.assertEqual(self.state("beyond")["status"], "failed")
        self.assertIn("no entry 2 with \"args\" in \"runs\" (2 entries)",
                      self.state("beyond")["error"])


class Params(DriverCase):
    def run_preset(self, *args):
        return subprocess.run([sys.executable, DRIVER, *args], capture_output=True, text=True,
                              env=self.env, timeout=120)

    def test_param_errors_are_one_line(self):
        empty = os.path.join(self.dir, "build")
        os.makedirs(empty)
        for args, msg in (
                (["--param", "nope=1"], "preset multirank has no such parameter (known: model, "),
                (["--param", "grids4"], "--param grids4: expected NAME=VALUE"),
                (["--param", "grids4=1x2"], "grid '1x2': expected GXxGYxGZxGDATA"),
                (["--param", "run_limit_s=-1"], "run_limit_s=-1: expected a number > 0")):
            r = self.run_preset("list", "--preset", "multirank", "--backend", "host", "--build",
                                empty, *args)
            self.assertEqual(r.returncode, 2, args)
            self.assertIn(msg, r.stderr)
            self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        r = self.run_preset("list", "--preset", "quick", "--backend", "host", "--build", empty,
                            "--param", "a=1")
        self.assertIn("preset quick takes no parameters", r.stderr)

    def test_params_are_recorded_and_a_different_one_is_refused(self):
        empty = os.path.join(self.dir, "build")
        os.makedirs(empty)
        base = ["run", "--preset", "multirank", "--backend", "host", "--build", empty,
                "--out", self.out, "--only", "flags8"]
        r = self.run_preset(*base, "--param", "run_limit_s=30")
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)  # gpt4d is not in the empty build
        suite = json.loads(read(os.path.join(self.out, ".suite", "suite.json")))
        self.assertEqual(suite["params"]["run_limit_s"], "30")
        self.assertEqual(suite["jobs"][-1]["budget_s"], 540.0)
        r = self.run_preset(*base, "--param", "run_limit_s=60")
        self.assertEqual(r.returncode, 2)
        self.assertIn("--param run_limit_s=60 (folder: run_limit_s=30)", r.stderr)


class CampaignPlans(unittest.TestCase):
    def test_every_campaign_plans_with_missing_binaries_named(self):
        for name, c in CAMPAIGNS.items():
            steps = build_steps(c, c.BACKENDS[0], "", {})
            self.assertEqual(steps[-1].name, "summary", name)
            self.assertTrue(steps[-1].always)
            runs = [s for s in steps if s.group != "report"]
            # An empty build: the steps are listed, each binary step saying what is missing.
            self.assertTrue(any("not built (not found in )" in s.missing for s in runs), name)

    def test_h100_single_keeps_the_scripts_budget_order_and_fallbacks(self):
        steps = {s.name: s for s in build_steps(CAMPAIGNS["h100-single"], "cuda", "", {})}
        names = list(steps)
        self.assertEqual(CAMPAIGNS["h100-single"].BUDGET_S, 530.0)
        self.assertLess(names.index("kernels"), names.index("gpt4d_1.3B"))
        self.assertLess(names.index("gpt4d_1.3B"), names.index("torch_eager"))
        self.assertEqual(names[-2:], ["torch_compile", "summary"])
        self.assertEqual(steps["gpt4d_2.7B_b2"].if_unfit, "gpt4d_2.7B")
        self.assertEqual(steps["batch_16"].unless_unfit, ["batch_8", "batch_12", "batch_14"])
        self.assertEqual(steps["torch_compile"].timeout_s, 240.0)
        # The GEMM table is measured on training-like data (ovb-gemm --inputs random).
        for name in ("gemm_1.3B", "gemm_2.7B", "gemm_6.7B", "gemm_8192"):
            cmd = steps[name].command
            self.assertEqual(cmd[cmd.index("--inputs") + 1], "random", name)
        with self.assertRaisesRegex(SuiteError, "runs on the cuda backend, not host"):
            build_steps(CAMPAIGNS["h100-single"], "host", "", {})

    def test_multirank_default_sweep(self):
        steps = build_steps(CAMPAIGNS["multirank"], "cuda", "", {})
        runs = [s for s in steps if s.group != "report" and not s.name.endswith("-plot")]
        self.assertEqual(len(runs), 8 * 2 + 6 * 2 + 3 + 6)
        one = next(s for s in runs if s.name == "grids8-g2x2x2x1-all")
        self.assertEqual((one.ranks, one.timeout_s, one.outputs),
                         (8, 150.0, ["grids8/g2x2x2x1-all.json"]))
        self.assertIn("--ranks-per-gpu", one.command)
        host = build_steps(CAMPAIGNS["multirank"], "host", "", {})
        self.assertNotIn("--ranks-per-gpu", host[0].command)

    def test_model_pipeline_shapes_and_picks(self):
        steps = {s.name: s for s in build_steps(CAMPAIGNS["model-pipeline"], "host", "",
                                                {"configs": "3"})}
        self.assertEqual([n for n in steps if n.startswith("gpt4d-pick")],
                         ["gpt4d-pick-1", "gpt4d-pick-2", "gpt4d-pick-3"])
        self.assertIn("{args:{out}/model/picks.json:2}", steps["gpt4d-pick-3"].command)
        self.assertIn("--hidden", steps["gpt4d-pick-1"].command)
        i = steps["gpt4d-pick-1"].command.index("--hidden")
        self.assertEqual(steps["gpt4d-pick-1"].command[i + 1], "64")  # tiny on the host
        with self.assertRaisesRegex(SuiteError, "expected an even number"):
            build_steps(CAMPAIGNS["model-pipeline"], "host", "", {"ranks": "3"})
        # On the host each GEMM step measures one core (one BLAS thread) and calibrate takes the
        # ranks per core from the collective run's context; on cuda the ranks share the GPU.
        with tempfile.TemporaryDirectory() as build:
            fake = os.path.join(build, "ovb-model")  # accepts every grid
            with open(fake, "w", encoding="utf-8") as f:
                f.write("#!/bin/sh\nexit 0\n")
            os.chmod(fake, 0o755)
            host = {s.name: s for s in build_steps(CAMPAIGNS["model-pipeline"], "host", build, {})}
            cuda = {s.name: s for s in build_steps(CAMPAIGNS["model-pipeline"], "cuda", build, {})}
        gemm = [s for n, s in host.items() if n.startswith("gemm-")]
        self.assertTrue(gemm)
        for s in gemm:
            self.assertEqual(s.env.get("OPENBLAS_NUM_THREADS"), "1", s.name)
        self.assertNotIn("--ranks-per-device", host["calibrate"].command)
        cal = cuda["calibrate"].command
        self.assertEqual(cal[cal.index("--ranks-per-device") + 1], "4")
        # The memory-bound kernels run on the pipeline's ranks and feed calibrate; the host's
        # bandwidth comes from their copy class, a GPU's stays the base file's datasheet value.
        self.assertEqual(host["membw"].ranks, 4)
        self.assertIn("membw", host["calibrate"].needs)
        self.assertIn("--mem-bandwidth-from-copy", host["calibrate"].command)
        self.assertIn("{out}/microbench/membw.json", cal)
        self.assertNotIn("--mem-bandwidth-from-copy", cal)

    def test_budget_defaults(self):
        self.assertEqual(default_budget(CAMPAIGNS["model-pipeline"], "cuda"), 540.0)
        self.assertIsNone(default_budget(CAMPAIGNS["model-pipeline"], "host"))
        self.assertEqual(default_budget(CAMPAIGNS["multirank"], "host"), 540.0)
        self.assertIsNone(default_budget(CAMPAIGNS["gpt4d-gpu"], "cuda"))

    def test_parse_params_order(self):
        c = CAMPAIGNS["multirank"]
        p = parse_params(c, ["grids8=2x2x2x1"], {"grids8": "1x1x1x8", "run_limit_s": "60"})
        self.assertEqual((p["grids8"], p["run_limit_s"]), ("2x2x2x1", "60"))
        self.assertEqual(p["grids4"], c.PARAMS["grids4"][0])


class GpuCampaignPlans(unittest.TestCase):
    """The baselines, overlap-matters and profile-1.3B presets: their steps on the host."""

    def test_baselines_runs_each_pair_back_to_back(self):
        steps = build_steps(CAMPAIGNS["baselines"], "cuda", "", {})
        names = [s.name for s in steps]
        by = {s.name: s for s in steps}
        for n in ("2", "4"):
            for coll in ("all_reduce", "reduce_scatter", "all_gather"):
                i = names.index(f"nccl-{coll}-{n}r")
                self.assertEqual(names[i + 1], f"ovb-{coll}-{n}r")
                nccl, ovb = by[f"nccl-{coll}-{n}r"], by[f"ovb-{coll}-{n}r"]
                self.assertEqual((nccl.ranks, ovb.ranks), (int(n), int(n)))
                sizes = ["-b", "64K", "-e", "256M", "-f", "4"]
                self.assertEqual(nccl.command[3:9], sizes)   # wrapper, out file, program, sizes
                self.assertEqual(ovb.command[9:15], sizes)
                self.assertIn("nccl-tests-build", nccl.needs)
            self.assertEqual(len(by[f"nccl-compare-{n}r"].needs), 6)
        build = by["nccl-tests-build"].command
        self.assertEqual(build[1], os.path.join(REPO, "shared", "baselines",
                                                "nccl-tests-2.19.6.tar.gz"))
        mlm = by["megatron-1.3B"]
        self.assertIn("--local", mlm.command)
        self.assertEqual(mlm.needs, ["gpt4d-1.3B", "megatron-unpack"])
        self.assertEqual(mlm.command[mlm.command.index("--micro-batch") + 1], "4")
        # gpt4d first, then the references, per shape; max-autotune last (minutes of compiling)
        for shape in ("125M", "350M", "1.3B", "2.7B"):
            i = names.index(f"gpt4d-{shape}")
            self.assertEqual(names[i + 1:i + 3], [f"torch-eager-{shape}", f"torch-compile-{shape}"])
        self.assertEqual(names[-5:], ["max-autotune-125M", "max-autotune-350M", "max-autotune-1.3B",
                                      "max-autotune-2.7B", "summary"])
        self.assertIn("--compile-mode", by["max-autotune-1.3B"].command)
        other = build_steps(CAMPAIGNS["baselines"], "cuda", "",
                            {"nccl_tests": "/opt/nt.tgz", "shapes": "125M", "ranks": "2"})
        self.assertEqual(other[1].command[1], "/opt/nt.tgz")
        self.assertFalse(any(s.name.startswith("megatron") for s in other))  # no 1.3B: no match

    def test_overlap_matters_repeats_outermost_and_socket_settings(self):
        from ovb_suite.campaigns.overlap_matters import CONDITIONS, run_order, socket_env
        steps = build_steps(CAMPAIGNS["overlap-matters"], "cuda", "", {})
        runs = [s for s in steps if s.name.startswith("r")]
        self.assertEqual(len(runs), 2 * 2 * len(CONDITIONS))
        # repeat 1: each condition on both grids in turn; repeat 2 the conditions reversed
        self.assertEqual([s.name for s in runs[:3]],
                         ["r1-1x1x1x4-none", "r1-1x1x4x1-none", "r1-1x1x1x4-oar"])
        self.assertEqual([s.name for s in runs[12:16]],
                         ["r1-1x1x1x4-all-compute-high", "r1-1x1x4x1-all-compute-high",
                          "r2-1x1x1x4-all-compute-high", "r2-1x1x4x1-all-compute-high"])
        self.assertEqual(runs[-1].name, "r2-1x1x4x1-none")
        self.assertTrue(all(s.name.startswith("r1-") for s in runs[:2 * len(CONDITIONS)]))
        self.assertEqual(run_order(3, ["a"])[14:], [(3, "a", "none"), (3, "a", "oar"),
                                                     (3, "a", "ors"), (3, "a", "oag"),
                                                     (3, "a", "all"), (3, "a", "all-prio-equal"),
                                                     (3, "a", "all-compute-high")])
        one = next(s for s in runs if s.name == "r2-1x1x4x1-all-prio-equal")
        self.assertEqual(one.ranks, 4)
        self.assertEqual(one.env, {"NCCL_SOCKET_NTHREADS": "4", "NCCL_NSOCKS_PERTHREAD": "4"})
        for word in ("--gz", "--gdata", "--comm-priority", "--compute-priority"):
            self.assertIn(word, one.command)
        self.assertEqual(len([s for s in steps if s.name.startswith("predict-")]), 10)
        self.assertEqual([s.name for s in steps if s.name.startswith("sockets-")],
                         ["sockets-default", "sockets-4x4"])
        names = [s.name for s in steps]
        self.assertLess(names.index(runs[-1].name), names.index("sockets-default"))
        other = build_steps(CAMPAIGNS["overlap-matters"], "cuda", "",
                            {"socket": "default", "configs": "1x1x2x2", "repeats": "1"})
        self.assertEqual([s.name for s in other if s.name.startswith("sockets-")],
                         ["sockets-default"])
        self.assertEqual(len([s for s in other if s.name.startswith("r1-1x1x2x2-")]), 7)
        self.assertFalse(any(s.env for s in other if s.name.startswith("r")))
        self.assertEqual(socket_env("default"), {})
        for bad in ("4", "0x4", "17x1", "8x16"):
            with self.assertRaisesRegex(SuiteError, "socket setting"):
                socket_env(bad)
        for params, msg in (({"configs": "1x4"}, "expected GXxGYxGZxGDATA"),
                            ({"repeats": "1.5"}, "repeats=1.5: expected a whole number"),
                            ({"iters": "--warmup 3"}, "expected --iters N")):
            with self.assertRaisesRegex(SuiteError, msg):
                build_steps(CAMPAIGNS["overlap-matters"], "cuda", "", params)

    def test_profile_pairs_and_lengths(self):
        steps = build_steps(CAMPAIGNS["profile-1.3B"], "cuda", "", {})
        names = [s.name for s in steps]
        self.assertEqual(names[1:7], ["untraced-10-1", "traced-10-1", "analyze-10-1",
                                      "untraced-30-1", "traced-30-1", "analyze-30-1"])
        self.assertEqual(len(names), 1 + 2 * 2 * 3 + 1)
        with self.assertRaisesRegex(SuiteError, "expected warmup < short < long"):
            build_steps(CAMPAIGNS["profile-1.3B"], "cuda", "", {"short": "40"})


class LlamaGpuPlan(unittest.TestCase):
    """The llama-gpu preset: the Llama checks, then gpt4d and the reference on one shape."""

    @staticmethod
    def value(step, flag):
        return step.command[step.command.index(flag) + 1]

    def test_checks_then_gpt4d_beside_the_reference_on_the_same_run(self):
        steps = build_steps(CAMPAIGNS["llama-gpu"], "cuda", "", {})
        names = [s.name for s in steps]
        self.assertEqual(names, ["gpu_info", "kernels", "compare_host", "compare_cuda_fp32",
                                 "compare_cuda_bf16", "same_model", "parallel_tests",
                                 "gpt4d-llama3-8B-L8",
                                 "torch-eager-llama3-8B-L8", "torch-compile-llama3-8B-L8",
                                 "summary"])
        by = {s.name: s for s in steps}
        # The Llama kernels, GQA attention included, from the CUDA kernel tests.
        self.assertIn("--gtest_filter=*RmsNorm*:*SwiGlu*:*Rotary*:*GroupedQuery*:*Cudnn*",
                      by["kernels"].command)
        self.assertIn("--gtest_filter=*Llama*", by["parallel_tests"].command)
        self.assertEqual(by["parallel_tests"].ranks, 4)
        self.assertTrue(CAMPAIGNS["llama-gpu"].MPS)
        for name in ("compare_host", "compare_cuda_fp32", "compare_cuda_bf16"):
            self.assertEqual(self.value(by[name], "--preset"), "llama-tiny")
        self.assertEqual(self.value(by["compare_cuda_fp32"], "--dtype"), "fp32")
        # gpt4d and both references: llama3-8B with 8 blocks, seq 2048, batch 2, 30 iterations
        # of which 5 warm-up: the same words for every system.
        same = by["same_model"].command
        self.assertTrue(same[1].endswith("endtoend/reference/check_same_model.py"))
        self.assertEqual(same[same.index("--gpt4d") + 1], by["compare_host"].command[0])
        runs = [by[n] for n in names[7:10]]
        for s in runs:
            for flag, want in (("--preset", "llama3-8B"), ("--layers", "8"), ("--seq", "2048"),
                               ("--batch", "2"), ("--iters", "30"), ("--warmup", "5")):
                self.assertEqual(self.value(s, flag), want, (s.name, flag))
            self.assertTrue(s.unfit, s.name)
        self.assertEqual(self.value(runs[0], "--backend"), "cuda")
        self.assertTrue(runs[1].command[1].endswith("endtoend/reference/pytorch_gpt.py"))
        self.assertNotIn("--compile", runs[1].command)
        self.assertIn("--compile", runs[2].command)
        self.assertEqual(runs[0].outputs, ["training/gpt4d_llama3-8B-L8.json"])
        self.assertEqual(runs[2].outputs, ["training/torch_llama3-8B-L8_compile.json"])
        self.assertEqual(by["summary"].command[-2:], ["llama-gpu", "{out}"])

    def test_params_and_fewer_than_20_timed_iterations_refused(self):
        steps = build_steps(CAMPAIGNS["llama-gpu"], "cuda", "",
                            {"layers": "4", "batch": "1", "kernel_filter": "*Rotary*"})
        by = {s.name: s for s in steps}
        self.assertIn("gpt4d-llama3-8B-L4", by)
        self.assertEqual(self.value(by["torch-eager-llama3-8B-L4"], "--batch"), "1")
        self.assertIn("--gtest_filter=*Rotary*", by["kernels"].command)
        with self.assertRaisesRegex(SuiteError, "at least 20 timed iterations"):
            build_steps(CAMPAIGNS["llama-gpu"], "cuda", "", {"iters": "24", "warmup": "5"})
        with self.assertRaisesRegex(SuiteError, "layers=0: expected a number > 0"):
            build_steps(CAMPAIGNS["llama-gpu"], "cuda", "", {"layers": "0"})
        with self.assertRaisesRegex(SuiteError, "runs on the cuda backend, not host"):
            build_steps(CAMPAIGNS["llama-gpu"], "host", "", {})


class GpuCheckPlan(unittest.TestCase):
    """The gpu-check preset (slurm/gpu-check.sh): one step per GPU-labelled ctest of the build, in
    ctest's order, then the Llama checks, the option runs, memory, the headline, the collectives;
    every program it runs is on its target list."""

    CTEST_JSON = {"tests": [{"name": "p.gpu.clean"}, {"name": "p.gpu.run"},
                            {"name": "gpt4d.parallel.cuda.4ranks.equivalence"}]}

    def fake_ctest(self, tmp):
        """A `ctest` on PATH that prints the label list (and records its arguments)."""
        exe = os.path.join(tmp, "ctest")
        with open(exe, "w", encoding="utf-8") as f:
            f.write("#!/bin/sh\necho \"$@\" > %s/args\ncat <<'EOF'\n%s\nEOF\n"
                    % (tmp, json.dumps(self.CTEST_JSON)))
        os.chmod(exe, 0o755)
        return exe

    def test_ctest_steps_from_the_build_then_the_parts_in_order(self):
        c = CAMPAIGNS["gpu-check"]
        with tempfile.TemporaryDirectory() as tmp:
            self.fake_ctest(tmp)
            old = os.environ["PATH"]
            os.environ["PATH"] = tmp + os.pathsep + old
            try:
                p = parse_params(c, [])
                b = build(c, Target(REPO, "/b", "cuda", 4, c.NAME), p)
            finally:
                os.environ["PATH"] = old
            self.assertEqual(read(os.path.join(tmp, "args")).split(),
                             ["--test-dir", "/b", "-N", "-L", "gpu", "--show-only=json-v1"])
        names = [s.name for s in b.steps]
        by = {s.name: s for s in b.steps}
        self.assertEqual(names[:4], ["gpu_info", "ctest-p.gpu.clean", "ctest-p.gpu.run",
                                     "ctest-gpt4d.parallel.cuda.4ranks.equivalence"])
        run = by["ctest-p.gpu.run"].command
        self.assertEqual(run[run.index("-R") + 1], r"^p\.gpu\.run$")
        self.assertEqual(run[run.index("-FA") + 1], ".*")  # its set-up is the step before
        self.assertEqual(by["ctest-gpt4d.parallel.cuda.4ranks.equivalence"].timeout_s, 240)
        groups = list(dict.fromkeys(s.group for s in b.steps))
        self.assertEqual(groups, ["info", "ctest", "llama", "options", "memory", "headline",
                                  "gemm-inputs", "collectives", "report"])
        # The same GEMMs on exact and then on random inputs, everything else equal.
        exact, rand = by["gemm-inputs-exact"].command, by["gemm-inputs-random"].command
        self.assertEqual(exact[exact.index("--inputs") + 1], "exact")
        self.assertEqual([w for w in exact if "exact" not in w],
                         [w for w in rand if "random" not in w])
        # Every suite program the steps run is built by slurm/gpu-check.sh.
        self.assertLessEqual(b.binaries, set(c.TARGETS))
        self.assertTrue(c.MPS)
        # The option runs: 4 ranks sharing the GPU, fp32, the serial run's model and batches.
        serial = by["options-serial"].command
        for tag, opts in c.OPTION_RUNS:
            s = by[f"options-{tag}"]
            self.assertEqual(s.ranks, 4)
            self.assertEqual(s.command[:len(serial) - 2], serial[:-2])
            self.assertEqual(s.command[-2 - len(opts):-2], opts)
        # Memory: the 1.3B shape under each option, ranks sharing the GPU where the grid has 4.
        self.assertEqual([by[f"memory-{t}"].ranks for t, _, _ in c.MEMORY_RUNS],
                         [0, 0, 0, 4, 4, 4, 4, 4])
        head = by["headline-1.3B"].command
        self.assertEqual(int(head[head.index("--iters") + 1]) -
                         int(head[head.index("--warmup") + 1]), 20)
        # At sequence 4096 the same tokens per step, everything else the headline's.
        long = by["headline-1.3B-seq4096"].command
        self.assertEqual((long[long.index("--seq") + 1], long[long.index("--batch") + 1]),
                         ("4096", "2"))
        self.assertEqual([w.replace("_seq4096", "") for w in long if w not in ("4096", "2")],
                         [w for w in head if w not in ("2048", "4")])
        self.assertIn("1M", by["ovb-all_reduce-2r"].command)
        self.assertIn("256M", by["nccl-all_gather-4r"].command)
        self.assertEqual(by["summary"].command[-2:], ["gpu-check", "{out}"])

    def test_unconfigured_build_runs_the_whole_label_in_one_step(self):
        steps = build_steps(CAMPAIGNS["gpu-check"], "cuda", "", {})
        ctest = [s for s in steps if s.group == "ctest"]
        self.assertEqual([s.name for s in ctest], ["ctest-gpu"])
        self.assertIn("-L", ctest[0].command)
        self.assertIn("no build folder", ctest[0].description)


class MpsStart(unittest.TestCase):
    def test_no_control_binary_is_a_note_not_an_error(self):
        path = os.environ["PATH"]
        os.environ["PATH"] = "/nonexistent"
        try:
            m = Mps()
            self.assertIn("off: nvidia-cuda-mps-control not found", m.start())
            self.assertFalse(m.on)
            m.stop()
        finally:
            os.environ["PATH"] = path


def build_steps(campaign, backend, build_dir, params):
    p = parse_params(campaign, [f"{k}={v}" for k, v in params.items()])
    return build(campaign, Target(REPO, build_dir, backend, 4, campaign.NAME), p).steps


if __name__ == "__main__":
    unittest.main()
