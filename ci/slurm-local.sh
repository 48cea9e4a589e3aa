#!/usr/bin/env bash
# ci/slurm-local.sh: a private single-node Slurm on localhost for tests (slurmctld + slurmd + munged,
# proctrack/linuxproc, task/none, no cgroups, no accounting). Everything - slurm.conf, the munge key
# and socket, state, logs - lives in one folder, so the system's /etc/slurm and munge stay untouched.
# Runs as root (the daemons need it); the Slurm clients find the cluster through SLURM_CONF.
# Usage:
#   ci/slurm-local.sh start     write the configuration, start the daemons, wait until the node is idle
#   ci/slurm-local.sh stop      stop the daemons cleanly (scontrol shutdown, then munged)
#   ci/slurm-local.sh status    exit 0 when the cluster answers and its node is usable
#   ci/slurm-local.sh env       print `export SLURM_CONF=...` (eval "$(ci/slurm-local.sh env)")
# Environment: OVB_SLURM_DIR (default /tmp/ovb-slurm), OVB_SLURM_PORT (slurmctld port, default 6817;
# slurmd uses the next one), OVB_SLURM_CPUS (CPUs the node declares; default nproc, at least 8),
# OVB_SLURM_TIMEOUT (seconds, default 60).
set -euo pipefail
dir=${OVB_SLURM_DIR:-/tmp/ovb-slurm}
port=${OVB_SLURM_PORT:-6817}
# At least 8 CPUs are declared (config_overrides: slurmd does not check them against the hardware),
# so that the job scripts' default of 4 tasks per node, and 8-rank tests, fit on a 2-core CI
# machine; the ranks then share cores, as under mpirun --oversubscribe.
cpus=${OVB_SLURM_CPUS:-$(( $(nproc) > 8 ? $(nproc) : 8 ))}
timeout=${OVB_SLURM_TIMEOUT:-60}
conf=$dir/etc/slurm.conf
node=$(hostname -s)
export SLURM_CONF=$conf

say() { echo "slurm-local: $*"; }
die() { echo "slurm-local: error: $*" >&2; exit 1; }

need_tools() {
  local t missing=()
  for t in slurmctld slurmd munged sinfo scontrol; do
    command -v "$t" >/dev/null 2>&1 || PATH="$PATH:/usr/sbin:/sbin" command -v "$t" >/dev/null 2>&1 ||
      missing+=("$t")
  done
  [ ${#missing[@]} -eq 0 ] || die "${missing[*]} not found: install slurm-wlm and munge (ci/setup.sh)"
  [ "$(id -u)" -eq 0 ] || die "the daemons must run as root (run this script as root or with sudo)"
}

pid_alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

write_config() {
  mkdir -p "$dir"/{etc,munge,log,run,state/ctld,state/d,tmp}
  chmod 700 "$dir/munge"
  if [ ! -s "$dir/munge/munge.key" ]; then
    # 1024 random bytes, as mungekey makes; only this private munged reads it.
    dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none
    chmod 400 "$dir/munge/munge.key"
  fi
  cat >"$conf.tmp" <<EOF
# Written by ci/slurm-local.sh: single-node test cluster on $node.
ClusterName=ovblocal
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$dir/state/ctld
SlurmdSpoolDir=$dir/state/d
# Steps' scratch (PMIx's spmix_appdir_UID_JOB.STEP) in this folder, not /tmp: a cancelled step leaves
# its folder behind, and a later cluster that numbers its jobs from 1 again would fail to launch
# that step ("task launch failed: Unspecified error", slurmd: "Cannot create client cli tmpdir").
TmpFS=$dir/tmp
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmdPidFile=$dir/run/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
# No cgroups: processes are tracked through their parent ids, tasks are not bound.
SlurmdParameters=config_overrides
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
# Short waits so that tests of cancellation and time limits finish quickly.
KillWait=10
SlurmdTimeout=60
InactiveLimit=0
MinJobAge=600
JobRequeue=1
NodeName=$node NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=debug Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF
  mv "$conf.tmp" "$conf"
}

cluster_ready() {  # the controller answers and the node is idle, mixed or allocated
  local state
  # sinfo retries for ~20 s when no controller listens: ask only when ours is alive.
  pid_alive "$dir/run/slurmctld.pid" || return 1
  state=$(timeout 10 sinfo -h -n "$node" -o %T 2>/dev/null | head -n 1) || return 1
  case "$state" in idle*|mix*|alloc*|completing*) return 0 ;; *) return 1 ;; esac
}

