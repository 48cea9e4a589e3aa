#!/usr/bin/env bash
# slurm/gpu-ab.sh: gpt4d's speed-up variants against the baseline in one GPU call of at most 10
# minutes, build included. Builds gpt4d and its CUDA kernel tests alone for one CUDA architecture
# (cuDNN attention on, as in the committed runs), runs the variants' kernel tests (their GEMMs
# against the host kernels and the baseline's; a failure stops the call before any timing), then
# for each variant runs `ovb-analysis ab` on the GPT 1.3B shape of
# results/h100 (24 x 2048, seq 2048, vocab 50304, batch 4, bf16): one warm-up pair left out, then
# PAIRS pairs in the order A B A B ... (A: the baseline, B: the variant), each run 23 iterations of
# which 20 are timed (gpt4d's warm-up rule), measure summary.p50_ms; every pair's per-iteration
# losses compared (largest relative difference at most LOSS_RTOL, below). Each run's result (with
# its GPU telemetry in context.gpu_telemetry) is kept as it ends; each variant's ab.json and its
# lines in summary.md are written when the variant ends, so a cut call keeps what finished. The
# budget is counted from this script's start: a variant starts only when its estimate fits.
#
# Time arithmetic (one H100; results/h100/single-gpu/summary.md): an iteration takes ~140 ms, so
# a run is ~1.5 s of start-up (CUDA context, cuBLASLt, cuDNN graphs) + 23 x 0.14 s = ~5 s; counted
# as RUN_S = 8 s. A variant is (1 + PAIRS) pairs x 2 runs = 12 runs at PAIRS = 5: ~96 s. The build
# of gpt4d and the kernel tests for sm_90 on 16 cores is counted as BUILD_S = 300 s, the kernel
# tests as CHECK_S = 20 s. Two variants: 300 + 20 + 2 x 96 = 512 s, inside the call's 600 s with
# 10 s kept for the summary.
#
# Usage: slurm/gpu-ab.sh OUT_DIR [--dry-run] [--pairs N] [--variants NAME,...]
#   --dry-run        print the build command, the variants' commands and the time estimate;
#                    builds and runs nothing, needs no GPU (ctest slurm_gpu_ab_plan checks it)
#   --pairs N        timed pairs per variant (>= 5, the default 5)
#   --variants LIST  a subset of the variants below, in this order (default: all)
#   e.g. on the GPU machine: slurm/gpu-ab.sh "$OUT"
# Environment: OVB_GPU_ARCH (90), OVB_GPU_BUILD (build/gpu-ab), OVB_CALL_LIMIT_S (600),
#   OVB_PYTHON (python3, or the repository's .venv), OVB_GPT4D (a gpt4d to use: no build and no
#   kernel tests; for rehearsals).
#   OVB_PACK=ARCHIVE: OUT_DIR as one archive too, kept current during the call (slurm/lib/pack.sh).
# Output: OUT_DIR/summary.md, OUT_DIR/<variant>/ab.json and runs/{A,B}<pair>.json,
#   OUT_DIR/build.log, OUT_DIR/kernel-tests.log, OUT_DIR/gpu-ab.log (each phase with its seconds). Exit status: 0 when every
#   variant ran with the same loss curves, 1 otherwise, 2 for bad usage.
set -euo pipefail
start=$(date +%s)
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
usage="usage: gpu-ab.sh OUT_DIR [--dry-run] [--pairs N] [--variants NAME,...]"
die() { echo "gpu-ab.sh: error: $*" >&2; exit 2; }

# The variants: name and the gpt4d flags that make it (endtoend/README.md, "Options").
variant_names=(gemm-autotune-8 gemm-autotune-32)
declare -A variant_flags=([gemm-autotune-8]="--gemm-autotune 8"
                          [gemm-autotune-32]="--gemm-autotune 32")
RUN_S=8 BUILD_S=300 CHECK_S=20
# The GPU-labelled tests of the variants' CUDA paths (endtoend/tests/test_cuda_kernels.cpp).
kernel_filter='*LinearGemms*'
# Loss curves of two runs of the same training whose GEMMs round differently: within 2^-7 (two
# bf16 unit roundoffs) relatively at every iteration. A screen for a changed training, not a bound.
LOSS_RTOL=0.0078125
shape=(--backend cuda --preset 1.3B --seq 2048 --vocab 50304 --batch 4 --iters 23 --quiet)

if [ $# -lt 1 ] || [ "${1#-}" != "$1" ]; then die "$usage"; fi
out=$1
shift
dry=0 pairs=5 chosen=""
while [ $# -gt 0 ]; do
  case $1 in
    --dry-run) dry=1 ;;
    --pairs) [ $# -ge 2 ] || die "--pairs needs a number"; pairs=$2; shift ;;
    --variants) [ $# -ge 2 ] || die "--variants needs a list"; chosen=$2; shift ;;
    *) die "unknown option '$1' ($usage)" ;;
  esac
  shift
