#!/usr/bin/env bash
# slurm/tests/slurm-fixture.sh: ctest fixture around ci/slurm-local.sh. `start` brings the local
# Slurm up unless it already runs (then it is left alone afterwards); `stop` stops it only if
# `start` started it. Exit 77 (Skipped) without Slurm or root.
# Usage: slurm/tests/slurm-fixture.sh start|stop BUILD_DIR
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
marker=${2:?usage: slurm-fixture.sh start|stop BUILD_DIR}/slurm-local.started
if ! command -v slurmctld >/dev/null 2>&1 && ! command -v /usr/sbin/slurmctld >/dev/null 2>&1; then
  echo "skipped: Slurm is not installed (ci/setup.sh installs it)"; exit 77
fi
[ "$(id -u)" -eq 0 ] || { echo "skipped: the local Slurm daemons need root"; exit 77; }
case "$1" in
  start)
    if "$root/ci/slurm-local.sh" status; then
      echo "using the running local Slurm (not stopped afterwards)"
    else
      "$root/ci/slurm-local.sh" start
      touch "$marker"
    fi ;;
  stop)
    if [ -f "$marker" ]; then "$root/ci/slurm-local.sh" stop; rm -f "$marker"; fi ;;
  *) echo "usage: slurm-fixture.sh start|stop BUILD_DIR" >&2; exit 2 ;;
esac
