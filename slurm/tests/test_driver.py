"""Unit tests of the suite driver without Slurm: resume, failure recording, watchdog, signals,
requeue, locking, option checks, the built-in plan. Fake steps are small shell commands.

Run: python3 -m unittest discover -s slurm/tests -v      (ctest: slurm_driver_unit)
"""

import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import unittest
from dataclasses import replace

HERE = os.path.dirname(os.path.realpath(__file__))
SLURM = os.path.dirname(HERE)
DRIVER = os.path.join(SLURM, "ovb-suite")
sys.path.insert(0, SLURM)

from ovb_suite import presets  # noqa: E402
from ovb_suite.plan import Target, build_plan, model_base  # noqa: E402
from ovb_suite.suite import SETTLE_MAX_S, settle_window_s  # noqa: E402
from ovb_suite.util import SuiteError, failure_line  # noqa: E402


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def sh(script, **kw):
    return dict(command=["sh", "-c", script], **kw)


class DriverCase(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="ovb-suite-test-")
        self.dir = self.tmp.name
        self.out = os.path.join(self.dir, "results")
        self.env = dict(os.environ)
        for k in ("SLURM_JOB_ID", "SLURM_NTASKS", "SLURM_RESTART_COUNT", "OVB_LAUNCHER"):
            self.env.pop(k, None)

    def tearDown(self):
        self.tmp.cleanup()

    def steps_file(self, steps, name="steps.json"):
        path = os.path.join(self.dir, name)
        with open(path, "w", encoding="utf-8") as f:
            json.dump({"steps": steps}, f)
        return path

    def args(self, steps_file, *extra):
        return [sys.executable, DRIVER, "run", "--out", self.out, "--steps-file", steps_file,
                "--backend", "host", "--grace", "2", *extra]

    def run_driver(self, steps_file, *extra, timeout=120):
        return subprocess.run(self.args(steps_file, *extra), capture_output=True, text=True,
                              env=self.env, timeout=timeout)

    def start_driver(self, steps_file, *extra):
        return subprocess.Popen(self.args(steps_file, *extra), stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, env=self.env)

    def state(self, name):
        path = os.path.join(self.out, ".suite", "state", name + ".json")
        with open(path, encoding="utf-8") as f:
            return json.load(f)

    def wait_running(self, name, proc, limit=30):
        path = os.path.join(self.out, ".suite", "state", name + ".json")
        end = time.time() + limit
        while time.time() < end:
            if os.path.exists(path) and self.state(name)["status"] == "running":
                return
            if proc.poll() is not None:
                self.fail(f"driver ended early: {proc.stdout.read()}")
            time.sleep(0.05)
        self.fail(f"{name} never started")

    def flag(self, name):
        return os.path.join(self.dir, name)


