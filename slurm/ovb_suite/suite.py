"""Runs a list of steps into a results folder: skips what is finished, redoes what is not, records
every outcome, keeps going after a failure, stops at a signal.

A finished step is skipped unless one of its outputs is gone, a step it reads (needs/after)
finished after it started (its results are stale), or --redo names it. A failed step is redone
(unless --keep-failed), an interrupted one always. A step whose hard dependency (needs) is not
finished fails at once with that reason.

Campaign presets add three things (slurm/README.md "Campaign presets"):
  - a time budget for the call (--budget): each step's limit is cut to what is left (a step
    stopped at such a cut limit, before its own, is interrupted, not failed: redone at the next
    call), and a step that would start with less than MIN_LEFT_S left is not started but left for
    the next call (listed as pending with that reason; the call exits 1);
  - "does not fit": a failed step whose log matches its `unfit` pattern (gpt4d's memory check)
    ends "unfit", a result, not a failure; a step with `if_unfit`/`unless_unfit` runs only when
    (unless) those steps ended so, else it is recorded "skipped";
  - `always` steps (the campaign's summary) run at every call and are exempt from the budget.

A step is interrupted, not failed, when a stop signal (scancel, the time-limit warning) reached the
driver before it ended, or while it failed (runner.py: the settle window); one the driver told to
stop is interrupted even when it exits 0, since what it wrote may be partial.

Multi-rank steps get OVB_COMM_TIMEOUT_S, the in-process collective watchdog of the suite's binaries
(core/include/ovb/watchdog.hpp): from the step's env, else --comm-timeout, else the driver's
environment (site.sh), else COMM_FRACTION of the step's stall limit (of its time limit without one),
so that a hung collective ends with the binary's own one-line error before the driver's stall
watchdog has to kill it.
"""

import fcntl
import json
import os
import re
import shlex
import shutil
import socket
import time

from .runner import Limits, run_command
from .state import DONE, FAILED, FINISHED, INTERRUPTED, RUNNING, SKIPPED, UNFIT, ResultsFolder
from .step import expand_command
from .util import (COMM_VAR, SuiteError, failure_line, iso, now, parse_comm_timeout, progress,
                   tail_lines)


# The derived in-process collective timeout, as a fraction of the step's stall (or time) limit: the
# rest covers the work between the step's last output and the wait that hangs, and the abort.
COMM_FRACTION = 0.8
# Longest wait of a failed step for a stop signal on its way (runner.py); never above --grace.
SETTLE_MAX_S = 10.0


def settle_window_s(grace_s, env=None):
    """How long a failed step waits for a stop signal on its way (runner.py): only in a Slurm job,
    where scancel signals the ranks and srun as well as the driver. Elsewhere nothing but the
    driver signals a step (it runs in its own session), so a failure is a failure at once."""
    env = os.environ if env is None else env
    return min(grace_s, SETTLE_MAX_S) if env.get("SLURM_JOB_ID") else 0.0


# With a time budget, a step is started only with at least this many seconds left.
MIN_LEFT_S = 20.0
# Log lines searched for a step's "does not fit" pattern.
UNFIT_TAIL_LINES = 200


def _remove(path):
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path)
    elif os.path.lexists(path):
        os.unlink(path)


def _check_output(path):
    """'' when an output is usable: it exists, and a .json file parses."""
    if not os.path.lexists(path):
        return "was not written"
    if path.endswith(".json") and os.path.isfile(path):
        try:
            with open(path, encoding="utf-8") as f:
                json.load(f)
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
            return f"is not valid JSON ({e})"
    return ""


