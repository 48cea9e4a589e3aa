#!/usr/bin/env bash
# The whole CI run from a fresh clone of this checkout, timed: stops the local Slurm (the run starts
# its own), clones to /tmp/ovb-ci-clone, runs .ci/run and appends "rc=... wall=..." to the log.
# cold: an empty compiler cache (CCACHE_DIR=/tmp/ovb-ci-ccache-cold), as on a fresh machine; warm:
# the machine's cache of earlier runs.
# Usage: results/host/ci-time/run-ci.sh cold|warm LOG
set -u
mode=${1:?cold or warm} log=${2:?log file}
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
cd "$repo" || exit 1
eval "$(ci/slurm-local.sh env)"
ci/slurm-local.sh stop >/dev/null 2>&1
clone=/tmp/ovb-ci-clone
rm -rf "$clone" && git clone -q "$repo" "$clone" && cd "$clone" || exit 1
if [ "$mode" = cold ]; then
  export CCACHE_DIR=/tmp/ovb-ci-ccache-cold
  rm -rf "$CCACHE_DIR" && mkdir -p "$CCACHE_DIR"
fi
start=$(date +%s)
bash .ci/run > "$log" 2>&1
rc=$?
echo "rc=$rc wall=$(( $(date +%s) - start ))" >> "$log"
exit "$rc"