class ResumeAndFailures(DriverCase):
    def test_all_finish_outputs_moved_and_valid(self):
        f = self.steps_file([
            sh("mkdir -p {tmp}/sub && echo '{\"x\": 1}' > {tmp}/sub/a.json", name="a",
               outputs=["sub/a.json"]),
            sh("cat {out}/sub/a.json > {tmp}/b.json", name="b", outputs=["b.json"], needs=["a"]),
        ])
        r = self.run_driver(f)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        with open(os.path.join(self.out, "b.json"), encoding="utf-8") as fh:
            self.assertEqual(json.load(fh), {"x": 1})
        self.assertEqual(self.state("a")["status"], "finished")
        self.assertFalse(os.path.exists(os.path.join(self.out, ".suite", "tmp", "a")))
        with open(os.path.join(self.out, ".suite", "status.json"), encoding="utf-8") as fh:
            status = json.load(fh)
        self.assertEqual(status["counts"], {"finished": 2})
        self.assertIn("| b | finished | 1 |", read(os.path.join(self.out, "suite-status.md")))
        self.assertIn("(2/2) b: finished", r.stdout)

    def test_failure_recorded_rest_continues_and_resume_skips_finished(self):
        ok = self.flag("b-may-succeed")
        f = self.steps_file([
            sh("echo '{}' > {tmp}/a.json", name="a", outputs=["a.json"]),
            sh(f"test -f {ok} || {{ echo first line; echo boom: disk on fire >&2; exit 3; }}; "
               "echo '{}' > {tmp}/b.json", name="b", outputs=["b.json"]),
            sh("echo '{}' > {tmp}/c.json", name="c", outputs=["c.json"]),
            sh("echo '{}' > {tmp}/d.json", name="d", outputs=["d.json"], needs=["b"]),
        ])
        r = self.run_driver(f)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        b = self.state("b")
        self.assertEqual(b["status"], "failed")
        self.assertEqual(b["exit_code"], 3)
        self.assertEqual(b["error"], "exit status 3: boom: disk on fire")
        self.assertIn("first line", b["log_tail"])
        self.assertEqual(self.state("c")["status"], "finished")  # the suite went on
        self.assertEqual(self.state("d")["error"], "needs b, which is failed")
        a_time = os.stat(os.path.join(self.out, "a.json")).st_mtime_ns
        a_rec = self.state("a")

        open(ok, "w").close()
        r = self.run_driver(f)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("(1/4) a: skipped, finished", r.stdout)
        self.assertEqual(self.state("a"), a_rec)  # not rerun
        self.assertEqual(os.stat(os.path.join(self.out, "a.json")).st_mtime_ns, a_time)
        self.assertEqual(self.state("b")["attempt"], 2)
        self.assertEqual(self.state("d")["status"], "finished")
        log = read(os.path.join(self.out, "logs", "b.txt"))
        self.assertIn("b attempt 1", log)
        self.assertIn("b attempt 2", log)

    def test_keep_failed_and_redo(self):
        f = self.steps_file([
            sh("echo '{}' > {tmp}/a.json", name="a", outputs=["a.json"]),
            sh("exit 1", name="b"),
            sh("echo '{}' > {tmp}/c.json", name="c", outputs=["c.json"], after=["a"]),
        ])
        self.run_driver(f)
        r = self.run_driver(f, "--keep-failed")
        self.assertIn("b: skipped, failed before", r.stdout)
        self.assertEqual(self.state("b")["attempt"], 1)
        c_started = self.state("c")["started_epoch"]
        r = self.run_driver(f, "--redo", "a", "--keep-failed")
        self.assertIn("a: runs again: --redo", r.stdout)
        self.assertIn("c: runs again: a finished after it (stale)", r.stdout)
        self.assertGreater(self.state("c")["started_epoch"], c_started)

    def test_missing_output_and_bad_json_fail(self):
        f = self.steps_file([
            sh("true", name="nothing", outputs=["x.json"]),
            sh("echo '{oops' > {tmp}/y.json", name="badjson", outputs=["y.json"]),
        ])
        r = self.run_driver(f)
        self.assertEqual(r.returncode, 1)
        self.assertIn("output x.json was not written", self.state("nothing")["error"])
        self.assertIn("output y.json is not valid JSON", self.state("badjson")["error"])
        self.assertFalse(os.path.exists(os.path.join(self.out, "y.json")))

    def test_missing_output_of_finished_step_reruns_it(self):
        f = self.steps_file([sh("echo '{}' > {tmp}/a.json", name="a", outputs=["a.json"])])
        self.run_driver(f)
        os.unlink(os.path.join(self.out, "a.json"))
        r = self.run_driver(f)
        self.assertIn("runs again: its output a.json is missing", r.stdout)
        self.assertTrue(os.path.exists(os.path.join(self.out, "a.json")))

    def test_step_that_cannot_run_is_failed_with_its_reason(self):
        f = self.steps_file([dict(name="g", command=[], missing="gpt4d not built"),
                             sh("true", name="h")])
        r = self.run_driver(f)
        self.assertEqual(r.returncode, 1)
        self.assertEqual(self.state("g")["error"], "gpt4d not built")
        self.assertEqual(self.state("h")["status"], "finished")

    def test_directory_output_replaces_old_one(self):
        f = self.steps_file([sh("mkdir -p {tmp}/tr && date +%s%N > {tmp}/tr/t1.json && "
                                "echo 1 > {tmp}/tr/t1.json", name="t", outputs=["tr"])])
        self.run_driver(f)
        os.makedirs(os.path.join(self.out, "tr", "stale"))
        r = self.run_driver(f, "--redo", "t")
        self.assertEqual(r.returncode, 0, r.stdout)
        self.assertEqual(sorted(os.listdir(os.path.join(self.out, "tr"))), ["t1.json"])


class Watchdog(DriverCase):
    def test_timeout_kills_hanging_step_and_its_children(self):
        pidfile = self.flag("child.pid")
        f = self.steps_file([
            dict(sh(f"sleep 1000 & echo $! > {pidfile}; wait", name="hang"), timeout_s=1),
            sh("true", name="after"),
        ])
        t0 = time.time()
        r = self.run_driver(f, timeout=60)
        self.assertLess(time.time() - t0, 30)
        self.assertEqual(r.returncode, 1)
        rec = self.state("hang")
        self.assertEqual(rec["status"], "failed")
        self.assertIn("watchdog: no completion within 1 s (timeout); killed", rec["error"])
        self.assertEqual(self.state("after")["status"], "finished")
        with open(pidfile, encoding="utf-8") as fh:
            child = int(fh.read())
        self.assertFalse(os.path.exists(f"/proc/{child}"), "the step's sleep survived")

    def test_stall_detects_silence(self):
        f = self.steps_file([dict(sh("echo working; sleep 1000", name="quiet"), timeout_s=100,
                                  stall_s=1)])
        r = self.run_driver(f, timeout=60)
        self.assertEqual(r.returncode, 1)
        self.assertIn("no output for 1 s (stalled)", self.state("quiet")["error"])

    def test_step_ignoring_sigterm_gets_sigkill_after_grace(self):
        f = self.steps_file([dict(sh("trap '' TERM; while :; do sleep 0.1; done", name="stubborn"),
                                  timeout_s=1)])
        t0 = time.time()
        r = self.run_driver(f, timeout=60)
        self.assertLess(time.time() - t0, 30)
        self.assertIn("SIGKILL", r.stdout)
        self.assertEqual(self.state("stubborn")["status"], "failed")


