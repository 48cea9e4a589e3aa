// The streaming trace reader on well-formed, malformed and compressed input, and the event
// classification it feeds.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analyze/classify.hpp"
#include "analyze/rank_trace.hpp"
#include "analyze/trace_reader.hpp"
#include "ovb/error.hpp"
#include "test_util.hpp"

#ifdef OVB_TRACE_HAVE_ZLIB
#include <zlib.h>
#endif

using namespace ovb::trace;
using ovb::trace::testing::TempDir;
using ovb::trace::testing::write_file;

namespace {

// The message of the UsageError that reading `text` as a trace throws ("" when none).
std::string read_error(const std::string& text) {
  TempDir dir;
  const std::string path = dir.file("t.json");
  write_file(path, text);
  try {
    read_trace(path, [](RawEvent&) {});
  } catch (const ovb::UsageError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(TraceReader, MicrosecondTextToExactNanoseconds) {
  EXPECT_EQ(us_text_to_ns("12"), 12000);
  EXPECT_EQ(us_text_to_ns("12.5"), 12500);
  EXPECT_EQ(us_text_to_ns("12.345"), 12345);
  EXPECT_EQ(us_text_to_ns("12.3454"), 12345);
  EXPECT_EQ(us_text_to_ns("12.3455"), 12346);  // nearest nanosecond
  EXPECT_EQ(us_text_to_ns("-1.5"), -1500);
  EXPECT_EQ(us_text_to_ns("1.5e3"), 1500000);
  // Large absolute times (us since the epoch) stay exact, unlike through a double.
  EXPECT_EQ(us_text_to_ns("1700000000123456.789"), 1700000000123456789);
  EXPECT_EQ(us_text_to_ns(""), std::nullopt);
  EXPECT_EQ(us_text_to_ns("abc"), std::nullopt);
  EXPECT_EQ(us_text_to_ns("1.2.3"), std::nullopt);
}

TEST(TraceReader, StreamsEventsAndKeepsTheHeader) {
  TempDir dir;
  const std::string path = dir.file("t.json");
  write_file(path, R"({"schemaVersion": 1, "traceEvents": [
      {"ph": "X", "name": "a", "ts": 1.25, "dur": 2, "args": {"nested": {"deep": [1, {"x": 2}]}}},
      {"ph": "M", "name": "b"}, 7],
    "distributedInfo": {"rank": 5}, "baseTimeNanoseconds": 42})");
  std::vector<RawEvent> events;
  const auto info = read_trace(path, [&](RawEvent& e) { events.push_back(e); });
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(info.events, 3u);
  EXPECT_EQ(events[0].json["name"], "a");
  EXPECT_EQ(events[0].ts_ns, 1250);
  EXPECT_EQ(events[0].dur_ns, 2000);
  EXPECT_EQ(events[0].json["args"]["nested"]["deep"][1]["x"], 2);
  EXPECT_FALSE(events[1].ts_ns.has_value());
  EXPECT_EQ(events[2].json, 7);  // not an object: delivered, for the caller to count
  EXPECT_EQ(info.top["distributedInfo"]["rank"], 5);  // keys after traceEvents are kept too
  EXPECT_EQ(info.top["baseTimeNanoseconds"], 42);
  EXPECT_EQ(info.top.count("traceEvents"), 0u);
}

TEST(TraceReader, MalformedInputSaysWhereAndWhy) {
  const std::string good = R"({"traceEvents": [{"ph": "X", "ts": 1, "dur": 1}]})";
  // Truncated in the middle of the events. Positions count bytes from 1; a truncated file fails
  // one past its last byte.
  const std::string cut = good.substr(0, 25);
  const std::string m = read_error(cut);
  EXPECT_NE(m.find("malformed JSON at byte 26"), std::string::npos) << m;
  EXPECT_NE(m.find("missing closing quote"), std::string::npos) << m;
  EXPECT_NE(m.find("t.json"), std::string::npos) << m;
  EXPECT_NE(read_error("{\"traceEvents\": [}").find("malformed JSON at byte 18"), std::string::npos)
      << read_error("{\"traceEvents\": [}");
  EXPECT_NE(read_error("").find("malformed JSON at byte"), std::string::npos);
  EXPECT_NE(read_error(R"({"events": []})").find("no \"traceEvents\" array"), std::string::npos);
  EXPECT_NE(read_error(R"({"traceEvents": {}})").find("no \"traceEvents\" array"),
            std::string::npos);
  EXPECT_NE(read_error("42").find("not a Chrome trace"), std::string::npos);
  EXPECT_EQ(read_error(good), "");
}

TEST(TraceReader, MissingFileAndFolderAreClearErrors) {
  TempDir dir;
  try {
    read_trace(dir.file("nope.json"), [](RawEvent&) {});
    FAIL();
  } catch (const ovb::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot read trace"), std::string::npos) << e.what();
  }
  EXPECT_THROW(read_trace(dir.path().string(), [](RawEvent&) {}), ovb::UsageError);
  EXPECT_THROW(expand_trace_paths({dir.path().string()}), ovb::UsageError);  // no traces in it
}

TEST(TraceReader, FoldersExpandToTheirTracesSorted) {
  TempDir dir;
  for (const char* n : {"rank-00001.trace.json", "rank-00000.trace.json", "analysis.json", "x.txt"})
    write_file(dir.file(n), "{}");
  const auto paths = expand_trace_paths({dir.path().string()});
  ASSERT_EQ(paths.size(), 2u);  // analysis.json is not taken for a trace when traces exist
  EXPECT_EQ(paths[0], dir.file("rank-00000.trace.json"));
  EXPECT_EQ(paths[1], dir.file("rank-00001.trace.json"));
}

#ifdef OVB_TRACE_HAVE_ZLIB
TEST(TraceReader, ReadsGzipCompressedTraces) {
  TempDir dir;
  const std::string path = dir.file("t.pt.trace.json.gz");
  const std::string text =
      R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 3, "dur": 4}]})";
  gzFile f = gzopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  gzwrite(f, text.data(), static_cast<unsigned>(text.size()));
  gzclose(f);
  const RankTrace t = load_rank_trace(path);
  ASSERT_EQ(t.activity.size(), 1u);
  EXPECT_EQ(t.activity[0].begin_ns, 3000);
  EXPECT_EQ(t.activity[0].end_ns, 7000);
}
#endif