start() {
  need_tools
  if cluster_ready; then say "already running ($conf)"; return 0; fi
  write_config
  # No step of this cluster runs while its slurmd is down: scratch left by cancelled steps goes.
  pid_alive "$dir/run/slurmd.pid" || find "$dir/tmp" -mindepth 1 -maxdepth 1 -name 'spmix_appdir_*' \
    -exec rm -rf {} +
  if ! pid_alive "$dir/run/munged.pid"; then
    munged --force --key-file="$dir/munge/munge.key" --socket="$dir/munge/munge.socket" \
      --pid-file="$dir/run/munged.pid" --log-file="$dir/log/munged.log" \
      --seed-file="$dir/munge/munged.seed" ||
      die "munged did not start (see $dir/log/munged.log)"
  fi
  pid_alive "$dir/run/slurmctld.pid" || slurmctld -f "$conf" ||
    die "slurmctld did not start (see $dir/log/slurmctld.log)"
  pid_alive "$dir/run/slurmd.pid" || slurmd -f "$conf" ||
    die "slurmd did not start (see $dir/log/slurmd.log)"
  local waited=0
  until cluster_ready; do
    if [ "$waited" -ge "$timeout" ]; then
      sinfo -N -l 2>&1 | sed 's/^/  /' >&2 || true
      tail -n 5 "$dir/log/slurmctld.log" "$dir/log/slurmd.log" 2>/dev/null | sed 's/^/  /' >&2
      die "node $node not idle after ${timeout}s"
    fi
    # A node that registered as down (e.g. after an unclean stop) is returned to service.
    scontrol update nodename="$node" state=resume >/dev/null 2>&1 || true
    sleep 1
    waited=$((waited + 1))
  done
  say "running: node $node, $cpus CPUs, partition debug; export SLURM_CONF=$conf"
}

stop_daemon() {  # SIGTERM to the daemon of a pid file, if it still runs
  local pid
  pid=$(cat "$1" 2>/dev/null) || return 0
  kill "$pid" 2>/dev/null || true
}

wait_gone() {  # wait_gone PIDFILE NAME: up to 30 s for the daemon to exit, then SIGKILL
  local pid i
  pid=$(cat "$1" 2>/dev/null) || return 0
  for i in $(seq 1 30); do
    kill -0 "$pid" 2>/dev/null || { rm -f "$1"; return 0; }
    sleep 1
    [ "$i" = 15 ] && kill "$pid" 2>/dev/null
  done
  say "$2 (pid $pid) did not stop; killing it"
  kill -9 "$pid" 2>/dev/null || true
  rm -f "$1"
}

stop() {
  [ -f "$conf" ] || { say "not configured ($conf missing): nothing to stop"; return 0; }
  if pid_alive "$dir/run/slurmctld.pid"; then
    scancel --full --quiet --partition=debug 2>/dev/null || true  # queued test jobs do not survive
    scontrol shutdown >/dev/null 2>&1 || true
  fi
  wait_gone "$dir/run/slurmctld.pid" slurmctld
  stop_daemon "$dir/run/slurmd.pid"
  wait_gone "$dir/run/slurmd.pid" slurmd
  stop_daemon "$dir/run/munged.pid"
  wait_gone "$dir/run/munged.pid" munged
  say "stopped"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) if cluster_ready; then say "running ($conf)"; else say "not running"; exit 1; fi ;;
  env) echo "export SLURM_CONF=$conf" ;;
  -h|--help) sed -n '2,13p' "$0" ;;
  *) die "usage: ci/slurm-local.sh start|stop|status|env (see --help)" ;;
esac
