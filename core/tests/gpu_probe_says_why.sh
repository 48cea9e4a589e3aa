#!/bin/sh
# Why GPU tests skip, in plain words: ovb-gpu-probe must say that no CUDA driver or device was
# found (or which driver is too old), never only the runtime's "CUDA driver version is
# insufficient for CUDA runtime version" on a machine without a driver.
# Usage: gpu_probe_says_why.sh OVB_GPU_PROBE           (ctest: core.gpu_probe_says_why)
out=$("$1")
rc=$?
echo "$out"
case "$rc:$out" in
  "0:"*"CUDA device(s)"*) exit 0 ;;
  "77:no CUDA driver found"* | "77:no CUDA device found"* | "77:the CUDA driver ("*) exit 0 ;;
esac
echo "FAIL: exit $rc with an unclear reason"
exit 1