class Suite:
    def __init__(self, folder, steps, *, launcher, backend, signals, grace_s=60.0,
                 heartbeat_s=300.0, timeout_scale=1.0, extra_env=None, redo=(),
                 keep_failed=False, suite_doc=None, shared=False, comm_timeout_s=None,
                 budget_s=None, budget_start=None):
        self.f = folder if isinstance(folder, ResultsFolder) else ResultsFolder(folder)
        self.steps, self.launcher, self.backend, self.signals = steps, launcher, backend, signals
        self.grace_s, self.heartbeat_s, self.timeout_scale = grace_s, heartbeat_s, timeout_scale
        self.extra_env = dict(extra_env or {})
        self.redo, self.keep_failed, self.suite_doc = set(redo), keep_failed, suite_doc or {}
        self.counts = {"ran": 0, "skipped": 0}
        self.shared, self._locks = shared, []
        self.comm_timeout_s = comm_timeout_s  # --comm-timeout; None: not given
        # --budget (None: no budget), counted from --budget-start (default: now)
        self.budget_s, self.t_start = budget_s, budget_start or now()
        self.deferred = {}  # step -> why it was left for the next call

    # ---- decisions ----

    def _why_rerun(self, step, rec):
        """'' to skip a finished step, else the reason to run it again."""
        if step.name in self.redo or step.group in self.redo:
            return "--redo"
        for o in step.outputs:
            if not os.path.lexists(os.path.join(self.f.root, o)):
                return f"its output {o} is missing"
        for d in step.inputs():
            drec = self.f.read_state(d)
            if drec and drec.get("status") == FINISHED and \
                    drec.get("ended_epoch", 0) > rec.get("started_epoch", 0):
                return f"{d} finished after it (stale)"
        return ""

    def _skip_reason(self, step):
        """Why a conditional step is not needed ("" to run it): see the module comment."""
        def unfit(name):
            rec = self.f.read_state(name)
            return bool(rec) and rec.get("status") == UNFIT
        if step.if_unfit and not unfit(step.if_unfit):
            return f"not needed: {step.if_unfit} did not end unfit"
        hit = [d for d in step.unless_unfit if unfit(d)]
        return f"not needed: {hit[0]} did not fit" if hit else ""

    def _budget_left(self):
        return None if self.budget_s is None else self.t_start + self.budget_s - now()

    def _record_skip(self, step, rec, reason, label):
        t = now()
        out = dict(self._base_record(step, (rec or {}).get("attempt", 0)), status=SKIPPED,
                   error=reason, started_at=iso(t), started_epoch=t, ended_at=iso(t),
                   ended_epoch=t, duration_s=0.0, exit_code=None)
        self.f.write_state(step.name, out)
        progress(f"{label}: skipped: {reason}")

    def _unmet_need(self, step):
        for d in step.needs:
            drec = self.f.read_state(d)
            if not drec or drec.get("status") != FINISHED:
                status = drec.get("status") if drec else "not run"
                return f"needs {d}, which is {status}"
        return ""

    # ---- running one step ----

    def _comm_timeout(self, step, limits):
        """(seconds or None, where it came from) of OVB_COMM_TIMEOUT_S for the step: see the
        module comment. None: the variable is not set for this step."""
        site = os.environ.get(COMM_VAR, "")  # checked at start-up (cli.py)
        if COMM_VAR in step.env:  # checked when the steps file was read (step.py)
            return parse_comm_timeout(step.env[COMM_VAR], COMM_VAR), "step env"
        if step.ranks <= 1:  # no peers to wait for; a value exported by the site still applies
            return (parse_comm_timeout(site, COMM_VAR), "environment") if site else (None, "")
        if self.comm_timeout_s is not None:
            return self.comm_timeout_s, "--comm-timeout"
        if site:
            return parse_comm_timeout(site, COMM_VAR), "environment"
        if limits.stall_s:
            return round(COMM_FRACTION * limits.stall_s, 3), "stall limit"
        return round(COMM_FRACTION * limits.timeout_s, 3), "time limit"

    def _env(self, step, tmp, comm_timeout_s=None):
        env = dict(os.environ)
        if step.ranks:
            env.update(self.launcher.env())
            if self.backend == "host":
                # One BLAS thread per rank: ranks already fill the cores, and the 1-rank GEMM
                # calibration then measures one core, the rate ovb-model divides among the ranks
                # sharing it. Open MPI ranks waiting in a collective yield the core instead of
                # spinning (srun launches too).
                env.setdefault("OPENBLAS_NUM_THREADS", "1")
                env.setdefault("OMP_NUM_THREADS", "1")
                env.setdefault("OMPI_MCA_mpi_yield_when_idle", "1")
        env.update(self.extra_env)
        env.update(step.env)
        if comm_timeout_s is not None:
            env[COMM_VAR] = f"{comm_timeout_s:g}"
        env.update(OVB_SUITE_STEP=step.name, OVB_SUITE_TMP=tmp, OVB_SUITE_OUT=self.f.root)
        return env

    def _base_record(self, step, attempt):
        return {"step": step.name, "group": step.group, "attempt": attempt,
                "log": self.f.log_rel(step.name), "host": socket.gethostname(),
                "job_id": os.environ.get("SLURM_JOB_ID"),
                "restart_count": os.environ.get("SLURM_RESTART_COUNT")}

    def _fail_now(self, step, rec, error, label):
        attempt = (rec or {}).get("attempt", 0) + 1
        t = now()
        out = dict(self._base_record(step, attempt), status=FAILED, error=error, started_at=iso(t),
                   started_epoch=t, ended_at=iso(t), ended_epoch=t, duration_s=0.0, exit_code=None)
        os.makedirs(os.path.dirname(self.f.log_path(step.name)), exist_ok=True)
        with open(self.f.log_path(step.name), "a", encoding="utf-8") as log:
            log.write(f"==== ovb-suite: {step.name} attempt {attempt} at {iso(t)}: not run: "
                      f"{error}\n")
        self.f.write_state(step.name, out)
        progress(f"{label}: FAILED: {error}")

    def _move_outputs(self, step, tmp):
        problems = [f"{o} {p}" for o in step.outputs
                    if (p := _check_output(os.path.join(tmp, o)))]
        if problems:
            return "exit status 0 but output " + "; ".join(problems)
        for o in step.outputs:
            src, dst = os.path.join(tmp, o), os.path.join(self.f.root, o)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            if os.path.isdir(src) and os.path.lexists(dst):
                # A folder cannot replace a folder in one rename: move the old one aside first.
                old = dst + ".old-" + str(os.getpid())
                os.replace(dst, old)
                os.replace(src, dst)
                _remove(old)
            else:
                if os.path.isdir(dst):
                    _remove(dst)
                os.replace(src, dst)
        return ""

    def _keep_partial(self, step, tmp, attempt):
        if os.path.isdir(tmp) and os.listdir(tmp):
            dst = self.f.partial_dir(step.name, attempt)
            _remove(dst)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            os.replace(tmp, dst)
            return os.path.relpath(dst, self.f.root)
        return None

    def _run_step(self, step, rec, label):
        attempt = (rec or {}).get("attempt", 0) + 1
        tmp = self.f.tmp_dir(step.name)
        _remove(tmp)
        for o in step.outputs:
            os.makedirs(os.path.dirname(os.path.join(tmp, o)) or tmp, exist_ok=True)
        os.makedirs(tmp, exist_ok=True)
        try:
            argv = expand_command(step.command, tmp, self.f.root)
        except SuiteError as e:  # an {args:...} file an earlier step did not write
            self._fail_now(step, rec, f"cannot build its command: {e}", label)
            return FAILED
        if step.ranks:
            argv = self.launcher.prefix(step.ranks, self.backend) + argv
        log_path = self.f.log_path(step.name)
        os.makedirs(os.path.dirname(log_path), exist_ok=True)
        t0 = now()
        with open(log_path, "a", encoding="utf-8") as log:
            log.write(f"==== ovb-suite: {step.name} attempt {attempt} at {iso(t0)} on "
                      f"{socket.gethostname()}: {shlex.join(argv)}\n")
        left = self._budget_left()
        own_s = timeout_s = step.timeout_s * self.timeout_scale
        if left is not None and not step.always:
            timeout_s = max(1.0, min(timeout_s, left))
        cut = timeout_s < own_s  # the budget, not the step's own limit, set its watchdog
        limits = Limits(timeout_s=timeout_s,
                        stall_s=step.stall_s * self.timeout_scale, grace_s=self.grace_s,
                        heartbeat_s=self.heartbeat_s, settle_s=settle_window_s(self.grace_s))
        comm, comm_from = self._comm_timeout(step, limits)
        base = dict(self._base_record(step, attempt), command=argv, started_at=iso(t0),
                    started_epoch=t0, comm_timeout_s=comm, comm_timeout_from=comm_from or None)
        self.f.write_state(step.name, dict(base, status=RUNNING))
        self.f.write_status(self.steps, self.suite_doc)
        where = f"{step.ranks} rank(s) via {self.launcher.kind}" if step.ranks else "1 process"
        progress(f"{label}: started ({where}, watchdog {limits.timeout_s:.0f} s"
                 f"{f', stall {limits.stall_s:.0f} s' if limits.stall_s else ''}"
                 f"{f', collectives {comm:g} s' if comm else ''}; "
                 f"log {self.f.log_rel(step.name)})")
        oc = run_command(argv, self._env(step, tmp, comm), tmp, log_path, limits, self.signals,
                         label)
        t1 = now()
        rec = dict(base, ended_at=iso(t1), ended_epoch=t1, duration_s=round(oc.duration_s, 3),
                   exit_code=oc.exit_code, signal=oc.signal or None, watchdog=oc.watchdog or None,
                   signal_after_end_s=oc.late_s)
        error = ""
        if oc.signal and (oc.stopped or oc.exit_code != 0):
            # Cut off by a stop (scancel, time limit): redone on the next run, never failed.
            status, error = INTERRUPTED, f"interrupted by {oc.signal}"
        elif oc.exit_code == 0 and not oc.watchdog:
            error = self._move_outputs(step, tmp)
            status = FINISHED if not error else FAILED
        elif oc.timed_out and cut:
            # Stopped by the call's budget before its own limit: not a result, redone next call.
            status, error = INTERRUPTED, f"cut by the call's budget after {timeout_s:.0f} s " \
                f"(its own limit {own_s:.0f} s): redone at the next call"
        elif oc.watchdog:
            status, error = FAILED, f"watchdog: {oc.watchdog}; killed"
        else:
            status = FAILED
            error = (f"killed by signal {-oc.exit_code}" if oc.exit_code < 0
                     else f"exit status {oc.exit_code}")
        if status == FAILED and step.unfit and not oc.watchdog and \
                re.search(step.unfit, "\n".join(tail_lines(log_path, UNFIT_TAIL_LINES))):
            status, error = UNFIT, "does not fit (memory): " + error
        if status != FINISHED:
            tail = tail_lines(log_path, 60)
            last = failure_line(tail)
            if last and status == FAILED and not oc.watchdog:
                error += f": {last.strip()[:300]}"
            rec.update(log_tail=tail[-20:], partial=self._keep_partial(step, tmp, attempt))
        else:
            _remove(tmp)
        rec.update(status=status, error=error or None)
        self.f.write_state(step.name, rec)
        with open(log_path, "a", encoding="utf-8") as log:
            log.write(f"==== ovb-suite: {step.name} attempt {attempt}: {status}"
                      f"{': ' + error if error else ''} ({oc.duration_s:.1f} s)\n")
        msg = f"{status} in {oc.duration_s:.1f} s"
        progress(f"{label}: {msg if status in (FINISHED, UNFIT) else status.upper() + ': ' + error}")
        self.counts["ran"] += 1
        return status

    # ---- the whole list ----

    def _flock(self, name, mode):
        f = open(os.path.join(self.f.meta, name), "a+", encoding="utf-8")  # noqa: SIM115
        # A requeued job can start while the previous run's driver is still exiting (Slurm sends
        # it SIGTERM and waits KillWait): give that one time to let go before refusing.
        wait_s = 60 if int(os.environ.get("SLURM_RESTART_COUNT") or 0) > 0 else 0
        deadline = time.monotonic() + wait_s
        while True:
            try:
                fcntl.flock(f, mode | fcntl.LOCK_NB)
                break
            except OSError:
                if time.monotonic() < deadline:
                    time.sleep(1)
                    continue
                f.seek(0)
                holder = f.read().strip() or "another ovb-suite"
                f.close()
                raise SuiteError(f"{self.f.root} is in use by {holder}: one driver per results "
                                 "folder (ovb-suite exec runs may share one, on different steps)") \
                    from None
        if mode == fcntl.LOCK_EX:
            f.truncate(0)
            f.write(f"ovb-suite pid {os.getpid()} on {socket.gethostname()}\n")
            f.flush()
        self._locks.append(f)

    def release_locks(self):
        """Lets the next driver in (e.g. the requeued job) take the folder."""
        for f in self._locks:
            f.close()
        self._locks = []

    def _take_locks(self):
        """`run` holds the folder alone; `exec` runs (shared=True) share it, each holding its
        step - e.g. the tasks of a job array writing into one folder."""
        os.makedirs(self.f.meta, exist_ok=True)
        self._flock("lock", fcntl.LOCK_SH if self.shared else fcntl.LOCK_EX)
        if self.shared:
            for s in self.steps:
                self._flock(f"lock.{s.name}", fcntl.LOCK_EX)

    def run(self):
        """Runs the steps; returns 0 (all finished), 1 (some not) or 128+signal (stopped)."""
        self._take_locks()
        n = len(self.steps)
        progress(f"results folder {self.f.root}: {n} steps, backend {self.backend}, launcher "
                 f"{self.launcher.describe()}")
        stopped = None
        for i, step in enumerate(self.steps, 1):
            if self.signals.received:
                stopped = self.signals.name()
                break
            label = f"({i}/{n}) {step.name}"
            rec = self.f.read_state(step.name)
            status = rec.get("status") if rec else None
            if status in (FINISHED, UNFIT) and not step.always:
                why = self._why_rerun(step, rec) if status == FINISHED else \
                    ("--redo" if step.name in self.redo or step.group in self.redo else "")
                if not why:
                    progress(f"{label}: skipped, finished in attempt {rec.get('attempt')} "
                             f"({rec.get('duration_s', 0):.1f} s)")
                    self.counts["skipped"] += 1
                    continue
                progress(f"{label}: runs again: {why}")
            elif status == FAILED and self.keep_failed and step.name not in self.redo:
                progress(f"{label}: skipped, failed before (--keep-failed): {rec.get('error')}")
                continue
            elif status in (RUNNING, INTERRUPTED):
                how = "was interrupted" if status == INTERRUPTED else "never ended (driver killed)"
                progress(f"{label}: attempt {rec.get('attempt')} {how}: running it again")
            skip = self._skip_reason(step)
            if skip:
                self._record_skip(step, rec, skip, label)
                continue
            left = self._budget_left()
            if left is not None and left < MIN_LEFT_S and not step.always:
                self.deferred[step.name] = f"left for the next call: {max(0, left):.0f} s of " \
                    f"the {self.budget_s:g} s budget left"
                progress(f"{label}: {self.deferred[step.name]}")
                continue
            if step.missing:
                self._fail_now(step, rec, step.missing, label)
                continue
            if step.ranks and self.launcher.kind == "none":
                self._fail_now(step, rec, f"{step.ranks}-rank step: neither srun nor mpirun found",
                               label)
                continue
            unmet = self._unmet_need(step)
            if unmet:
                self._fail_now(step, rec, unmet, label)
                continue
            if self._run_step(step, rec, label) == INTERRUPTED and self.signals.received:
                stopped = self.signals.name()
                break
        doc = self.f.write_status(self.steps, self.suite_doc, self.deferred)
        c = doc["counts"]
        summary = ", ".join(f"{v} {k}" for k, v in sorted(c.items()))
        failed = [r["step"] for r in doc["steps"] if r["status"] == FAILED]  # the folder's
        progress(f"{summary} ({self.counts['ran']} run now, {self.counts['skipped']} skipped as "
                 f"finished); status: {os.path.join(self.f.root, 'suite-status.md')}")
        if failed:
            progress("failed: " + ", ".join(failed))
        if stopped:
            progress(f"stopped by {stopped}: unfinished steps run when the job is resubmitted or "
                     "requeued with the same results folder")
            return 128 + int(self.signals.received)
        mine = {s.name for s in self.steps}
        done = sum(1 for r in doc["steps"] if r["step"] in mine and r["status"] in DONE)
        return 0 if done == n else 1
