"""The rehearsal, on a CPU machine, of the one GPU call `slurm/gpu-overlap.sh OUT_DIR`: its dry run
(the build commands and the driver's plan of the overlap-matters preset) checked against what the
call must do - build one architecture and exactly the binaries the plan runs; every condition on
every grid in every repeat, with the flags and priorities that define it; repeats outermost, the
grids alternating and the condition order reversed every second repeat, so that every condition's
mean position (a linear drift) is the same; warm-up excluded; the runs' NCCL socket setting in
each step's environment and probed beside NCCL's default; the estimate (build + steps) within the
budget, and the budget and the summary within the call's 600 s. Then the call itself with
stand-ins for cmake and the GPU programs (tests/fixtures/gpu-overlap-stub.py) and a short budget:
the build counts in it, the first runs of the plan finish and the rest wait for a next call, the
summary is written with what finished. With a host gpt4d ($OVB_TEST_GPT4D), a run under a planned
step's environment records the socket setting in its result's context and the preset's summary
reads it from there.

Run: python3 slurm/tests/gpu_overlap_plan.py -v      (ctest: slurm_gpu_overlap_plan)
"""

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import unittest
from datetime import datetime, timezone

SLURM = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
REPO = os.path.dirname(SLURM)
sys.path.insert(0, SLURM)
from ovb_suite.campaigns import overlap_matters as om  # noqa: E402

WRAPPER = os.path.join(SLURM, "gpu-overlap.sh")
CALL_LIMIT_S = 600  # one call on the GPU machine
# The conditions the campaign must answer, written out here as the reference: --overlap words and
# (comm, compute) stream priorities (None: gpt4d's default, communication high).
ALL = "oar,ors,oag"
EXPECTED = {"none": ("none", None), "oar": ("oar", None), "ors": ("ors", None),
            "oag": ("oag", None), "all": (ALL, None), "all-prio-equal": (ALL, ("normal", "normal")),
            "all-compute-high": (ALL, ("normal", "high"))}
STEP = re.compile(r"^(\S+) \((\S+)\)((?:  \[[^\]]*\])*)$")
RUN = re.compile(r"^r(\d+)-(\d+x\d+x\d+x\d+)-(.+)$")


def value(cmd, flag):
    return cmd[cmd.index(flag) + 1] if flag in cmd else None


def parse(text):
    """(lines before the plan, header, [(name, group, notes, command words)])."""
    lines = text.splitlines()
    steps, i = [], 0
    pre = []
    while i < len(lines) and not lines[i].startswith("# campaign "):
        pre.append(lines[i])
        i += 1
    header = lines[i] if i < len(lines) else ""
    i += 1
    while i < len(lines):
        m = STEP.match(lines[i])
        if not m or i + 1 >= len(lines) or not lines[i + 1].startswith("    "):
            raise AssertionError(f"not a step of the plan: {lines[i]!r}")
        notes = re.findall(r"\[([^\]]*)\]", m.group(3))
        steps.append((m.group(1), m.group(2), notes, shlex.split(lines[i + 1])))
        i += 2
    return pre, header, steps


def note(notes, prefix):
    hits = [n[len(prefix):] for n in notes if n.startswith(prefix)]
    return hits[0] if hits else None


