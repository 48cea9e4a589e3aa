// ovb-inject-sample: a plain CUDA program - no suite library - for the injected tracer's test.
// Each iteration (NVTX range "iteration") runs a busy kernel on one stream while a copy and a
// memset run on another, so a trace of it must show two streams with concurrent work.
//
//   CUDA_INJECTION64_PATH=build/cuda/libovb-inject.so OVB_TRACE_DIR=out ./ovb-inject-sample 8
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <cstdio>
#include <cstdlib>

namespace {

__global__ void busy_kernel(float* x, int n, int rounds) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = x[i];
  for (int r = 0; r < rounds; ++r) v = v * 0.999f + 0.001f;
  x[i] = v;
}

int check(cudaError_t rc, const char* what) {
  if (rc == cudaSuccess) return 0;
  std::fprintf(stderr, "ovb-inject-sample: %s failed: %s\n", what, cudaGetErrorString(rc));
  std::exit(1);
}

}  // namespace

int main(int argc, char** argv) {
  const int iters = argc > 1 ? std::atoi(argv[1]) : 8;
  if (iters <= 0) {
    std::fprintf(stderr, "usage: ovb-inject-sample [iterations > 0]\n");
    return 2;
  }
  // CUDA first: the injected tracer starts in cuInit and points NVTX at CUPTI before the first
  // NVTX call below.
  check(cudaFree(nullptr), "cudaFree(0)");
  constexpr int n = 1 << 20;
  float *x = nullptr, *a = nullptr, *b = nullptr;
  check(cudaMalloc(&x, n * sizeof(float)), "cudaMalloc");
  check(cudaMalloc(&a, n * sizeof(float)), "cudaMalloc");
  check(cudaMalloc(&b, n * sizeof(float)), "cudaMalloc");
  cudaStream_t s1, s2;
  check(cudaStreamCreate(&s1), "cudaStreamCreate");
  check(cudaStreamCreate(&s2), "cudaStreamCreate");
  for (int i = 0; i < iters; ++i) {
    nvtxRangePushA("iteration");
    busy_kernel<<<(n + 255) / 256, 256, 0, s1>>>(x, n, 2000);
    check(cudaGetLastError(), "busy_kernel launch");
    check(cudaMemcpyAsync(b, a, n * sizeof(float), cudaMemcpyDeviceToDevice, s2), "memcpy");
    check(cudaMemsetAsync(a, 0, n * sizeof(float), s2), "memset");
    check(cudaStreamSynchronize(s1), "sync s1");
    check(cudaStreamSynchronize(s2), "sync s2");
    nvtxRangePop();
  }
  check(cudaFree(x), "cudaFree");
  check(cudaFree(a), "cudaFree");
  check(cudaFree(b), "cudaFree");
  std::printf("ovb-inject-sample: %d iterations\n", iters);
  return 0;
}
