#!/usr/bin/env bash
# ci/setup.sh: installs what OverlapBench needs to build and test, idempotently.
#   Debian/Ubuntu: the system packages (apt-get, as root or through sudo) and the pinned Python
#   requirements into .venv/ (analysis/requirements.txt; ci/requirements-reference.txt: JAX on
#   the CPU for gpt4d's independent reference; ci/requirements-build.txt: the cuDNN frontend
#   headers for gpt4d's fused attention). Fast when everything is already there.
#   Other systems: prints what is missing and exits non-zero.
#   When another apt-get/dpkg holds the package lock it waits for it (OVB_APT_LOCK_WAIT_S, 600 s).
# Usage: ci/setup.sh [--no-python] [--no-slurm]
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
want_python=1 want_slurm=1
for a in "$@"; do
  case "$a" in
    --no-python) want_python=0 ;;
    --no-slurm) want_slurm=0 ;;
    -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
    *) echo "ci/setup.sh: error: unknown option '$a' (see --help)" >&2; exit 2 ;;
  esac
done

# Debian package -> what it provides (for the message on other systems) and, for systems without
# dpkg, how to tell it is there: cmd:NAME (a command on PATH), hdr:FILE (a header in the
# compiler's usual include folders or CPATH) or py:MODULE (importable by the system's python3).
packages=(
  build-essential:"C/C++ compiler":cmd:c++ cmake:"CMake >= 3.25":cmd:cmake
  ninja-build:"Ninja":cmd:ninja git:"git":cmd:git pkg-config:"pkg-config":cmd:pkg-config
  openmpi-bin:"mpirun":cmd:mpirun libopenmpi-dev:"MPI headers and libraries":cmd:mpicc
  nlohmann-json3-dev:"nlohmann-json":hdr:nlohmann/json.hpp libcli11-dev:"CLI11":hdr:CLI/CLI.hpp
  libopenblas-dev:"OpenBLAS (cblas.h)":hdr:cblas.h libgtest-dev:"GoogleTest":hdr:gtest/gtest.h
  libgmock-dev:"GoogleMock":hdr:gmock/gmock.h libbenchmark-dev:"Google Benchmark":hdr:benchmark/benchmark.h
  python3-venv:"Python venv":cmd:python3 shellcheck:"shellcheck":cmd:shellcheck
  ccache:"ccache (ci/test.sh's compiler cache)":cmd:ccache
  protobuf-compiler:"protoc (Chakra traces)":cmd:protoc
  libprotobuf-dev:"protobuf C++ library":hdr:google/protobuf/message.h
  python3-protobuf:"Python protobuf (Chakra decode test)":py:google.protobuf
)
[ "$want_slurm" = 1 ] &&
  packages+=(slurm-wlm:"Slurm (slurmctld, slurmd)":cmd:slurmctld munge:"munge":cmd:munged)

# present ENTRY: whether the package of a packages[] entry is installed.
present() {
  local name=${1%%:*} probe=${1#*:*:}
  if command -v dpkg-query >/dev/null 2>&1; then
    dpkg-query -W -f='${Status}' "$name" 2>/dev/null | grep -q "install ok installed"
    return
  fi
  case "$probe" in
    cmd:*) command -v "${probe#cmd:}" >/dev/null 2>&1 || [ -x "/usr/sbin/${probe#cmd:}" ] ;;
    hdr:*)
      local d
      for d in ${CPATH:+${CPATH//:/ }} /usr/include /usr/local/include /usr/include/* /usr/local/include/*; do
        [ -f "$d/${probe#hdr:}" ] && return 0
      done
      return 1 ;;
    py:*) python3 -c "import ${probe#py:}" >/dev/null 2>&1 ;;
  esac
}

missing=()
for p in "${packages[@]}"; do
  present "$p" || missing+=("${p%%:*}")
done

if [ ${#missing[@]} -gt 0 ]; then
  if command -v apt-get >/dev/null 2>&1; then
    sudo=""
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    echo "ci/setup.sh: installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    # shellcheck source=ci/lib/apt.sh
    source "$here/ci/lib/apt.sh"
    apt_get update -qq
    apt_get install -y -qq --no-install-recommends "${missing[@]}"
  else
    echo "ci/setup.sh: error: not a Debian/Ubuntu system; install these (Debian names):" >&2
    for p in "${packages[@]}"; do
      name=${p%%:*}
      what=${p#*:}
      for m in "${missing[@]}"; do [ "$m" = "$name" ] && echo "  $name: ${what%%:*}" >&2; done
    done
    exit 1
  fi
else
  echo "ci/setup.sh: system packages present"
fi

if [ "$want_python" = 1 ]; then
  venv="$here/.venv"
  req="$here/analysis/requirements.txt"
  stamp="$venv/.requirements.sha256"
  sum=$(sha256sum "$req" | cut -d' ' -f1)
  if [ ! -x "$venv/bin/python" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$sum" ]; then
    python=${OVB_PYTHON:-python3}
    "$python" -m venv "$venv"
    "$venv/bin/python" -m pip install -q --disable-pip-version-check -r "$req"
    echo "$sum" >"$stamp"
    echo "ci/setup.sh: Python requirements installed in .venv/"
  else
    echo "ci/setup.sh: Python requirements present in .venv/"
  fi
  # The independent reference of gpt4d's model (JAX on the CPU, ctest gpt4d.reference.jax).
  rreq="$here/ci/requirements-reference.txt"
  rstamp="$venv/.requirements-reference.sha256"
  rsum=$(sha256sum "$rreq" | cut -d' ' -f1)
  if [ "$(cat "$rstamp" 2>/dev/null)" != "$rsum" ]; then
    "$venv/bin/python" -m pip install -q --disable-pip-version-check -r "$rreq"
    echo "$rsum" >"$rstamp"
    echo "ci/setup.sh: reference requirements (JAX on the CPU) installed in .venv/"
  else
    echo "ci/setup.sh: reference requirements present in .venv/"
  fi
  # Build-time packages (header-only cuDNN frontend): their files only, so --no-deps.
  breq="$here/ci/requirements-build.txt"
  bstamp="$venv/.requirements-build.sha256"
  bsum=$(sha256sum "$breq" | cut -d' ' -f1)
  if [ "$(cat "$bstamp" 2>/dev/null)" != "$bsum" ]; then
    "$venv/bin/python" -m pip install -q --disable-pip-version-check --no-deps -r "$breq"
    echo "$bsum" >"$bstamp"
    echo "ci/setup.sh: build requirements (cuDNN frontend headers) installed in .venv/"
  else
    echo "ci/setup.sh: build requirements present in .venv/"
  fi
fi