TEST(Classify, KernelsCopiesRangesAndTheRest) {
  EXPECT_EQ(classify_event("X", "kernel", "ncclDevKernel_AllReduce_Sum_bf16_RING_LL", false),
            EventClass::comm);
  EXPECT_EQ(classify_event("X", "kernel", "ncclSymkDevKernel_AllGather", false), EventClass::comm);
  EXPECT_EQ(classify_event("X", "kernel", "MPI all_reduce x", true), EventClass::comm);
  EXPECT_EQ(classify_event("X", "Kernel", "sm90_gemm", false), EventClass::compute);
  EXPECT_EQ(classify_event("X", "kernel", "my_nccl_lookalike", false), EventClass::compute);
  EXPECT_EQ(classify_event("X", "gpu_memcpy", "Memcpy HtoD", false), EventClass::memory);
  EXPECT_EQ(classify_event("X", "Memset", "Memset", false), EventClass::memory);
  EXPECT_EQ(classify_event("X", "user_annotation", "fwd", false), EventClass::cpu_range);
  EXPECT_EQ(classify_event("X", "gpu_user_annotation", "fwd", false), EventClass::gpu_range);
  EXPECT_EQ(classify_event("X", "cpu_op", "aten::mm", false), EventClass::ignored);
  EXPECT_EQ(classify_event("X", "cuda_runtime", "cudaLaunchKernel", false), EventClass::ignored);
  EXPECT_EQ(classify_event("M", "", "process_name", false), EventClass::ignored);
  EXPECT_EQ(classify_event("f", "ac2g", "", false), EventClass::ignored);
  EXPECT_EQ(classify_event("X", "brand_new", "", false), EventClass::unknown);
  EXPECT_EQ(classify_event("B", "", "", false), EventClass::unknown);
}

TEST(Classify, KernelCategories) {
  const auto cat = [](std::string_view name, EventClass cls = EventClass::compute) {
    return std::string(name_of(kernel_category(cls, name)));
  };
  EXPECT_EQ(cat("nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NTT"), "gemm");
  EXPECT_EQ(cat("ampere_bf16_s16816gemm_bf16_128x64_ldg8_f2f_nn"), "gemm");
  EXPECT_EQ(cat("void cublasLt::splitKreduce_kernel<32, 16, int, float>"), "gemm");
  EXPECT_EQ(cat("cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x4_nn_align8"), "gemm");
  EXPECT_EQ(cat("cudnn_generated_fort_native_sdpa_sm90_flash_bprop_wgmma_f16_knob_3"), "attention");
  EXPECT_EQ(cat("void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128>>"), "attention");
  EXPECT_EQ(cat("fmha_cutlassF_bf16_aligned_64x64_rf_sm80"), "attention");  // before "cutlass"
  EXPECT_EQ(cat("void ovb::gpt::cuda::attn_bwd_dq_kernel<__nv_bfloat16, 4>"), "attention");
  EXPECT_EQ(cat("void at::native::multi_tensor_apply_kernel<FusedAdamMathFunctor<float>>"),
            "optimizer");
  EXPECT_EQ(cat("ovb::gpt::cuda::sumsq_kernel(float const*, long, int, float*)"), "optimizer");
  EXPECT_EQ(cat("void ovb::gpt::cuda::ln_forward_kernel<__nv_bfloat16, 8>"), "elementwise");
  EXPECT_EQ(cat("void at::native::vectorized_elementwise_kernel<4>"), "elementwise");
  EXPECT_EQ(cat("ncclDevKernel_AllReduce_Sum_bf16_RING_LL", EventClass::comm), "communication");
  EXPECT_EQ(cat("Memset (Device)", EventClass::memory), "memory");
}

TEST(Classify, CollectiveNames) {
  EXPECT_EQ(collective_from_kernel_name("ncclDevKernel_AllReduce_Sum_bf16_RING_LL"), "all_reduce");
  EXPECT_EQ(collective_from_kernel_name("ncclDevKernel_ReduceScatter_Sum_f32_RING_SIMPLE"),
            "reduce_scatter");
  EXPECT_EQ(collective_from_kernel_name("ncclKernel_AllGather_RING_LL_Sum_int8_t"), "all_gather");
  EXPECT_EQ(collective_from_kernel_name("ncclDevKernel_Broadcast_RING_LL"), "broadcast");
  EXPECT_EQ(collective_from_kernel_name("ncclDevKernel_SendRecv"), "send_recv");
  EXPECT_EQ(collective_from_kernel_name("ncclDevKernel_Reduce_Sum_f32_RING_LL"), "reduce");
  EXPECT_EQ(collective_from_kernel_name("ncclDevKernel_Generic"), "unknown");
  EXPECT_EQ(normalize_collective("allreduce"), "all_reduce");
  EXPECT_EQ(normalize_collective("_allgather_base"), "all_gather");
  EXPECT_EQ(normalize_collective("reduce_scatter_tensor"), "reduce_scatter");
  EXPECT_EQ(normalize_collective("all_gather_into_tensor"), "all_gather");
  EXPECT_EQ(normalize_collective("barrier"), "barrier");
}
