#!/usr/bin/env bash
# slurm/gpu-fine-overlap.sh: fine-grained overlap and the memory-bound kernel classes on one GPU,
# in one call of at most 10 minutes, build included. Builds only ovb-overlap and ovb-membw for one
# CUDA architecture on every core, starts CUDA MPS (ranks share the one GPU), then runs, most
# important first, each step writing its JSON into OUT_DIR as soon as it ends:
#   membw          ovb-membw, every kernel class, bf16 and fp32, 4 MiB to 256 MiB (the model's
#                  per-class memory efficiencies: ovb-model calibrate --mem)
#   decomp-check   ctest mb.overlap.decomposition.cuda.2's command (every collective x chunks x
#                  split, bf16 and fp32, against the unchunked result)
#   ring-check     ctest mb.overlap.ring.cuda.2's command (ring over ncclSend/Recv and CUDA IPC
#                  copies, a GEMM SM budget, CTA policy zero with its observed transport)
#   decomp-1rank   GPT layer GEMMs (tensor-parallel 2, one 2048-token sequence) cut into 1, 2, 4, 8
#                  chunks along m and n on the whole GPU: the decomposition loss alone
#   decomp-2ranks  the same GEMMs with their collective (GEMM+AR, GEMM+RS, AG+GEMM) on 2 ranks
#                  sharing the GPU, equal and high-priority communication: slowdowns, exposed
#                  communication, fraction of the ideal
#   ring-2ranks    the ring exchanges on those shapes: send_recv against copy_engine, the GEMM on
#                  every SM and on half of them
#   cta-2ranks     a GEMM beside an all-reduce with NCCL's default and zero-SM CTA policy: the
#                  transport NCCL actually used and the GEMM's slowdown
# Every multi-rank figure comes from ranks sharing one GPU over NCCL's socket transport on
# loopback (~2-3 GB/s): overlap behaviour only, never an NVLink or InfiniBand figure. GPU clocks,
# power and throttle reasons are sampled every second into OUT_DIR/telemetry.csv.
# Usage: slurm/gpu-fine-overlap.sh OUT_DIR [--dry-run] [--only STEP,...]
# Environment: OVB_GPU_ARCH (90), OVB_GPU_BUILD (build/gpu-fine), OVB_CALL_LIMIT_S (600),
#   OVB_PYTHON (python3, or the repository's .venv), OVB_PACK (an archive of OUT_DIR, kept current).
# Output: OUT_DIR/STEP.json (the program's result), OUT_DIR/logs/STEP.log, OUT_DIR/steps.tsv (step,
#   exit status, seconds), OUT_DIR/build.log, OUT_DIR/nvidia-smi.txt, OUT_DIR/telemetry.csv; with
#   OVB_PACK=ARCHIVE all of it as one archive as well, renewed as the call goes (slurm/lib/pack.sh).
set -uo pipefail
start=$(date +%s)
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
usage="usage: gpu-fine-overlap.sh OUT_DIR [--dry-run] [--only STEP,...]"
die() { echo "gpu-fine-overlap.sh: error: $*" >&2; exit 2; }
if [ $# -lt 1 ] || [ "${1#-}" != "$1" ]; then die "$usage"; fi
out=$1
shift
dry=0 only=""
while [ $# -gt 0 ]; do
  case $1 in
    --dry-run) dry=1 ;;
    --only) [ $# -ge 2 ] || die "--only needs a list of steps"; only=",$2,"; shift ;;
    *) die "unknown option '$1' ($usage)" ;;
  esac
  shift
