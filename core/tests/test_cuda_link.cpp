// A program that links ovb::cuda_backend has the CUDA backend exactly when its build has it: the
// backend's library installs its hooks before main, though nothing in the program names it.
// OVB_EXPECT_CUDA_BACKEND (1 or 0, from the build's configuration) says which. Run without a GPU,
// the CUDA backend itself must answer a request for it (no device), not core's "no CUDA backend".
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "ovb/backend.hpp"
#include "ovb/backend_measures.hpp"
#include "ovb/error.hpp"
#include "ovb/test_main.hpp"

namespace {

bool cuda_expected() {
  const char* want = std::getenv("OVB_EXPECT_CUDA_BACKEND");
  if (!want || (std::string(want) != "0" && std::string(want) != "1"))
    throw ovb::UsageError("set OVB_EXPECT_CUDA_BACKEND to 1 (CUDA build) or 0");
  return std::string(want) == "1";
}

}  // namespace

TEST(CudaLink, BackendPresentExactlyInACudaBuild) {
  EXPECT_EQ(ovb::cuda_backend_built(), cuda_expected());
}

TEST(CudaLink, CudaRequestReachesTheBackendWhenLinked) {
  ovb::BackendOptions opts;
  opts.name = "cuda";
  try {
    auto backend = ovb::make_backend(opts, ovb::testing::launch());
    EXPECT_TRUE(cuda_expected());  // a GPU is here
    EXPECT_EQ(backend->name(), "cuda");
  } catch (const ovb::UsageError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.find("no CUDA backend") == std::string::npos, cuda_expected()) << what;
  }
}

// The hooks answer for CUDA backends only: a host backend in a CUDA program measures nothing.
TEST(CudaLink, HostBackendHasNoDeviceMeasures) {
  ovb::BackendOptions opts;
  opts.name = "host";
  auto backend = ovb::make_backend(opts, ovb::testing::launch());
  EXPECT_EQ(ovb::backend_telemetry(*backend)["available"], false);
  EXPECT_EQ(ovb::backend_telemetry(*backend)["reason"], "host backend: no GPU to sample");
  EXPECT_FALSE(ovb::device_memory_peak_bytes(*backend).has_value());
}
