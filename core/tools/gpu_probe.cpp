// ovb-gpu-probe: exits 0 when this process can use a CUDA device, 1 otherwise (prints why).
// The test registration runs it before every GPU test so that those tests are skipped (exit 77,
// "Skipped" in ctest) on machines without a GPU.
#include <cuda_runtime.h>

#include <cstdio>

int main() {
  int n = 0;
  const cudaError_t rc = cudaGetDeviceCount(&n);
  if (rc != cudaSuccess || n == 0) {
    std::printf("no usable CUDA device (%s): GPU test skipped\n",
                rc != cudaSuccess ? cudaGetErrorString(rc) : "0 devices");
    return 1;
  }
  std::printf("%d CUDA device(s)\n", n);
  return 0;
}