class Signals(DriverCase):
    def _hanging_suite(self):
        flag = self.flag("second-attempt")
        return self.steps_file([
            sh("echo '{}' > {tmp}/a.json", name="a", outputs=["a.json"]),
            sh(f"if test -f {flag}; then echo '{{}}' > {{tmp}}/b.json; exit 0; fi; "
               "trap 'echo flushed > {tmp}/partial.txt; exit 143' TERM; "
               "echo started; sleep 1000 & wait", name="b", outputs=["b.json"]),
            sh("echo '{}' > {tmp}/c.json", name="c", outputs=["c.json"]),
        ]), flag

    def test_sigterm_interrupts_step_then_rerun_resumes(self):
        f, flag = self._hanging_suite()
        p = self.start_driver(f)
        self.wait_running("b", p)
        time.sleep(0.5)  # the step's trap is set once it printed
        p.send_signal(signal.SIGTERM)
        out, _ = p.communicate(timeout=60)
        self.assertEqual(p.returncode, 128 + signal.SIGTERM, out)
        rec = self.state("b")
        self.assertEqual(rec["status"], "interrupted")
        self.assertEqual(rec["error"], "interrupted by SIGTERM")
        # The step got the signal and flushed its partial result, kept for inspection.
        partial = os.path.join(self.out, rec["partial"], "partial.txt")
        self.assertEqual(read(partial).strip(), "flushed")
        self.assertFalse(os.path.exists(os.path.join(self.out, ".suite", "state", "c.json")))
        self.assertNotIn("requeueing", out)  # not a Slurm job
        open(flag, "w").close()
        r = self.run_driver(f)
        self.assertEqual(r.returncode, 0, r.stdout)
        self.assertIn("attempt 1 was interrupted: running it again", r.stdout)
        self.assertEqual(self.state("a")["attempt"], 1)
        self.assertEqual(self.state("b")["attempt"], 2)

    def test_a_failed_step_settles_only_in_a_slurm_job(self):
        # Outside a Slurm job nothing but the driver signals a step: no wait; in one, up to --grace
        # and never above SETTLE_MAX_S.
        self.assertEqual(settle_window_s(2.0, {}), 0.0)
        self.assertEqual(settle_window_s(60.0, {"SLURM_NTASKS": "4"}), 0.0)
        self.assertEqual(settle_window_s(2.0, {"SLURM_JOB_ID": "7"}), 2.0)
        self.assertEqual(settle_window_s(60.0, {"SLURM_JOB_ID": "7"}), SETTLE_MAX_S)
        self.assertLess(SETTLE_MAX_S, 60.0)
        # A failing step outside a job: the driver does not hold it (with --grace 30 a settle
        # would keep the driver SETTLE_MAX_S = 10 s past the step).
        f = self.steps_file([sh("exit 3", name="fails")])
        t0 = time.monotonic()
        r = self.run_driver(f, "--grace", "30")
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertEqual(self.state("fails")["status"], "failed")
        self.assertLess(time.monotonic() - t0, SETTLE_MAX_S - 2, r.stdout)

    def test_signal_just_after_a_failed_step_makes_it_interrupted(self):
        # scancel's SIGTERM can reach the ranks (or make srun fail: "Unable to create step")
        # before the driver: a stop arriving while the failed step settles means it was cut off.
        # Only in a Slurm job (settle_window_s): the driver is told it runs in one.
        self.env.update(SLURM_JOB_ID="4242", OVB_LAUNCHER="mpirun")
        started = self.flag("started")
        f = self.steps_file([sh(f"touch {started}; echo 'srun: error: Unable to create step'; "
                                "exit 1", name="cut"), sh("true", name="next")])
        p = self.start_driver(f)
        end = time.time() + 30
        while not os.path.exists(started) and time.time() < end:
            time.sleep(0.02)
        time.sleep(0.5)  # the step has ended; the driver waits up to --grace 2 s for a stop
        p.send_signal(signal.SIGTERM)
        out, _ = p.communicate(timeout=60)
        self.assertEqual(p.returncode, 128 + signal.SIGTERM, out)
        rec = self.state("cut")
        self.assertEqual(rec["status"], "interrupted", out)
        self.assertEqual(rec["error"], "interrupted by SIGTERM")
        self.assertGreater(rec["signal_after_end_s"], 0.2)
        self.assertIn("it was cut off, not failed", out)
        self.assertFalse(os.path.exists(os.path.join(self.out, ".suite", "state", "next.json")))
        r = self.run_driver(f)
        self.assertEqual(r.returncode, 1, r.stdout)
        self.assertIn("attempt 1 was interrupted: running it again", r.stdout)
        rec = self.state("cut")  # without a stop it is a plain failure after the settle window
        self.assertEqual((rec["status"], rec["attempt"]), ("failed", 2))
        self.assertEqual(rec["error"], "exit status 1: srun: error: Unable to create step")
        self.assertIsNone(rec["signal_after_end_s"])

    def test_step_told_to_stop_is_interrupted_even_if_it_exits_0(self):
        # What a step writes after being told to stop may be partial: never taken as finished.
        f = self.steps_file([sh("trap 'echo \"{\\\"partial\\\": 1}\" > {tmp}/a.json; exit 0' "
                                "TERM; echo started; sleep 1000 & wait", name="a",
                                outputs=["a.json"])])
        p = self.start_driver(f)
        self.wait_running("a", p)
        time.sleep(0.5)
        p.send_signal(signal.SIGTERM)
        out, _ = p.communicate(timeout=60)
        rec = self.state("a")
        self.assertEqual((rec["status"], rec["exit_code"]), ("interrupted", 0), out)
        self.assertFalse(os.path.exists(os.path.join(self.out, "a.json")))
        self.assertTrue(os.path.exists(os.path.join(self.out, rec["partial"], "a.json")))

    def test_usr1_in_a_slurm_job_requeues_it(self):
        bindir = os.path.join(self.dir, "bin")
        os.makedirs(bindir)
        calls = self.flag("scontrol.calls")
        with open(os.path.join(bindir, "scontrol"), "w", encoding="utf-8") as fh:
            fh.write(f"#!/bin/sh\necho \"$@\" >> {calls}\n")
        os.chmod(os.path.join(bindir, "scontrol"), 0o755)
        self.env.update(PATH=bindir + os.pathsep + self.env["PATH"], SLURM_JOB_ID="4242",
                        OVB_LAUNCHER="mpirun")
        f, _ = self._hanging_suite()
        p = self.start_driver(f)
        self.wait_running("b", p)
        time.sleep(0.5)
        p.send_signal(signal.SIGUSR1)
        out, _ = p.communicate(timeout=60)
        self.assertEqual(p.returncode, 128 + signal.SIGUSR1, out)
        self.assertEqual(self.state("b")["status"], "interrupted")
        self.assertEqual(read(calls).split(), ["requeue", "4242"])
        self.assertEqual(self.state("b")["job_id"], "4242")

    def test_second_driver_on_same_folder_is_refused(self):
        f, _ = self._hanging_suite()
        p = self.start_driver(f)
        try:
            self.wait_running("b", p)
            r = self.run_driver(f)
            self.assertEqual(r.returncode, 2)
            self.assertRegex(r.stderr, r"^ovb-suite: error: .* is in use by ovb-suite pid \d+")
        finally:
            p.send_signal(signal.SIGTERM)
            p.communicate(timeout=60)


