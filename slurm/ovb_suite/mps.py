"""CUDA MPS for campaigns whose ranks share one GPU: started before the steps, stopped after, so
that the ranks' kernels run concurrently instead of time-slicing. Its pipe and log folders are
private to this driver (the steps inherit them through the environment). A failure to start is a
note in the run's record, not an error: the ranks then time-slice the GPU."""

import os
import shutil
import subprocess

CONTROL = "nvidia-cuda-mps-control"


class Mps:
    def __init__(self):
        self.on = False
        self.note = ""

    def start(self):
        exe = shutil.which(CONTROL)
        if not exe:
            self.note = f"off: {CONTROL} not found (the ranks time-slice the GPU)"
            return self.note
        tag = os.getpid()
        for var, kind in (("CUDA_MPS_PIPE_DIRECTORY", "pipe"), ("CUDA_MPS_LOG_DIRECTORY", "log")):
            os.environ[var] = f"/tmp/ovb-mps-{kind}-{tag}"
            os.makedirs(os.environ[var], exist_ok=True)
        try:
            r = subprocess.run([exe, "-d"], capture_output=True, text=True, timeout=60)
            self.on = r.returncode == 0
            why = (r.stderr or r.stdout).strip()
        except (OSError, subprocess.SubprocessError) as e:
            why = str(e)
        self.note = "on" if self.on else f"off: {CONTROL} -d failed: {why} (ranks time-slice)"
        return self.note

    def stop(self):
        if not self.on:
            return
        try:
            subprocess.run([shutil.which(CONTROL) or CONTROL], input="quit\n", text=True,
                           capture_output=True, timeout=60)
        except (OSError, subprocess.SubprocessError):
            pass  # the daemon ends with the job's processes anyway
        self.on = False