class DryRun(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="ovb-gpu-overlap-")
        cls.env = dict(os.environ, OVB_GPU_BUILD=os.path.join(cls.tmp, "build"))
        cls.out = os.path.join(cls.tmp, "out")
        r = subprocess.run([WRAPPER, cls.out, "--dry-run"], capture_output=True, text=True,
                           env=cls.env, timeout=120)
        if r.returncode:
            raise AssertionError(f"dry run failed ({r.returncode}): {r.stderr}")
        cls.pre, cls.header, cls.steps = parse(r.stdout)
        cls.runs = [s for s in cls.steps if RUN.match(s[0])]

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_builds_one_architecture_and_exactly_what_the_plan_runs(self):
        configure = next(shlex.split(line) for line in self.pre if line.startswith("cmake --pre"))
        archs = [w for w in configure if w.startswith("-DCMAKE_CUDA_ARCHITECTURES=")]
        self.assertEqual(archs, ["-DCMAKE_CUDA_ARCHITECTURES=90"])
        self.assertIn("-DOVB_ENABLE_CUDNN=ON", configure)  # the committed runs' attention
        build = next(shlex.split(line) for line in self.pre if line.startswith("cmake --build"))
        targets = build[build.index("--target") + 1:]
        self.assertEqual(value(build, "-j"), str(os.cpu_count()))
        used = {os.path.basename(w) for _, _, _, cmd in self.steps for w in cmd
                if os.path.basename(w) in targets}
        # every binary the steps run, and the probe `run --backend cuda` runs first
        self.assertEqual(sorted(used | {"ovb-gpu-probe"}), sorted(targets))
        self.assertEqual(sorted(targets), ["gpt4d", "ovb-collective", "ovb-gpu-probe",
                                           "ovb-model"])
        self.assertFalse(os.path.exists(self.out), "a dry run writes no results folder")

    def test_every_condition_on_every_grid_in_every_repeat(self):
        params = dict(p.split("=", 1) for p in self.header.split("parameters: ")[1].split("; "))
        grids = params["configs"].split(",")
        self.assertEqual(grids, ["1x1x1x4", "1x1x4x1"])  # data, Z
        repeats = int(params["repeats"])
        self.assertGreaterEqual(repeats, 2)
        seen = {}
        for name, _, _, cmd in self.runs:
            rep, grid, cond = RUN.match(name).groups()
            seen.setdefault(int(rep), set()).add((grid, cond))
            flags, prio = EXPECTED[cond]
            self.assertEqual(value(cmd, "--overlap"), flags, name)
            self.assertEqual((value(cmd, "--comm-priority"), value(cmd, "--compute-priority")),
                             prio or (None, None), name)
            self.assertEqual("x".join(value(cmd, f) for f in ("--gx", "--gy", "--gz", "--gdata")),
                             grid, name)
            self.assertEqual(value(cmd, "--out"), f"{{tmp}}/runs/g{grid}-{cond}-r{rep}.json")
            self.assertEqual(value(cmd, "--batch"), "256")
        full = {(g, c) for g in grids for c in EXPECTED}
        self.assertEqual(seen, {r: full for r in range(1, repeats + 1)})

    def test_interleaved_so_that_a_linear_drift_adds_the_same_to_every_condition(self):
        order = [RUN.match(name).groups() for name, _, _, _ in self.runs]
        reps = [int(r) for r, _, _ in order]
        self.assertEqual(reps, sorted(reps))  # repeats outermost
        grids = sorted({g for _, g, _ in order})
        for i in range(0, len(order), len(grids)):  # each condition on the grids in turn
            block = order[i:i + len(grids)]
            self.assertEqual(len({(r, c) for r, _, c in block}), 1, block)
            self.assertEqual(sorted(g for _, g, _ in block), grids)
        for a, b in zip(order, order[1:]):
            self.assertNotEqual(a[1], b[1], "consecutive runs on the same grid")
        # Position = start order in the call. A drift d per run adds d x position; summed over
        # the repeats it is the same for every condition of a grid when the mean positions agree.
        for grid in grids:
            mean = {}
            for pos, (_, g, c) in enumerate(order):
                if g == grid:
                    mean.setdefault(c, []).append(pos)
            self.assertEqual(len({sum(p) / len(p) for p in mean.values()}), 1, (grid, mean))
        # ... which same-order repeats would not give: the check above can fail.
        ab = [(c, g) for c in EXPECTED for g in grids] * 2
        self.assertGreater(len({sum(i for i, x in enumerate(ab) if x[0] == c) for c in EXPECTED}),
                           1)

    def test_warmup_excluded_and_enough_timed_iterations(self):
        for name, _, _, cmd in self.runs:
            iters, warmup = int(value(cmd, "--iters")), int(value(cmd, "--warmup"))
            # the committed 4-rank runs: iteration 1 still up to 42 % above the median
            self.assertGreaterEqual(warmup, 2, name)
            self.assertGreaterEqual(iters - warmup, 8, name)

    def test_socket_setting_in_every_runs_environment_and_probed_beside_the_default(self):
        params = dict(p.split("=", 1) for p in self.header.split("parameters: ")[1].split("; "))
        threads, socks = params["socket"].split("x")
        want = f"NCCL_SOCKET_NTHREADS={threads} NCCL_NSOCKS_PERTHREAD={socks}"
        for name, _, notes, _ in self.runs:
            self.assertEqual(note(notes, "env "), want, name)
        probes = {n: note(notes, "env ") for n, _, notes, _ in self.steps
                  if n.startswith("sockets-")}
        self.assertEqual(probes, {"sockets-default": None, f"sockets-{params['socket']}": want})

    def test_runs_first_summary_last(self):
        names = [n for n, _, _, _ in self.steps]
        last_run = names.index(self.runs[-1][0])
        self.assertEqual(names[0], "gpu_info")
        self.assertEqual(names.index(self.runs[0][0]), 1)
        self.assertEqual(names[1:last_run + 1], [r[0] for r in self.runs])
        self.assertEqual(names[-1], "summary")
        self.assertIn("at every call", self.steps[-1][2])

    def test_estimate_within_the_budget_and_the_budget_within_the_call(self):
        m = re.search(r"budget (\d+) s; estimated ([\d.]+) s \(build (\d+) s \+ (\d+) steps "
                      r"([\d.]+) s\)", self.header)
        self.assertIsNotNone(m, self.header)
        budget, total, build, count, steps_s = (float(x) for x in m.groups())
        timed = [(n, float(note(notes, "~")[:-2])) for n, _, notes, _ in self.steps
                 if note(notes, "~") and "at every call" not in notes]
        self.assertEqual(len(timed), count)
        self.assertAlmostEqual(sum(t for _, t in timed), steps_s, delta=0.05)
        self.assertAlmostEqual(build + steps_s, total, delta=0.05)
        self.assertLessEqual(total, budget)
        # every step but the summary has an estimate; a run's is set-up + its iterations
        self.assertEqual(len(timed), len(self.steps) - 1)
        for name, _, notes, cmd in self.runs:
            want = om.RUN_SETUP_S + int(value(cmd, "--iters")) * om.ITER_S
            self.assertAlmostEqual(float(note(notes, "~")[:-2]), want, delta=0.005, msg=name)
        # the driver is stopped before the call's limit, after the budget (the summary's time)
        stop = re.search(r"stopped by timeout (\d+) s", "\n".join(self.pre))
        self.assertIsNotNone(stop)
        self.assertLess(budget, int(stop.group(1)))
        self.assertLessEqual(int(stop.group(1)), CALL_LIMIT_S)
        run = next(shlex.split(line) for line in self.pre if line.startswith("ovb-suite run"))
        self.assertIn("--budget-start", run)

    def test_bad_usage_is_one_line(self):
        for args, env, msg in (([], {}, "usage: gpu-overlap.sh OUT_DIR"),
                               ([self.out, "--resume", self.tmp], {}, "not a results folder"),
                               ([self.out, "--dry-run"], {"OVB_GPU_ARCH": "80;90"},
                                "expected one architecture"),
                               ([self.out, "--fast"], {}, "unknown option '--fast'")):
            r = subprocess.run([WRAPPER, *args], capture_output=True, text=True,
                               env=dict(self.env, **env), timeout=60)
            self.assertEqual(r.returncode, 2, args)
            self.assertIn(msg, r.stderr)
            self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)