done
if ! [[ $pairs =~ ^[0-9]+$ ]] || [ "$pairs" -lt 5 ]; then die "--pairs $pairs: expected a number >= 5"; fi
variants=("${variant_names[@]}")
if [ -n "$chosen" ]; then
  IFS=, read -r -a variants <<< "$chosen"
  for v in "${variants[@]}"; do
    [ -n "${variant_flags[$v]+x}" ] ||
      die "--variants: unknown variant '$v' (known: ${variant_names[*]})"
  done
fi
# shellcheck source=slurm/lib/gpu-call-env.sh
source "$root/slurm/lib/gpu-call-env.sh"
# shellcheck source=slurm/lib/pack.sh
source "$root/slurm/lib/pack.sh"
gpu_call_env gpu-ab
gpt4d=${OVB_GPT4D:-$build/endtoend/gpt4d}
configure=(cmake --preset cuda -B "$build" -DCMAKE_CUDA_ARCHITECTURES="$arch" -DOVB_ENABLE_CUDNN=ON)
compile=(cmake --build "$build" -j "$(nproc)" --target gpt4d ovb-gpt4d-cuda-kernel-tests)
check=("$build/endtoend/tests/ovb-gpt4d-cuda-kernel-tests" "--gtest_filter=$kernel_filter")
variant_s=$(((1 + pairs) * 2 * RUN_S))
build_s=$((BUILD_S + CHECK_S))
[ -z "${OVB_GPT4D:-}" ] || build_s=0
estimate=$((build_s + ${#variants[@]} * variant_s))
ab_args() {  # fills ab: the ovb-analysis ab command of variant $1
  local base="$gpt4d ${shape[*]} --out {out}"
  ab=("$py" "$root/analysis/ovb-analysis" ab --a "$base" --b "$base ${variant_flags[$1]}"
      --pairs "$pairs" --field summary.p50_ms --loss-rtol "$LOSS_RTOL" --keep "$out/$1/runs"
      --json "$out/$1/ab.json")
}

if [ "$dry" = 1 ]; then
  echo "# build (cd $root) and kernel tests, counted as $build_s s:"
  if [ "$build_s" = 0 ]; then
    echo "# none: OVB_GPT4D=$gpt4d"
  else
    echo "${configure[*]}"
    echo "${compile[*]}"
    echo "${check[*]}"
  fi
  echo "# variants, each (1 warm-up + $pairs) pairs x 2 runs x $RUN_S s = $variant_s s, order ABAB:"
  for v in "${variants[@]}"; do
    ab_args "$v"
    echo "variant $v: $(printf '%q ' "${ab[@]}")"
  done
  echo "estimate: $estimate s of a call limit of $limit s (10 s kept for the summary)"
  [ "$estimate" -le $((limit - 10)) ] || { echo "the estimate exceeds the call" >&2; exit 1; }
  exit 0
fi

mkdir -p "$out"
out=$(cd "$out" && pwd)
pack_start "$out"
log=$out/gpu-ab.log
summary=$out/summary.md
note() { echo "gpu-ab: $* ($(($(date +%s) - start)) s since the start)" | tee -a "$log"; }
note "start: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname), architecture $arch," \
  "variants ${variants[*]}, $pairs pairs"
rc=0
if [ -z "${OVB_GPT4D:-}" ]; then
  (cd "$root" && "${configure[@]}" && "${compile[@]}") > "$out/build.log" 2>&1 || rc=$?
  note "build exit status $rc (log build.log)"
  [ "$rc" = 0 ] || { tail -20 "$out/build.log" >&2; exit "$rc"; }
  "${check[@]}" > "$out/kernel-tests.log" 2>&1 || rc=$?
  note "kernel tests ($kernel_filter) exit status $rc (log kernel-tests.log)"
  [ "$rc" = 0 ] || { tail -20 "$out/kernel-tests.log" >&2; exit 1; }
fi
{
  echo "# gpt4d speed-up variants, A/B on one GPU"
  echo
  echo "Produced by slurm/gpu-ab.sh on $(hostname), $(date -u +%Y-%m-%dT%H:%M:%SZ); shape:" \
    "\`${shape[*]}\`; per variant 1 warm-up pair left out, then $pairs pairs ABAB (A: baseline);" \
    "measure: each run's median iteration time (20 timed iterations); loss tolerance $LOSS_RTOL."
} > "$summary.tmp" && mv "$summary.tmp" "$summary"
for v in "${variants[@]}"; do
  left=$((start + limit - 10 - $(date +%s)))
  if [ "$left" -lt "$variant_s" ]; then
    note "variant $v not started: $left s left, its estimate is $variant_s s"
    echo -e "\n## $v\n\nNot run: no time left in this call." >> "$summary"
    rc=1
    continue
  fi
  mkdir -p "$out/$v"
  ab_args "$v"
  vrc=0
  report=$(timeout -k 5 "$left" "${ab[@]}" 2>&1) || vrc=$?
  echo -e "\n## $v (\`${variant_flags[$v]}\`), exit status $vrc\n\n$report" >> "$summary"
  note "variant $v exit status $vrc"
  [ "$vrc" = 0 ] || rc=1
done
note "done, exit status $rc (summary.md)"
exit "$rc"