class Options(DriverCase):
    def test_rerun_with_other_options_is_refused(self):
        f = self.steps_file([sh("true", name="a")])
        g = self.steps_file([sh("true", name="a")], name="other.json")
        self.assertEqual(self.run_driver(f, "--ranks", "2").returncode, 0)
        r = self.run_driver(g)
        self.assertEqual(r.returncode, 2)
        self.assertIn("was started with other options: --steps-file", r.stderr)
        r = self.run_driver(f, "--ranks", "3")
        self.assertIn("--ranks 3 (folder: 2)", r.stderr)

    def test_arch_is_recorded_and_campaigns_refuse_it(self):
        f = self.steps_file([sh("true", name="a")])
        r = self.run_driver(f, "--arch", "llama")
        self.assertEqual(r.returncode, 2)
        self.assertIn("--arch: a steps file names its own models", r.stderr)
        r = subprocess.run([sys.executable, DRIVER, "list", "--preset", "multirank", "--arch",
                            "llama"], capture_output=True, text=True, env=self.env)
        self.assertEqual(r.returncode, 2)
        self.assertIn("--arch: preset multirank names its own models", r.stderr)
        r = subprocess.run([sys.executable, DRIVER, "list", "--arch", "llama", "--backend",
                            "cuda", "--build", self.dir], capture_output=True, text=True,
                           env=self.env)
        self.assertEqual(r.returncode, 0, r.stderr)  # gpt4d runs Llama on CUDA as well
        self.assertIn("--arch llama --kv-heads 8 --ffn-hidden 2816", r.stdout)
        r = subprocess.run([sys.executable, DRIVER, "list", "--arch", "llama", "--backend",
                            "host", "--build", self.dir], capture_output=True, text=True,
                           env=self.env)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("preset quick (llama)", r.stdout)
        self.assertIn("--arch llama --kv-heads 2 --ffn-hidden 176", r.stdout)

    def test_rounds_are_recorded_and_campaigns_refuse_them(self):
        f = self.steps_file([sh("true", name="a")])
        r = self.run_driver(f, "--rounds", "2")
        self.assertEqual(r.returncode, 2)
        self.assertIn("--rounds: a steps file names its own models and runs", r.stderr)
        base = [sys.executable, DRIVER, "list", "--backend", "host", "--build", self.dir]
        for rounds, names in ((None, 21), ("1", 7), ("2", 14)):
            r = subprocess.run(base + (["--rounds", rounds] if rounds else []),
                               capture_output=True, text=True, env=self.env)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(len(re.findall(r"^gpt4d-\S+", r.stdout, re.M)), names, r.stdout)
        r = subprocess.run(base + ["--preset", "multirank", "--rounds", "2"],
                           capture_output=True, text=True, env=self.env)
        self.assertIn("--rounds: preset multirank names its own models and runs", r.stderr)
        # A folder started with 3 rounds refuses a resume with another count.
        os.makedirs(os.path.join(self.out, ".suite"), exist_ok=True)
        with open(os.path.join(self.out, ".suite", "suite.json"), "w", encoding="utf-8") as fh:
            json.dump({"preset": "quick", "arch": "gpt", "rounds": 3, "backend": "host",
                       "ranks": 4, "ranks_per_gpu": 1, "jobs": []}, fh)
        r = subprocess.run([sys.executable, DRIVER, "run", "--out", self.out, "--backend", "host",
                            "--build", self.dir, "--rounds", "1", "--dry-run"],
                           capture_output=True, text=True, env=self.env)
        self.assertEqual(r.returncode, 2, r.stdout)
        self.assertIn("--rounds 1 (folder: 3)", r.stderr)

    def test_bad_steps_files_give_one_line(self):
        cases = {
            "[1, 2]": "expected {\"steps\": [ ... ]}",
            "{\"steps\": [{\"name\": \"a\"}]}": "missing 'command'",
            "{\"steps\": [{\"name\": \"a\", \"command\": [\"x\"], \"colour\": 1}]}":
                "unknown key(s) colour",
            "{\"steps\": [{\"name\": \"a\", \"command\": [\"x\"], \"needs\": [\"b\"]}]}":
                "depends on 'b', which is not an earlier step",
            "{\"steps\": [{\"name\": \"a\", \"command\": [\"x\"], \"outputs\": [\"../x\"]}]}":
                "must be a relative path",
            "{\"steps\": [": "malformed JSON at line 1",
        }
        for text, msg in cases.items():
            path = os.path.join(self.dir, "bad.json")
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(text)
            r = self.run_driver(path)
            self.assertEqual(r.returncode, 2, text)
            self.assertIn(msg, r.stderr)
            self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)

    def test_usage_errors_are_one_line(self):
        for args in (["run", "--preset", "huge"], ["bogus"], ["run", "--ranks", "0"],
                     ["exec", "--name", "a", "--out", self.out]):
            r = subprocess.run([sys.executable, DRIVER, *args], capture_output=True, text=True,
                               env=self.env)
            self.assertEqual(r.returncode, 2, args)
            self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
            self.assertRegex(r.stderr, r"^ovb-suite( run| exec)?: error: ")

    def test_unknown_only_and_out_required(self):
        f = self.steps_file([sh("true", name="a")])
        r = self.run_driver(f, "--only", "nope")
        self.assertIn("--only: unknown group or step nope", r.stderr)
        r = subprocess.run([sys.executable, DRIVER, "run", "--steps-file", f], capture_output=True,
                           text=True, env=self.env)
        self.assertEqual(r.returncode, 2)
        self.assertIn("--out DIR is required outside a Slurm job", r.stderr)

    def test_multi_rank_step_through_mpirun(self):
        self.env["OVB_LAUNCHER"] = "mpirun"
        f = self.steps_file([dict(name="ranks", ranks=3, command=[
            "sh", "-c", "echo rank=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-?}} >> {tmp}/../../ranks"])])
        r = self.run_driver(f)
        self.assertEqual(r.returncode, 0, r.stdout + read(os.path.join(self.out, "logs", "ranks.txt")))
        with open(os.path.join(self.out, ".suite", "ranks"), encoding="utf-8") as fh:
            self.assertEqual(sorted(fh.read().split()), ["rank=0", "rank=1", "rank=2"])