class StubbedCall(unittest.TestCase):
    """The call itself, not dry, with stand-ins (tests/fixtures/gpu-overlap-stub.py) for cmake
    and the GPU programs, under a budget of 35 s of which the build takes 5: the build counts, no
    step starts with less than 20 s left, the runs that started are the first of the plan with
    their results in place, the rest waits for the next call, and the summary is written with
    what finished, the socket setting read from the results' contexts."""
    BUDGET_S, BUILD_S = 35, 5

    def test_a_call_cut_by_its_budget_keeps_what_finished_and_summarises_it(self):
        stub = os.path.join(SLURM, "tests", "fixtures", "gpu-overlap-stub.py")
        with tempfile.TemporaryDirectory(prefix="ovb-gpu-overlap-") as tmp:
            bindir = os.path.join(tmp, "bin")
            os.makedirs(bindir)
            for name in ("cmake", "nvidia-smi"):
                os.symlink(stub, os.path.join(bindir, name))
            env = {k: v for k, v in os.environ.items()
                   if not k.startswith("SLURM_") and k != "OVB_LAUNCHER"}
            env.update(PATH=bindir + os.pathsep + env["PATH"], STUB_LOG=os.path.join(tmp, "log"),
                       STUB_BUILD_S=str(self.BUILD_S), STUB_RUN_S="0.5",
                       OVB_GPU_BUILD=os.path.join(tmp, "build"),
                       OVB_PYTHON=env.get("OVB_PYTHON", sys.executable))
            out = os.path.join(tmp, "out")
            r = subprocess.run([WRAPPER, out, "--", "--budget", str(self.BUDGET_S)],
                               capture_output=True, text=True, env=env, timeout=300)
            self.assertEqual(r.returncode, 1, r.stdout + r.stderr)  # steps left for a next call
            with open(os.path.join(tmp, "log"), encoding="utf-8") as f:
                cmake = [line.split() for line in f]
            self.assertEqual(cmake[1][cmake[1].index("--target") + 1:],
                             ["gpt4d", "ovb-collective", "ovb-gpu-probe", "ovb-model"])
            folder = os.path.join(out, "overlap-matters")
            with open(os.path.join(folder, ".suite", "status.json"), encoding="utf-8") as f:
                rows = json.load(f)["steps"]
            with open(os.path.join(folder, ".suite", "suite.json"), encoding="utf-8") as f:
                start = json.load(f)["jobs"][-1]["budget_start"]
            t0 = datetime.strptime(start, "%Y-%m-%dT%H:%M:%SZ").replace(
                tzinfo=timezone.utc).timestamp()
            runs = [row for row in rows if RUN.match(row["step"])]
            done = [row["step"] for row in runs if row["status"] == "finished"]
            self.assertGreaterEqual(len(done), 1, rows)
            self.assertEqual(done, [row["step"] for row in runs[:len(done)]])
            for row in runs[len(done):] + [row for row in rows if row["step"] == "plot"]:
                self.assertEqual(row["status"], "pending", row)
                self.assertIn("left for the next call", row["error"])
            for name in done:
                with open(os.path.join(folder, ".suite", "state", name + ".json"),
                          encoding="utf-8") as f:
                    started = json.load(f)["started_epoch"]
                self.assertGreaterEqual(started, t0 + self.BUILD_S)  # after the build
                # started with 20 s of the budget left (t0 is rounded down to the second)
                self.assertLessEqual(started, t0 + 1 + self.BUDGET_S - 20)
                rep, grid, cond = RUN.match(name).groups()
                self.assertTrue(os.path.exists(
                    os.path.join(folder, "runs", f"g{grid}-{cond}-r{rep}.json")))
            summary = next(row for row in rows if row["step"] == "summary")
            self.assertEqual(summary["status"], "finished")
            with open(os.path.join(folder, "overlap-matters.json"), encoding="utf-8") as f:
                self.assertEqual(json.load(f)["run_sockets"], {"4x4": len(done)})
            with open(os.path.join(out, "gpu-overlap.log"), encoding="utf-8") as f:
                log = f.read()
            self.assertIn("build exit status 0", log)
            self.assertIn("driver exit status 1", log)


