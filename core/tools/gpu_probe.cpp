// ovb-gpu-probe [COMMAND ARGS...]: without a command, exits 0 when this process can use a CUDA
// device and 77 otherwise (printing why). With a command, runs it in place (exec) when a device is
// usable, else exits 77. The test registration (cmake/OvbTesting.cmake) prefixes every GPU test
// with it, so ctest reports those tests as "Skipped" (SKIP_RETURN_CODE 77) on machines without a GPU.
#include <cuda_runtime.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

namespace {
// Why no device is usable, in the user's terms: without a driver the runtime's own message
// ("CUDA driver version is insufficient for CUDA runtime version") points at a version mismatch
// that is not there.
void say_why(cudaError_t rc, int n) {
  int driver = 0, runtime = 0;
  cudaDriverGetVersion(&driver);  // 0 when no driver (libcuda.so) is installed
  cudaRuntimeGetVersion(&runtime);
  const auto v = [](int x) { return std::to_string(x / 1000) + "." + std::to_string(x % 1000 / 10); };
  std::string why;
  if (driver == 0)
    why = "no CUDA driver found (libcuda.so is not installed or not loadable)";
  else if (rc == cudaErrorInsufficientDriver)
    why = "the CUDA driver (" + v(driver) + ") is older than this build's CUDA runtime (" +
          v(runtime) + ")";
  else if (rc == cudaErrorNoDevice || (rc == cudaSuccess && n == 0))
    why = "no CUDA device found (driver " + v(driver) + "; check CUDA_VISIBLE_DEVICES)";
  else
    why = std::string("no usable CUDA device: ") + cudaGetErrorString(rc);
  std::printf("%s: GPU test skipped\n", why.c_str());
}
}  // namespace

int main(int argc, char** argv) {
  int n = 0;
  const cudaError_t rc = cudaGetDeviceCount(&n);
  if (rc != cudaSuccess || n == 0) {
    say_why(rc, n);
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
