"""Where the suite runs: the rank launcher (srun inside a Slurm allocation, else mpirun), the backend
(auto: cuda when the build has the GPU probe and it finds a GPU, else host), the rank count, and the
suite's executables in the build folder.

Launcher settings come from the environment (normally set in the site configuration, slurm/site.sh):
  OVB_LAUNCHER      auto | srun | mpirun (auto: srun when SLURM_JOB_ID is set and srun exists)
  OVB_SRUN_MPI      value of srun --mpi (pmix, pmi2, ...); unset: the site's MpiDefault
  OVB_SRUN_ARGS     extra srun words, e.g. "--overcommit" or "--cpu-bind=none"
  OVB_GPU_BIND      srun words for GPU binding, e.g. "--gpus-per-task=1 --gpu-bind=closest"; unset:
                    every rank sees the node's GPUs and picks local rank modulo their count
  OVB_MPIRUN        the mpirun executable (default mpirun); OVB_MPIRUN_ARGS extra words
"""

import glob
import os
import shlex
import shutil
import subprocess
from dataclasses import dataclass, field

from .util import SuiteError


def _words(var):
    return shlex.split(os.environ.get(var, ""))


def _is_open_mpi(mpirun):
    try:
        r = subprocess.run([mpirun, "--version"], capture_output=True, text=True, timeout=30)
        return "Open MPI" in r.stdout + r.stderr or "OpenRTE" in r.stdout + r.stderr
    except (OSError, subprocess.SubprocessError):
        return False


@dataclass
class Launcher:
    kind: str                       # srun | mpirun | none
    exe: str = ""
    extra: list = field(default_factory=list)
    open_mpi: bool = False

    def prefix(self, ranks, backend):
        """The words in front of a command that runs it as `ranks` MPI ranks."""
        if self.kind == "srun":
            words = [self.exe, f"--ntasks={ranks}", "--kill-on-bad-exit=1"]
            if ranks == 1:
                words.append("--nodes=1")
            if os.environ.get("OVB_SRUN_MPI"):
                words.append(f"--mpi={os.environ['OVB_SRUN_MPI']}")
            if backend == "cuda":
                words += _words("OVB_GPU_BIND")
            return words + self.extra
        if self.kind == "mpirun":
            words = [self.exe, "-np", str(ranks)]
            if self.open_mpi:
                # Host ranks may outnumber cores; binding them would serialise them.
                words += ["--oversubscribe", "--bind-to", "none"]
            return words + self.extra
        raise SuiteError(f"{ranks}-rank steps need srun or mpirun, and neither was found")

    def env(self):
        """Variables every ranked step gets (Open MPI refuses root without them; yielding keeps
        oversubscribed host ranks from spinning on each other's cores)."""
        if self.kind == "mpirun" and self.open_mpi:
            return {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
                    "OMPI_MCA_mpi_yield_when_idle": "1"}
        return {}

    def describe(self):
        return " ".join([self.kind] + ([f"({self.exe})"] if self.exe else []))


def choose_launcher(want=None):
    want = want or os.environ.get("OVB_LAUNCHER", "auto")
    if want not in ("auto", "srun", "mpirun"):
        raise SuiteError(f"OVB_LAUNCHER={want}: expected auto, srun or mpirun")
    srun = shutil.which("srun")
    mpirun = shutil.which(os.environ.get("OVB_MPIRUN", "mpirun"))
    if want == "srun" or (want == "auto" and os.environ.get("SLURM_JOB_ID") and srun):
        if not srun:
            raise SuiteError("OVB_LAUNCHER=srun but srun is not on PATH")
        return Launcher("srun", srun, _words("OVB_SRUN_ARGS"))
    if mpirun:
        return Launcher("mpirun", mpirun, _words("OVB_MPIRUN_ARGS"), _is_open_mpi(mpirun))
    if want == "mpirun":
        raise SuiteError("OVB_LAUNCHER=mpirun but mpirun (OVB_MPIRUN) is not on PATH")
    return Launcher("none")


def find_binary(build, name):
    """Path of an executable of the build (parts put theirs in build/PART/), or None."""
    if not build:
        return None
    for pattern in (name, os.path.join("bin", name), os.path.join("*", name),
                    os.path.join("*", "*", name)):
        for p in sorted(glob.glob(os.path.join(build, pattern))):
            if os.path.isfile(p) and os.access(p, os.X_OK):
                return p
    return None


BUILD_CANDIDATES = ("default", "cuda", "host")  # under REPO/build, in this order


def pick_build(repo, needed, strict=True):
    """(folder, note) for the default build: the first existing REPO/build/{default,cuda,host}
    holding every executable in `needed`; `note` names the folders passed over and what they lack.
    (None, "") when none exists. When none holds them all: SuiteError naming what each lacks, or,
    with strict=False (a command that may be on PATH), the first existing one."""
    found = [p for p in (os.path.join(repo, "build", n) for n in BUILD_CANDIDATES)
             if os.path.isdir(p)]
    passed = []
    for b in found:
        lack = [n for n in sorted(needed) if not find_binary(b, n)]
        if not lack:
            return b, "; ".join(passed)
        passed.append(f"{os.path.relpath(b, repo)} lacks {', '.join(lack)}")
    if not found:
        return None, ""
    if not strict:
        return found[0], "; ".join(passed)
    raise SuiteError("no build folder has the executables this run needs: " + "; ".join(passed)
                     + " (build them, or pass --build DIR or set OVB_BUILD_DIR)")


def gpu_list():
    """nvidia-smi -L's lines ("GPU 0: NVIDIA H100 80GB HBM3 (UUID: ...)"); none without it."""
    smi = shutil.which("nvidia-smi")
    if not smi:
        return []
    try:
        r = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return []
    return [line for line in r.stdout.splitlines() if line.startswith("GPU ")]


def gpu_count():
    """GPUs visible to this process: CUDA_VISIBLE_DEVICES when set, else nvidia-smi's list."""
    vis = os.environ.get("CUDA_VISIBLE_DEVICES")
    if vis is not None:
        return len([d for d in vis.split(",") if d.strip() and d.strip() != "-1"])
    return len(gpu_list())


def resolve_backend(want, build):
    """host | cuda for --backend auto|cuda|host; cuda needs the build's GPU probe to succeed."""
    if want == "host":
        return "host"
    probe = find_binary(build, "ovb-gpu-probe") if build else None
    ok = False
    if probe:
        try:
            ok = subprocess.run([probe], capture_output=True, timeout=120).returncode == 0
        except (OSError, subprocess.SubprocessError):
            ok = False
    if want == "cuda" and not probe:
        raise SuiteError(f"--backend cuda needs a CUDA build: ovb-gpu-probe not found in {build} "
                         "(configure with -DOVB_ENABLE_CUDA=ON, or pass --build)")
    if want == "cuda" and not ok:
        raise SuiteError(f"--backend cuda: {probe} finds no usable GPU here")
    return "cuda" if ok else "host"


def default_ranks(backend, ranks_per_gpu):
    """SLURM_NTASKS inside an allocation; else GPUs x ranks per GPU (cuda) or 4 (host)."""
    if os.environ.get("SLURM_NTASKS"):
        return int(os.environ["SLURM_NTASKS"])
    if backend == "cuda":
        return max(1, gpu_count()) * ranks_per_gpu
    return 4
