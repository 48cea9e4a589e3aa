// ovb-gpu-probe [COMMAND ARGS...]: without a command, exits 0 when this process can use a CUDA
// device and 77 otherwise (printing why). With a command, runs it in place (exec) when a device is
// usable, else exits 77. The test registration (cmake/OvbTesting.cmake) prefixes every GPU test
// with it, so ctest reports those tests as "Skipped" (SKIP_RETURN_CODE 77) on machines without a GPU.
#include <cuda_runtime.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

int main(int argc, char** argv) {
  int n = 0;
  const cudaError_t rc = cudaGetDeviceCount(&n);
  if (rc != cudaSuccess || n == 0) {
    std::printf("no usable CUDA device (%s): GPU test skipped\n",
                rc != cudaSuccess ? cudaGetErrorString(rc) : "0 devices");
    return 77;
  }
  if (argc < 2) {
    std::printf("%d CUDA device(s)\n", n);
    return 0;
  }
  execvp(argv[1], argv + 1);
  std::fprintf(stderr, "ovb-gpu-probe: cannot run '%s': %s\n", argv[1], std::strerror(errno));
  return 127;
}
