"""Runs one step's command under the watchdog and the driver's signal handling.

The command runs in its own session (process group) with its output appended to the step's log.
It ends in one of four ways:
  - it exits by itself (status 0 or not);
  - the watchdog fires: wall-clock limit (`timeout_s`) or no new log output for `stall_s` seconds
    (a collective that never completes prints nothing); the step fails;
  - the driver receives SIGTERM/SIGINT/SIGUSR1/SIGHUP (scancel, Slurm's time-limit warning): the
    step is interrupted.
A stop does not always reach the driver before the step ends: scancel signals the job's ranks and
srun directly too, and an srun started while the job is being cancelled fails at once ("Unable to
create step"). So a step that fails while no stop signal has arrived is held for up to `settle_s`
seconds (in a Slurm job only: suite.settle_window_s): a stop signal in that window means the step
was cut off (interrupted, redone on the next run), not failed.
In the last two cases the whole group gets SIGTERM, so that the step - or srun/mpirun, which forward
it to every rank - can flush traces and partial results and abort its communicators; whatever still
runs `grace_s` seconds later gets SIGKILL. Processes left in the group after the command exits are
killed too, so that no stray rank keeps the allocation busy. On Linux the driver is a child
subreaper: descendants that left the group (setsid) and were orphaned come back to it and are
killed and reaped after the step, instead of running on under init.
"""

import ctypes
import os
import signal
import subprocess
import time
from dataclasses import dataclass

from .util import now, progress

CATCH = (signal.SIGTERM, signal.SIGINT, signal.SIGUSR1, signal.SIGHUP)


class SignalWatch:
    """Remembers the first stop signal the driver receives (handlers only record it; the run loop
    forwards it within one poll interval). A second signal makes the loop kill at once."""

    def __init__(self):
        self.received = None
        self.count = 0

    def install(self):
        become_subreaper()
        for s in CATCH:
            signal.signal(s, self._handler)

    def _handler(self, signum, _frame):
        self.count += 1
        if self.received is None:
            self.received = signum

    def name(self):
        return signal.Signals(self.received).name if self.received else None


@dataclass
class Outcome:
    exit_code: int = None      # the command's status (negative: killed by that signal)
    watchdog: str = ""         # why the watchdog stopped it, or ""
    timed_out: bool = False    # the watchdog stopped it at its time limit (not for a stall)
    signal: str = ""           # the stop signal the driver received while it ran, or ""
    stopped: bool = False      # the driver sent that stop to the step (it was cut off)
    late_s: float = None       # the signal came this many seconds after the step had ended
    duration_s: float = 0.0


PR_SET_CHILD_SUBREAPER = 36


def become_subreaper():
    """Orphaned descendants are re-parented to this process instead of init (Linux >= 3.4)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _children():
    me, out = os.getpid(), []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat", encoding="utf-8", errors="replace") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if int(fields[1]) == me:
                out.append(int(d))
    return out


def reap_orphans():
    """Kills and reaps what is left of a finished step among this process's children."""
    if not os.path.isdir("/proc"):
        return
    for pid in _children():
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _kill_group(pgid, sig):
    try:
        os.killpg(pgid, sig)
        return True
    except (ProcessLookupError, PermissionError):
        return False


@dataclass
class Limits:
    timeout_s: float
    stall_s: float = 0.0
    grace_s: float = 60.0
    heartbeat_s: float = 300.0
    poll_s: float = 0.2
    settle_s: float = 0.0      # how long a failed step waits for a stop signal that is on its way


def run_command(argv, env, cwd, log_path, limits, signals, label):
    """Runs argv; returns an Outcome. Never raises for the command's own failures."""
    start = now()
    out = Outcome()
    with open(log_path, "ab", buffering=0) as log:
        try:
            proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log,
                                    stderr=subprocess.STDOUT, cwd=cwd, env=env,
                                    start_new_session=True)
        except OSError as e:
            log.write(f"ovb-suite: cannot start {argv[0]}: {e}\n".encode())
            out.exit_code, out.duration_s = 127, now() - start
            return out
        pgid = proc.pid
        last_size, last_change, next_beat = -1, start, start + limits.heartbeat_s
        kill_at = None
        while True:
            try:
                out.exit_code = proc.wait(timeout=limits.poll_s)
                break
            except subprocess.TimeoutExpired:
                pass
            t = now()
            if kill_at is None:
                size = os.fstat(log.fileno()).st_size
                if size != last_size:
                    last_size, last_change = size, t
                if signals.received:
                    out.signal, out.stopped = signals.name(), True
                    progress(f"{label}: {out.signal} received: sending SIGTERM to the step, "
                             f"SIGKILL in {limits.grace_s:.0f} s")
                elif t - start > limits.timeout_s:
                    out.watchdog = f"no completion within {limits.timeout_s:.0f} s (timeout)"
                    out.timed_out = True
                elif limits.stall_s and t - last_change > limits.stall_s:
                    out.watchdog = f"no output for {limits.stall_s:.0f} s (stalled)"
                if out.signal or out.watchdog:
                    if out.watchdog:
                        progress(f"{label}: watchdog: {out.watchdog}: sending SIGTERM, SIGKILL in "
                                 f"{limits.grace_s:.0f} s")
                        log.write(f"\novb-suite: watchdog: {out.watchdog}\n".encode())
                    _kill_group(pgid, signal.SIGTERM)
                    kill_at = t + limits.grace_s
                elif t >= next_beat:
                    progress(f"{label}: still running after {t - start:.0f} s "
                             f"(log {last_size} bytes, last output {t - last_change:.0f} s ago)")
                    next_beat = t + limits.heartbeat_s
            elif t >= kill_at or signals.count > 1:
                progress(f"{label}: still running: SIGKILL")
                _kill_group(pgid, signal.SIGKILL)
                kill_at = float("inf")
        _kill_group(pgid, signal.SIGKILL)  # stragglers that outlived the command
        reap_orphans()
        out.duration_s = now() - start
        if signals.received and not out.signal:
            out.signal = signals.name()  # arrived in the last poll interval
        elif not out.signal and not out.watchdog and out.exit_code != 0:
            _await_stop(out, signals, limits.settle_s, label)
    return out


def _await_stop(out, signals, settle_s, label):
    """A failed step: waits up to settle_s for a stop signal already on its way (see the module
    comment); records it in `out` if one comes."""
    ended = now()
    while not signals.received and now() - ended < settle_s:
        time.sleep(0.05)
    if signals.received:
        out.signal, out.late_s = signals.name(), round(now() - ended, 3)
        progress(f"{label}: {out.signal} received {out.late_s:.1f} s after the step ended "
                 f"(exit status {out.exit_code}): it was cut off, not failed")