class CommTimeout(DriverCase):
    """OVB_COMM_TIMEOUT_S for multi-rank steps, through a stand-in mpirun that runs the command
    once (rank 0 of N) and exits with its status."""

    def setUp(self):
        super().setUp()
        bindir = os.path.join(self.dir, "bin")
        os.makedirs(bindir)
        with open(os.path.join(bindir, "mpirun"), "w", encoding="utf-8") as fh:
            fh.write("#!/bin/sh\n[ \"$1\" = --version ] && { echo stand-in; exit 0; }\n"
                     "shift 2\nexec \"$@\"\n")
        os.chmod(os.path.join(bindir, "mpirun"), 0o755)
        self.env.update(PATH=bindir + os.pathsep + self.env["PATH"], OVB_LAUNCHER="mpirun")
        self.env.pop("OVB_COMM_TIMEOUT_S", None)

    def seen(self, *extra, steps=None):
        """{step: (value the command saw, record's comm_timeout_s, comm_timeout_from)}."""
        probe = "echo \"${OVB_COMM_TIMEOUT_S-unset}\" > {tmp}/seen.txt"
        f = self.steps_file(steps or [
            dict(sh(probe, name="ranked", outputs=["seen.txt"]), ranks=4, stall_s=300),
            dict(sh(probe.replace("seen", "t"), name="untimed", outputs=["t.txt"]), ranks=2,
                 timeout_s=50),
            dict(sh(probe.replace("seen", "one"), name="one", outputs=["one.txt"]), ranks=1,
                 stall_s=300),
            dict(sh(probe.replace("seen", "own"), name="own", outputs=["own.txt"],
                    env={"OVB_COMM_TIMEOUT_S": "7"}), ranks=4, stall_s=300)])
        r = self.run_driver(f, "--redo", "ranked,untimed,one,own", *extra)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        files = {"ranked": "seen.txt", "untimed": "t.txt", "one": "one.txt", "own": "own.txt"}
        return {n: (read(os.path.join(self.out, o)).strip(), self.state(n)["comm_timeout_s"],
                    self.state(n)["comm_timeout_from"]) for n, o in files.items()}

    def test_derived_from_stall_or_time_limit_and_overridden(self):
        got = self.seen()
        self.assertEqual(got["ranked"], ("240", 240, "stall limit"))  # 0.8 x stall 300 s
        self.assertEqual(got["untimed"], ("40", 40, "time limit"))    # no stall: 0.8 x 50 s
        self.assertEqual(got["one"], ("unset", None, None))           # one rank: no peers
        self.assertEqual(got["own"], ("7", 7, "step env"))
        got = self.seen("--timeout-scale", "2")
        self.assertEqual(got["ranked"][:2], ("480", 480))
        self.env["OVB_COMM_TIMEOUT_S"] = "90"  # exported by the site configuration
        got = self.seen()
        self.assertEqual(got["ranked"], ("90", 90, "environment"))
        self.assertEqual(got["one"], ("90", 90, "environment"))
        self.assertEqual(got["own"][2], "step env")
        got = self.seen("--comm-timeout", "0")  # the option wins; 0 turns it off
        self.assertEqual(got["ranked"], ("0", 0, "--comm-timeout"))

    def test_bad_values_are_one_line_errors(self):
        f = self.steps_file([sh("true", name="a")])
        self.env["OVB_COMM_TIMEOUT_S"] = "soon"
        r = self.run_driver(f)
        self.assertEqual(r.returncode, 2)
        self.assertEqual(r.stderr.strip(), "ovb-suite: error: OVB_COMM_TIMEOUT_S='soon': expected "
                         "seconds >= 0 (0: no collective watchdog)")
        del self.env["OVB_COMM_TIMEOUT_S"]
        r = self.run_driver(f, "--comm-timeout", "-1")
        self.assertEqual(r.returncode, 2)
        self.assertIn("--comm-timeout: must be >= 0", r.stderr)
        g = self.steps_file([sh("true", name="a", env={"OVB_COMM_TIMEOUT_S": "x"})], "bad.json")
        r = self.run_driver(g)
        self.assertEqual(r.returncode, 2)
        self.assertIn("step 1: env OVB_COMM_TIMEOUT_S='x'", r.stderr)