done
# shellcheck source=slurm/lib/gpu-call-env.sh
source "$root/slurm/lib/gpu-call-env.sh"
# shellcheck source=slurm/lib/pack.sh
source "$root/slurm/lib/pack.sh"
# shellcheck source=slurm/lib/call-steps.sh
source "$root/slurm/lib/call-steps.sh"
gpu_call_env gpu-fine
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-lo}
bin=$build/microbench
check=("$py" "$root/microbench/tests/check_results.py" --kind overlap --backend cuda)
mpi2=(mpirun -np 2 --bind-to none)
# GPT layer GEMMs of tensor-parallel 2 on one 2048-token sequence (M = 2048): 1.3B (h 2048)
# attention output (K = h/2) and MLP down (K = 4h/2), its MLP up (N = 4h/2); 13B (h 5120) MLP down
# and the QKV projection (N = 3h/2). Row-parallel ones pair with AR/RS, column-parallel with AG.
shapes=2048x2048x1024,2048x2048x4096,2048x4096x2048,2048x5120x10240,2048x7680x5120
steps=(membw decomp-check ring-check decomp-1rank decomp-2ranks ring-2ranks cta-2ranks)
cmd_of() {
  local o=$out/$1.json
  case $1 in
    membw) echo "$bin/ovb-membw --backend cuda --classes all --dtypes bf16,fp32 --sizes 4M:256M:4" \
                "--iterations 20 --benchmark_out=$o && $py $root/microbench/tests/check_results.py" \
                "--kind membw --backend cuda $o" ;;
    decomp-check) echo "${mpi2[*]} $bin/ovb-overlap --backend cuda --ranks-per-gpu 2" \
                       "--scenarios decomposition --colls all_reduce,reduce_scatter,all_gather" \
                       "--shapes 256x256x128 --dtypes bf16,fp32 --chunks 1,2,4 --split m,n" \
                       "--priorities equal --iterations 2 --benchmark_out=$o" \
                       "&& ${check[*]} $o --ranks 2 --allow-skip 'splits along m only'" ;;
    ring-check) echo "${mpi2[*]} $bin/ovb-overlap --backend cuda --ranks-per-gpu 2" \
                     "--scenarios ring,gemm_coll --colls all_gather,reduce_scatter --shapes 256x256x128" \
                     "--sizes 1M --dtypes bf16,fp32 --exchange send_recv,copy_engine --gemm-sms default,8" \
                     "--cta-policy default,2 --priorities equal --orders comm_first --iterations 2" \
                     "--benchmark_out=$o && ${check[*]} $o --ranks 2" ;;
    decomp-1rank) echo "mpirun -np 1 $bin/ovb-overlap --backend cuda --scenarios decomposition" \
                       "--colls all_reduce --shapes $shapes --dtypes bf16 --chunks 1,2,4,8 --split m,n" \
                       "--priorities equal --iterations 20 --benchmark_out=$o && ${check[*]} $o --ranks 1" ;;
    decomp-2ranks) echo "${mpi2[*]} $bin/ovb-overlap --backend cuda --ranks-per-gpu 2" \
                        "--scenarios decomposition --colls all_reduce,reduce_scatter,all_gather" \
                        "--shapes $shapes --dtypes bf16 --chunks 1,2,4,8 --split m,n" \
                        "--priorities equal,comm_high --iterations 20 --benchmark_out=$o" \
                        "&& ${check[*]} $o --ranks 2 --allow-skip 'splits along m only'" ;;
    ring-2ranks) echo "${mpi2[*]} $bin/ovb-overlap --backend cuda --ranks-per-gpu 2 --scenarios ring" \
                      "--colls all_gather,reduce_scatter --shapes $shapes --dtypes bf16" \
                      "--exchange send_recv,copy_engine --gemm-sms default,66 --priorities equal" \
                      "--iterations 20 --benchmark_out=$o && ${check[*]} $o --ranks 2" ;;
    cta-2ranks) echo "${mpi2[*]} $bin/ovb-overlap --backend cuda --ranks-per-gpu 2 --scenarios gemm_coll" \
                     "--colls all_reduce --shapes 2048x5120x10240 --sizes 4M,32M --dtypes bf16" \
                     "--cta-policy default,2 --max-ctas default,4 --priorities equal,comm_high" \
                     "--orders comm_first --iterations 20 --benchmark_out=$o && ${check[*]} $o --ranks 2" ;;
  esac
}
configure=(cmake --preset cuda -B "$build" -DCMAKE_CUDA_ARCHITECTURES="$arch" -DOVB_BUILD_TESTS=OFF
           -DOVB_ENABLE_CUDNN=OFF)
compile=(cmake --build "$build" -j "$(nproc)" --target ovb-overlap ovb-membw -- -k 0)

if [ "$dry" = 1 ]; then
  echo "# build (cd $root):"
  echo "${configure[*]}"
  echo "${compile[*]}"
  echo "# CUDA MPS started; nvidia-smi sampled every second into $out/telemetry.csv; then, each"
  echo "# step stopped by timeout at $((limit - 15)) s after the start:"
  call_print_steps "${steps[@]}"
  exit 0
fi

mkdir -p "$out"
out=$(cd "$out" && pwd)
log=$out/gpu-fine-overlap.log
call_note "start: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname), architecture $arch"
export CUDA_MPS_PIPE_DIRECTORY=/tmp/ovb-mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/ovb-mps-log
mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
# shellcheck disable=SC2317  # called at exit (call_begin)
mps_quit() { echo quit | nvidia-cuda-mps-control >/dev/null 2>&1; }
call_begin mps_quit
rc=0
(cd "$root" && "${configure[@]}" && "${compile[@]}") > "$out/build.log" 2>&1 || rc=$?
call_note "build exit status $rc (log build.log)"
[ "$rc" = 0 ] || { tail -20 "$out/build.log" >&2; exit "$rc"; }
if nvidia-cuda-mps-control -d >> "$log" 2>&1; then call_note "CUDA MPS on"; else call_note "CUDA MPS failed to start: ranks time-slice"; fi
call_run_steps "${steps[@]}" || rc=1
call_note "done, exit status $rc"
exit "$rc"
