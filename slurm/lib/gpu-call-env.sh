# slurm/lib/gpu-call-env.sh: the environment of a one-call GPU script (gpu-overlap.sh, gpu-ab.sh),
# read and checked in one place. Sourced; the caller defines die() (one-line error, exit 2) and
# root (the repository). gpu_call_env BUILD_NAME sets:
#   arch   OVB_GPU_ARCH (90): one CUDA architecture
#   build  OVB_GPU_BUILD (build/BUILD_NAME): the build folder
#   limit  OVB_CALL_LIMIT_S (600): seconds the call may take, > 60
#   py     OVB_PYTHON, else the repository's .venv, else python3
gpu_call_env() {
  arch=${OVB_GPU_ARCH:-90}
  build=${OVB_GPU_BUILD:-$root/build/$1}
  limit=${OVB_CALL_LIMIT_S:-600}
  [[ $arch =~ ^[0-9]+[a-z]?$ ]] || die "OVB_GPU_ARCH=$arch: expected one architecture, e.g. 90"
  if ! [[ $limit =~ ^[0-9]+$ ]] || [ "$limit" -le 60 ]; then
    die "OVB_CALL_LIMIT_S=$limit: expected seconds > 60"
  fi
  py=${OVB_PYTHON:-python3}
  if [ -x "$root/.venv/bin/python" ] && [ -z "${OVB_PYTHON:-}" ]; then py=$root/.venv/bin/python; fi
}