class ResultContext(unittest.TestCase):
    def test_the_step_environment_reaches_the_results_context_and_the_summary(self):
        gpt4d = os.environ.get("OVB_TEST_GPT4D")
        if not gpt4d or not os.path.exists(gpt4d):
            self.skipTest("no host gpt4d ($OVB_TEST_GPT4D): the context check needs one")
        env = om.socket_env("4x4")
        with tempfile.TemporaryDirectory(prefix="ovb-gpu-overlap-") as tmp:
            runs = os.path.join(tmp, "runs")
            os.makedirs(runs)
            out = os.path.join(runs, "g1x1x1x4-none-r1.json")
            r = subprocess.run([gpt4d, "--backend", "host", "--preset", "tiny", "--seq", "32",
                                "--vocab", "256", "--batch", "8", "--iters", "2",
                                "--warmup", "1", "--data", "synthetic", "--quiet", "--out", out],
                               capture_output=True, text=True, timeout=300,
                               env=dict(os.environ, **env))
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(out, encoding="utf-8") as f:
                recorded = json.load(f)["context"]["environment"]
            self.assertEqual({k: recorded.get(k) for k in env}, env)
            py = os.environ.get("OVB_PYTHON", sys.executable)
            r = subprocess.run([py, os.path.join(REPO, "analysis", "ovb-analysis"), "summarize",
                                "overlap-matters", tmp], capture_output=True, text=True,
                               timeout=300)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            with open(os.path.join(tmp, "overlap-matters.json"), encoding="utf-8") as f:
                self.assertEqual(json.load(f)["run_sockets"], {"4x4": 1})


if __name__ == "__main__":
    unittest.main()
