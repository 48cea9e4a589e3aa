// One ovb-overlap benchmark point: a scenario's compute work (a GEMM) on a compute stream and its
// communication (a collective) on a communication stream, each alone and then launched together (in
// a given order, with given stream priorities and NCCL CTA settings). Every sample measures, per
// rank: t_c (GEMM alone), t_m (collective alone), t_o (both: first start to last end), t_c' and
// t_m' (each one's own span under overlap); each is the max over ranks, and the metrics of
// docs/metrics.md come from their means through ovb::metrics::overlap_metrics.
#pragma once

#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "harness/env.hpp"
#include "harness/gemm_cases.hpp"
#include "overlap/scenario.hpp"
#include "overlap/transport.hpp"  // Exchange

namespace ovb::mb {

enum class PrioMode { equal, comm_high, compute_high };
std::string_view name_of(PrioMode p);

// The dimension of C a dependent scenario cuts into chunks.
enum class SplitAxis { m, n };
std::string_view name_of(SplitAxis a);

struct OverlapPoint {
  const OverlapScenario* scenario = nullptr;
  GemmCase gcase;
  GemmType gemm_type = GemmType::bf16;
  CollKind kind = CollKind::all_reduce;
  DType coll_type = DType::bf16;  // the GEMM's output type
  GroupSpec group;
  std::size_t bytes = 0;
  CommConfig cfg;
  PrioMode prio = PrioMode::equal;
  bool comm_first = true;  // launch order on the host
  std::string cdmc;        // CUDA_DEVICE_MAX_CONNECTIONS of this process: "default" or N
  std::string label;       // extra label text (GPT configuration)
  int chunks = 1;          // dependent scenarios: pieces of the GEMM and of its collective
  SplitAxis split = SplitAxis::m;
  int gemm_sms = -1;  // the GEMM's SM budget (cuBLASLt SM count target); -1: the device's
  Exchange exchange = Exchange::send_recv;  // ring scenarios only
  bool require_transport = false;  // a requested transport not observed is an error, not a warning
  double inject_delay_us = 0;      // sequential scenarios, tests only: blocking_wait.hpp
};

// The GEMM SM budget as Gemm::plan takes it (0: the device's count).
inline int sm_target(const OverlapPoint& p) {
  return p.gemm_sms > 0 ? p.gemm_sms : 0;
}

// "overlap/all_reduce/world/16777216/bf16/4096x4096x4096/nn/equal/comm_first[/cta=...]"; other
// scenarios than kDefaultScenario insert theirs after "overlap/"; dependent ones end in
// ".../equal/pipeline/chunks=4/split=m" (no launch order: the pipeline fixes it); a GEMM SM
// budget adds "/gemm_sms=N", a ring scenario's copy-engine exchange "/exchange=copy_engine"; a
// sequential one ends in ".../equal/sequence".
std::string overlap_benchmark_name(const OverlapPoint& p);

// Label: "coll=all_reduce prio=equal order=comm_first max_ctas=default cdmc=default group=world
// dtype=bf16 min_ctas=default cta_policy=default scenario=gemm_coll gemm_sms=default
// transport=mpi transport_requested=mpi" (ring scenarios add exchange=; then the GPT label, if
// any); transport: transport.hpp.
// The label of a point's result (the format below), with the observed and requested transports.
std::string overlap_label(const OverlapPoint& p, const std::string& transport,
                          const std::string& requested);

// Counters: t_compute_us, t_comm_us, t_overlap_us, t_compute_under_us, t_comm_under_us,
// ideal_us, serial_us, overlap_efficiency, speedup_vs_serial, fraction_of_ideal (absent when
// serial == ideal), compute_slowdown, comm_slowdown, exposed_comm_us, bytes, ranks, m, n, k,
// wrong; dependent scenarios add chunks, t_compute_whole_us, t_comm_whole_us,
// decomposition_loss_us and pipeline_fraction_of_ideal (absent when undefined). Times of the
// dependent form: t_c and t_m are all chunks' GEMMs (collectives) back to back, alone.
void run_overlap_point(benchmark::State& state, BenchEnv& env, const OverlapPoint& p);

// The end of every scenario's point: the counters all scenarios share (bytes, ranks, m, n, k,
// wrong) and the label.
void finish_point(benchmark::State& state, const OverlapPoint& p, int ranks, std::int64_t wrong,
                  const std::string& transport, const std::string& requested);

// The start of every scenario's point: iterations agreed, the group usable (else skipped with its
// reason), the point's state S(env, comm, p) prepared once under the point's name (nullptr when
// skipped).
template <class S>
S* prepare_point(benchmark::State& state, BenchEnv& env, const OverlapPoint& p) {
  check_iterations_agree(state);
  if (const std::string why = env.group_problem(p.group); !why.empty()) {
    state.SkipWithError(why.c_str());
    return nullptr;
  }
  Communicator& comm = env.comm(p.group, p.cfg);
  return prepare_or_skip<S>(state, env, overlap_benchmark_name(p),
                            [&] { return std::make_unique<S>(env, comm, p); });
}

}  // namespace ovb::mb
