// Run context: environment filter, required keys, host backend device info.
#include <gtest/gtest.h>

#include <regex>

#include "ovb/backend.hpp"
#include "ovb/backend_measures.hpp"
#include "ovb/context.hpp"
#include "ovb/error.hpp"
#include "ovb/test_main.hpp"

TEST(Context, RelevantEnvironmentFilter) {
  const auto env = ovb::relevant_environment({"NCCL_ALGO=Ring", "CUDA_DEVICE_MAX_CONNECTIONS=1",
                                              "OMP_NUM_THREADS=4", "HOME=/root", "PATH=/bin",
                                              "OVB_RANKS_PER_GPU=4", "CUDA_HOME=/usr/local/cuda",
                                              "NCCL_DEBUG=INFO"});
  EXPECT_EQ(env, (nlohmann::json{{"NCCL_ALGO", "Ring"},
                                 {"CUDA_DEVICE_MAX_CONNECTIONS", "1"},
                                 {"OMP_NUM_THREADS", "4"},
                                 {"OVB_RANKS_PER_GPU", "4"},
                                 {"NCCL_DEBUG", "INFO"}}));
}

TEST(Context, HostRunContextHasEveryField) {
  setenv("NCCL_TEST_CONTEXT_VAR", "42", 1);
  ovb::BackendOptions opts;
  opts.name = "host";
  auto backend = ovb::make_backend(opts, ovb::testing::launch());
  const auto c = ovb::run_context(backend.get(), ovb::testing::launch());
  EXPECT_EQ(c["schema_version"], ovb::kSchemaVersion);
  EXPECT_EQ(c["suite"], "OverlapBench");
  EXPECT_EQ(c["backend"], "host");
  EXPECT_EQ(c["world_size"], 1);
  EXPECT_GE(c["cpus"].get<int>(), 1);  // the CPUs host ranks share (ranks per core)
  EXPECT_EQ(c["environment"]["NCCL_TEST_CONTEXT_VAR"], "42");
  EXPECT_TRUE(std::regex_match(c["date"].get<std::string>(),
                               std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)")));
  EXPECT_FALSE(c["host"].get<std::string>().empty());
  EXPECT_FALSE(c["git_revision"].get<std::string>().empty());
  EXPECT_FALSE(c["build_type"].get<std::string>().empty());
  EXPECT_NE(c["versions"]["mpi"].get<std::string>().find("MPI"), std::string::npos);
  EXPECT_GT(c["device"]["memory_bytes"].get<double>(), 0);
  EXPECT_EQ(c["device"]["count"], 1);
  EXPECT_TRUE(c["device"]["peak_tflops"].is_null());  // a CPU: "peak unknown", never a guess
  EXPECT_EQ(c["ranks_per_gpu"], 1);
  EXPECT_EQ(c["oversubscribed"], false);
  // Nothing to sample on a CPU: the field is there and says so, it is never a made-up reading.
  EXPECT_EQ(c["gpu_telemetry"]["available"], false);
  EXPECT_EQ(c["gpu_telemetry"]["reason"], "host backend: no GPU to sample");
  EXPECT_FALSE(ovb::device_memory_peak_bytes(*backend).has_value());
}

// This program links ovb::core alone, as the analysis tools do: no CUDA backend in any build
// (test_cuda_link.cpp checks the programs that link it).
TEST(Context, CudaBackendRequestedWithoutItSaysSo) {
  EXPECT_FALSE(ovb::cuda_backend_built());
  ovb::BackendOptions opts;
  opts.name = "cuda";
  EXPECT_THROW(ovb::make_backend(opts, ovb::testing::launch()), ovb::UsageError);
  try {
    ovb::make_backend(opts, ovb::testing::launch());
  } catch (const ovb::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("-DOVB_ENABLE_CUDA=ON"), std::string::npos) << e.what();
  }
  opts.name = "auto";
  EXPECT_EQ(ovb::make_backend(opts, ovb::testing::launch())->name(), "host");
}
