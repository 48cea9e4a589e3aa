// Test helpers: a synthetic machine with round numbers (so expected values can be worked out by
// hand), small GPT shapes and the comparison of two timelines term by term.
#pragma once

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "ovb/gpt_plan.hpp"
#include "ovb/model/machine.hpp"
#include "ovb/model/timeline.hpp"

namespace ovb::model::test {

// 4 GPUs per node; intra 2 ranks 100 GB/s, 4 ranks 200 GB/s; node 50 GB/s; alpha 2 us per GPU;
// peak 100 TFLOP/s at efficiency 0.5; memory 1000 GB/s at efficiency 1; no kernel overhead and
// no interference unless a test sets them.
inline nlohmann::json synthetic_machine_json() {
  return nlohmann::json::parse(R"({
    "name": "synthetic", "gpus_per_node": 4,
    "gpu": {"name": "test device", "peak_tflops": 100, "memory_bytes": 1e12,
            "memory_bandwidth_gbps": 1000, "memory_efficiency": 1, "gemm_efficiency": 0.5,
            "attention_efficiency": 1, "kernel_overhead_us": 0},
    "comm": {"default": {"alpha_us_per_gpu": 2,
                         "intra": [{"p": 2, "gbps": 100}, {"p": 4, "gbps": 200}],
                         "inter_node_gbps": 50}},
    "interference": {"compute_slowdown": 0, "comm_slowdown": 0}})");
}

inline Machine synthetic_machine() {
  return machine_from_json(synthetic_machine_json(), "synthetic");
}

// 4 layers, hidden 64, 4 heads, seq 16, vocab 128.
inline GptShape small_gpt(std::int64_t layers = 4) {
  GptShape m;
  m.layers = layers;
  m.hidden = 64;
  m.heads = 4;
  m.seq = 16;
  m.vocab = 128;
  return m;
}

// small_gpt as Llama: GQA with 2 K/V heads, SwiGLU width 176.
inline GptShape small_llama() {
  GptShape m = small_gpt();
  m.arch = Arch::llama;
  m.kv_heads = 2;
  m.ffn_hidden = 176;
  return m;
}

inline GptPlanOptions plan_on(const char* grid, std::int64_t batch) {
  GptPlanOptions o;
  o.grid = GridShape::parse(grid);
  o.batch = batch;
  return o;
}

// Every term of two timelines equal, to the bit.
inline void expect_same_timeline(const Timeline& a, const Timeline& b, const std::string& where) {
  EXPECT_EQ(a.iteration_us, b.iteration_us) << where;
  EXPECT_EQ(a.compute_us, b.compute_us) << where;
  EXPECT_EQ(a.interference_us, b.interference_us) << where;
  EXPECT_EQ(a.comm_us, b.comm_us) << where;
  EXPECT_EQ(a.exposed_us, b.exposed_us) << where;
  EXPECT_EQ(a.count, b.count) << where;
  EXPECT_EQ(a.blocking_waits, b.blocking_waits) << where;
  EXPECT_EQ(a.blocking_wait_us, b.blocking_wait_us) << where;
}

}  // namespace ovb::model::test
