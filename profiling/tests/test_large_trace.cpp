// A large generated trace (200 MB by default; OVB_LARGE_TRACE_MB overrides) is analyzed by the
// ovb-trace binary in a child process: its peak resident memory (getrusage of the child) must stay
// well below the file size - a DOM parse would need several times the file - over a small footprint
// of its own (no CUDA library, in any build), and the numbers must be exactly those the generator
// put in.
#include <gtest/gtest.h>

#include <utility>
#include <vector>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "test_util.hpp"

namespace {

// One iteration every 250 us: a compute kernel [0,100], an NCCL kernel [50,200] on another
// stream, and the CPU-side events PyTorch's profiler writes (an op with bulky args, a launch, a
// flow), which the analyzer must skip without keeping.
struct Generated {
  long long iterations = 0;
  std::uintmax_t bytes = 0;
};

Generated generate(const std::string& path, std::uintmax_t target_bytes) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (!f) return {};
  std::fprintf(f,
               "{\n  \"schemaVersion\": 1,\n  \"distributedInfo\": {\"backend\": \"nccl\", "
               "\"rank\": 0, \"world_size\": 1},\n  \"traceEvents\": [\n");
  Generated g;
  const char* pad =
      "[[8192, 4096], [4096, 4096], [], [], []], \"Input type\": [\"c10::BFloat16\", "
      "\"c10::BFloat16\", \"\", \"\", \"\"], \"Concrete Inputs\": [\"\", \"\", \"1\", \"1\", "
      "\"False\"], \"Sequence number\": 1234, \"Fwd thread id\": 1, \"Record function id\": 99";
  for (long long i = 0;; ++i) {
    const long long t = i * 250;
    std::fprintf(f,
                 "  {\n    \"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::addmm\", \"pid\": "
                 "9, \"tid\": 9,\n    \"ts\": %lld.000, \"dur\": 3.000,\n    \"args\": "
                 "{\"External id\": %lld, \"Input Dims\": %s}\n  },\n",
                 t, i, pad);
    std::fprintf(f,
                 "  {\n    \"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": "
                 "\"cudaLaunchKernel\", \"pid\": 9, \"tid\": 9,\n    \"ts\": %lld.500, \"dur\": "
                 "1.000,\n    \"args\": {\"correlation\": %lld, \"cbid\": 211}\n  },\n",
                 t, i);
    std::fprintf(f,
                 "  {\"ph\": \"s\", \"id\": %lld, \"pid\": 9, \"tid\": 9, \"ts\": %lld.500, "
                 "\"cat\": \"ac2g\", \"name\": \"ac2g\"},\n",
                 i, t);
    std::fprintf(f,
                 "  {\n    \"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"sm90_xmma_gemm_"
                 "bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_warpgroupsize2x1x1_execute_"
                 "segment_k_off_kernel__5x_cublas\", \"pid\": 0, \"tid\": 7,\n    \"ts\": "
                 "%lld.000, \"dur\": 100.000,\n    \"args\": {\"External id\": %lld, \"device\": "
                 "0, \"stream\": 7, \"correlation\": %lld, \"registers per thread\": 168, "
                 "\"shared memory\": 213248, \"blocks per SM\": 0.5, \"grid\": [66, 2, 1], "
                 "\"block\": [384, 1, 1]}\n  },\n",
                 t, i, i);
    std::fprintf(f,
                 "  {\n    \"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"ncclDevKernel_"
                 "AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)\", \"pid\": 0, "
                 "\"tid\": 20,\n    \"ts\": %lld.000, \"dur\": 150.000,\n    \"args\": "
                 "{\"device\": 0, \"stream\": 20, \"correlation\": %lld}\n  }",
                 t + 50, i + 1'000'000'000);
    ++g.iterations;
    if (i % 1000 == 999 && static_cast<std::uintmax_t>(std::ftell(f)) >= target_bytes) break;
    std::fputs(",\n", f);
  }
  std::fputs("\n  ],\n  \"baseTimeNanoseconds\": 1700000000000000000\n}\n", f);
  std::fclose(f);
  g.bytes = std::filesystem::file_size(path);
  return g;
}

}  // namespace

TEST(LargeTrace, MemoryStaysWellBelowTheFileSize) {
  const char* mb_env = std::getenv("OVB_LARGE_TRACE_MB");
  const std::uintmax_t mb = mb_env ? std::strtoull(mb_env, nullptr, 10) : 200;
  ovb::trace::testing::TempDir dir;
  const std::string trace = dir.file("large.trace.json"), out = dir.file("analysis.json");
  const Generated g = generate(trace, mb << 20);
  ASSERT_GE(g.bytes, mb << 20);

  // The program's own footprint (its shared libraries) from a run that reads nothing, then the
  // analysis; RUSAGE_CHILDREN's peak is the largest child's.
  auto run = [](std::vector<const char*> argv) {
    argv.push_back(nullptr);
    const pid_t pid = fork();
    if (pid == 0) {
      std::freopen("/dev/null", "w", stdout);
      execv(OVB_TRACE_EXE, const_cast<char* const*>(argv.data()));
      _exit(127);
    }
    int status = 0;
    EXPECT_EQ(waitpid(pid, &status, 0), pid);
    rusage usage{};
    EXPECT_EQ(getrusage(RUSAGE_CHILDREN, &usage), 0);
    return std::make_pair(status, static_cast<double>(usage.ru_maxrss) * 1024.0);  // Linux: KiB
  };
  const double base_bytes = run({OVB_TRACE_EXE, "--help"}).second;
  const auto [status, peak_bytes] =
      run({OVB_TRACE_EXE, "analyze", trace.c_str(), "--json", out.c_str()});
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 0);
  const double file = static_cast<double>(g.bytes);
  std::printf("trace %.0f MB, %lld iterations; ovb-trace peak RSS %.1f MB (%.3f x the file), "
              "its own footprint %.1f MB\n",
              file / 1e6, g.iterations, peak_bytes / 1e6, peak_bytes / file, base_bytes / 1e6);
  // ovb-trace links no CUDA library, in a CUDA build too (ctest tree.cuda_links): its footprint
  // is MPI's, ~15 MB; CUDA's libraries, mapped at start, would add some 200 MB.
  EXPECT_LT(base_bytes, 64e6);
  // A DOM parse needs several times the file. The streaming reader keeps 32 bytes per kernel (the
  // analysis about as much again) over that footprint: ~0.27 x for this file, less for larger
  // ones.
  EXPECT_LT(peak_bytes, 0.5 * file);

  const auto a = nlohmann::json::parse(ovb::trace::testing::read_file(out));
  const auto& r = a["ranks"][0];
  const double n = static_cast<double>(g.iterations);
  EXPECT_DOUBLE_EQ(r["compute_us"].get<double>(), 100 * n);
  EXPECT_DOUBLE_EQ(r["comm_us"].get<double>(), 150 * n);
  EXPECT_DOUBLE_EQ(r["overlapped_comm_us"].get<double>(), 50 * n);
  EXPECT_DOUBLE_EQ(r["exposed_comm_us"].get<double>(), 100 * n);
  EXPECT_DOUBLE_EQ(r["span_us"].get<double>(), 250 * (n - 1) + 200);
  EXPECT_EQ(r["collectives"][0]["count"], g.iterations);
  EXPECT_EQ(r["collectives"][0]["kind"], "all_reduce");
  EXPECT_EQ(a["skipped"]["ignored"], 3 * g.iterations);
}