class DefaultBuild(unittest.TestCase):
    def test_first_build_with_every_needed_binary_is_chosen(self):
        from ovb_suite.launch import pick_build
        from ovb_suite.util import SuiteError
        with tempfile.TemporaryDirectory() as repo:
            def exe(path):
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(path, "w", encoding="utf-8") as fh:
                    fh.write("#!/bin/sh\n")
                os.chmod(path, 0o755)
            exe(os.path.join(repo, "build", "cuda", "endtoend", "gpt4d"))
            exe(os.path.join(repo, "build", "host", "endtoend", "gpt4d"))
            exe(os.path.join(repo, "build", "host", "analysis", "model", "ovb-model"))
            build, note = pick_build(repo, {"gpt4d", "ovb-model"})
            self.assertEqual(build, os.path.join(repo, "build", "host"))
            self.assertEqual(note, "build/cuda lacks ovb-model")
            self.assertEqual(pick_build(repo, {"gpt4d"})[0], os.path.join(repo, "build", "cuda"))
            with self.assertRaises(SuiteError) as e:
                pick_build(repo, {"gpt4d", "ovb-trace"})
            self.assertIn("build/cuda lacks ovb-trace; build/host lacks ovb-trace",
                          str(e.exception))
            self.assertEqual(pick_build(repo, {"ovb-trace"}, strict=False)[0],
                             os.path.join(repo, "build", "cuda"))
            self.assertEqual(pick_build(os.path.join(repo, "none"), {"gpt4d"}), (None, ""))


class Plan(unittest.TestCase):
    def test_grids_from_patterns(self):
        self.assertEqual(presets.grid_for("xy", 8), (4, 2, 1, 1))
        self.assertEqual(presets.grid_for("xyzd", 8), (2, 2, 2, 1))
        self.assertEqual(presets.grid_for("data", 4), (1, 1, 1, 4))
        self.assertEqual(presets.grid_for("zd", 12), (1, 1, 6, 2))
        p = presets.preset("quick", "host")
        self.assertEqual(presets.grids(p, 4), [(1, 1, 1, 4), (2, 2, 1, 1), (1, 1, 2, 2)])
        self.assertEqual(presets.grids(p, 1), [(1, 1, 1, 1)])
        for g in presets.grids(presets.preset("full", "cuda"), 8):
            self.assertEqual(g[0] * g[1] * g[2] * g[3], 8)

    def test_builtin_plan_marks_missing_binaries_and_orders_dependencies(self):
        with tempfile.TemporaryDirectory() as build:
            steps = build_plan(Target(os.path.dirname(SLURM), build, "host", 4, "quick"))
        names = [s.name for s in steps]
        self.assertEqual(names[:5], ["microbench-gemm", "microbench-collective",
                                     "microbench-overlap", "microbench-membw",
                                     "microbench-overlap-wait"])
        self.assertEqual(names[-1], "report")
        gpt = [s for s in steps if s.group == "gpt4d"]
        # 3 grids x 2 overlap sets of GPT, then the one llama-tiny step, in each of 3 rounds:
        # round 1 under the plain names, rounds 2 and 3 the same configurations again in order.
        self.assertEqual(len(gpt), 21)
        first = [s.name for s in gpt[:7]]
        for r in (2, 3):
            self.assertEqual([s.name for s in gpt[7 * (r - 1):7 * r]],
                             [f"{n}-round-{r}" for n in first])
            self.assertEqual([s.outputs for s in gpt[7 * (r - 1):7 * r]],
                             [[o.replace(".json", f".round-{r}.json") for o in s.outputs]
                              for s in gpt[:7]])
        # The same command, but for the result file (the last argument).
        self.assertEqual([s.command[:-1] for s in gpt[7:14]], [s.command[:-1] for s in gpt[:7]])
        self.assertEqual([s.command[-1] for s in gpt[7:14]],
                         [s.command[-1].replace(".json", ".round-2.json") for s in gpt[:7]])
        self.assertEqual(len({s.name for s in steps}), len(steps))
        self.assertNotIn("--arch", gpt[0].command)
        gpt = gpt[:7]
        llama = gpt[-1].command
        self.assertEqual(gpt[-1].name, "gpt4d-llama-g1x1x1x4-oar-ors-oag")
        self.assertEqual(llama[llama.index("--arch"):llama.index("--arch") + 6],
                         ["--arch", "llama", "--kv-heads", "2", "--ffn-hidden", "176"])
        # As many iterations as the GPT runs: the model's comparison reads its timing too.
        self.assertEqual(llama[llama.index("--iters") + 1], "23")
        self.assertEqual(gpt[0].missing.split(" (")[0], "gpt4d not built")
        cal = next(s for s in steps if s.name == "model-calibrate")
        self.assertEqual(cal.needs, names[:4])  # not microbench-overlap-wait: not charged
        # The host's memory bandwidth and per-class efficiencies come from ovb-membw's run.
        mem = cal.command.index("--mem")
        self.assertEqual(cal.command[mem:mem + 3], ["--mem", "{out}/microbench/membw.json",
                                                    "--mem-bandwidth-from-copy"])
        self.assertEqual(steps[3].ranks, 4)
        self.assertEqual(set(steps[-1].after), set(names[:-1]))
        for s in steps:  # every command writes only into its work folder
            self.assertTrue(all("{tmp}/" + o in " ".join(s.command) for o in s.outputs), s.name)

    def test_host_steps_run_one_blas_thread_per_rank(self):
        """The 1-rank GEMM calibration measures one core, as each gpt4d rank runs: ovb-model
        divides that rate among the ranks per core (docs/model-machines.md)."""
        from ovb_suite.launch import Launcher
        from ovb_suite.suite import Suite
        with tempfile.TemporaryDirectory() as build:
            steps = {s.name: s for s in build_plan(Target(os.path.dirname(SLURM), build, "host", 4,
                                                          "quick"))}
            gemm = steps["microbench-gemm"]
            self.assertEqual(gemm.ranks, 1)
            suite = Suite(os.path.join(build, "out"), list(steps.values()),
                          launcher=Launcher("mpirun", "mpirun", open_mpi=True), backend="host",
                          signals=None)
            saved = {k: os.environ.pop(k, None) for k in ("OPENBLAS_NUM_THREADS",
                                                          "OMP_NUM_THREADS")}
            try:
                for name in ("microbench-gemm", "gpt4d-g1x1x1x4-none"):
                    env = suite._env(steps[name], build)
                    self.assertEqual((env["OPENBLAS_NUM_THREADS"], env["OMP_NUM_THREADS"]),
                                     ("1", "1"), name)
            finally:
                os.environ.update({k: v for k, v in saved.items() if v is not None})

    def test_llama_plan_trains_the_presets_llama_model_everywhere(self):
        with tempfile.TemporaryDirectory() as build:
            steps = build_plan(Target(os.path.dirname(SLURM), build, "host", 4, "quick",
                                      arch="llama"))
        shaped = [s for s in steps if "--hidden" in s.command]
        # 6 gpt4d runs in each of 3 rounds, 1 traced run, model-search, the traced run's
        # predicted timeline; no extra arch-check step.
        self.assertEqual(len(shaped), 3 * 6 + 3)
        for s in shaped:
            c = s.command
            self.assertEqual(c[c.index("--arch"):c.index("--arch") + 6],
                             ["--arch", "llama", "--kv-heads", "2", "--ffn-hidden", "176"], s.name)
        self.assertFalse(any("llama-" in s.name for s in steps))
        # The cuda presets' Llama models: half the K/V heads, SwiGLU 8h/3 rounded up to 256.
        for name, hidden, ffn in (("quick", 1024, 2816), ("full", 2048, 5632)):
            m = presets.preset(name, "cuda", "llama").model
            self.assertEqual((m.arch, m.kv_heads, m.ffn_hidden), ("llama", 8, ffn))
            self.assertEqual(ffn, -(-8 * hidden // 3 // 256) * 256)
        with self.assertRaisesRegex(SuiteError, "unknown architecture 'bert'"):
            presets.preset("quick", "host", "bert")

    def test_fits_knows_the_llama_rules(self):
        # Hand-checked against the Llama rules: quick host Llama is hidden 64, heads 4, kv-heads
        # 2, SwiGLU 176, vocab 256.
        m = presets.preset("quick", "host", "llama").model
        self.assertTrue(presets.fits(m, (2, 2, 1, 1), 8))    # kv 2 % Gy 2, 176 % 2
        self.assertFalse(presets.fits(m, (1, 4, 1, 1), 8))   # heads 4 % 4 but kv-heads 2 % 4
        self.assertTrue(presets.fits(m, (1, 1, 2, 2), 8))    # every block even
        self.assertFalse(presets.fits(replace(m, kv_heads=3), (1, 1, 1, 1), 8))  # 4 % 3
        self.assertFalse(presets.fits(replace(m, ffn_hidden=171), (1, 2, 1, 1), 8))  # 171 % 2
        self.assertFalse(presets.fits(replace(m, hidden=72, heads=8), (1, 1, 1, 1), 8))  # hd 9
        # QKV of hidden 64, 4 heads, kv 2: (4 + 2*2) * 16 = 128 outputs x 64 inputs, not % 3.
        self.assertFalse(presets.fits(m, (1, 1, 3, 1), 9))
        # GQA and other MLP widths are Llama's.
        self.assertFalse(presets.fits(replace(m, arch="gpt"), (1, 1, 1, 1), 8))
        self.assertTrue(presets.fits(replace(m, arch="gpt", kv_heads=0, ffn_hidden=0),
                                     (1, 1, 1, 1), 8))
        self.assertEqual(presets.grids(presets.preset("quick", "host", "llama"), 4),
                         [(1, 1, 1, 4), (2, 2, 1, 1), (1, 1, 2, 2)])

    def test_overlap_runs_once_per_cdmc_value_where_the_preset_lists_several(self):
        repo = os.path.dirname(SLURM)
        with tempfile.TemporaryDirectory() as build:
            cuda = build_plan(Target(repo, build, "cuda", 8, "full"), groups=("microbench",))
            host = build_plan(Target(repo, build, "host", 4, "full"), groups=("microbench",))
        over = [s for s in cuda if s.name.startswith("microbench-overlap")]
        self.assertEqual([s.name for s in over], ["microbench-overlap",
                                                  "microbench-overlap-cdmc-default"])
        self.assertEqual([s.outputs for s in over], [["microbench/overlap.json"],
                                                     ["microbench/overlap.cdmc-default.json"]])
        self.assertEqual([s.command[s.command.index("--cdmc-run") + 1] for s in over],
                         ["1", "default"])
        # The host section lists one value (no CUDA context): one step, no --cdmc-run; beside
        # it the blocking_wait scenario's step (host only), which calibrate reads as well.
        over = [s for s in host if s.name.startswith("microbench-overlap")]
        self.assertEqual([s.name for s in over], ["microbench-overlap", "microbench-overlap-wait"])
        self.assertNotIn("--cdmc-run", over[0].command)
        wait = over[1]
        self.assertEqual(wait.outputs, ["microbench/overlap-wait.json"])
        self.assertEqual(wait.command[wait.command.index("--sweep") + 1], "blocking-wait")
        self.assertEqual(wait.ranks, 4)
        self.assertFalse(any(s.name == "microbench-overlap-wait" for s in cuda))
        with tempfile.TemporaryDirectory() as build:
            # The blocking wait is measured, not charged (README: it over-predicts the runs).
            for backend, files in (("host", ["{out}/microbench/overlap.json"]),
                                   ("cuda", ["{out}/microbench/overlap.json"])):
                cal = [s for s in build_plan(Target(repo, build, backend, 4, "quick"),
                                             groups=("model",)) if s.name == "model-calibrate"][0]
                given = [cal.command[i + 1] for i, w in enumerate(cal.command) if w == "--overlap"]
                self.assertEqual(given, files, backend)


class ModelBase(unittest.TestCase):
    """The machine file a calibration starts from: what no microbenchmark measures (memory,
    bandwidth) is the GPU's own."""

    def test_the_gpu_nvidia_smi_lists_picks_the_preset(self):
        env = os.environ.pop("OVB_MODEL_BASE", None)
        try:
            h200 = ["GPU 0: NVIDIA H200 (UUID: GPU-0)"]
            h100 = ["GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-0)"]
            self.assertEqual(model_base("cuda", h200), "generic-h200-8nic")
            self.assertEqual(model_base("cuda", h100), "generic-h100-8nic")
            self.assertEqual(model_base("cuda", []), "generic-h100-8nic")
            gh200 = ["GPU 0: NVIDIA GH200 480GB (UUID: GPU-0)"]
            self.assertEqual(model_base("cuda", gh200), "generic-h100-8nic")
            self.assertEqual(model_base("host", h200), "host-cpu")
            os.environ["OVB_MODEL_BASE"] = "dgx-h100"
            self.assertEqual(model_base("cuda", h200), "dgx-h100")
        finally:
            os.environ.pop("OVB_MODEL_BASE", None)
            if env is not None:
                os.environ["OVB_MODEL_BASE"] = env

    def test_each_choice_is_a_preset(self):
        machines = os.path.join(os.path.dirname(SLURM), "analysis", "machines")
        for name in ("generic-h200-8nic", "generic-h100-8nic", "host-cpu"):
            with open(os.path.join(machines, name + ".json"), encoding="utf-8") as f:
                self.assertEqual(json.load(f)["name"], name)


class FailureLine(unittest.TestCase):
    def test_the_programs_own_error_line_wins_over_the_launchers_banner(self):
        log = ["==== ovb-suite: microbench-overlap attempt 1 at ...: mpirun -np 4 ovb-overlap",
               "ovb-overlap: error: --cdmc lists 2 values, but CUDA_DEVICE_MAX_CONNECTIONS ...",
               "-" * 74,
               "Primary job  terminated normally, but 1 process returned",
               "a non-zero exit code. Per user-direction, the job has been aborted.",
               "-" * 74,
               "mpirun detected that one or more processes exited with non-zero status, thus",
               "  Exit code:    2",
               "-" * 74]
        self.assertEqual(failure_line(log), log[1])
        self.assertEqual(failure_line(["x", "[rank 2] gpt4d: error: out of memory", "-" * 20]),
                         "[rank 2] gpt4d: error: out of memory")
        self.assertEqual(failure_line(["Traceback (most recent call last):", "  ...",
                                       "ValueError: minvalue must be less than or equal to"
                                       " maxvalue"]),
                         "ValueError: minvalue must be less than or equal to maxvalue")
        # No error line: the last line that is not a banner, colour codes removed.
        self.assertEqual(failure_line(["\x1b[32mbench 1 ok\x1b[m", "killed", "-" * 30]),
                         "killed")
        self.assertEqual(failure_line([]), "")


if __name__ == "__main__":
    unittest.main()
