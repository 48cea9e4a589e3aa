// The blocking_wait scenario of ovb-overlap (host backend only): what a blocking collective costs
// right after compute when the ranks share cores. Every rank runs the point's GEMM (compute of
// duration C) and then the point's collective on the same stream, and waits for it, as a trainer
// does without overlap. A partner rank that is still computing, or not scheduled (more ranks than
// cores), makes everyone wait for it; ovb-collective, whose samples start from a barrier with
// every rank already in the collective, never sees that wait. Per sample, each after a barrier:
// t_c (the GEMM alone: the mean over ranks of each rank's own time, the compute time the model
// charges a rank), t_m and t_s (the collective alone; the GEMM, then the collective, waited for:
// each the max over ranks); the wait is
//     wait = t_s - t_c - t_m,
// what the sequence costs beyond its two parts alone: the slowest partner's lateness
// (metrics::blocking_wait; ovb-model calibrate reads it, per GEMM shape, into
// Machine::blocking_wait). On a GPU ranks do not share a core (their wait is only the ranks' skew),
// so the CUDA backend refuses the scenario. Example:
//   mpirun -np 4 ovb-overlap --backend host --scenarios blocking_wait --colls all_reduce
#pragma once

#include <benchmark/benchmark.h>

#include "harness/env.hpp"
#include "overlap/overlap_bench.hpp"

namespace ovb::mb {

// Why a sequential scenario cannot run on this backend ("" when it can).
std::string sequential_problem(const Backend& b, const OverlapScenario& s);

// Counters: t_compute_mean_us (t_c), t_compute_us (the GEMM alone, max over ranks), t_comm_us,
// t_sequence_us (mean t_s, equal to real_time), wait_us (from the means of t_s, t_c, t_m),
// wait_p10_us, wait_p50_us, wait_p90_us (over every sample's own t_s - t_c - t_m),
// injected_delay_us, bytes, ranks, m, n, k, wrong; label as ovb-overlap's (order=sequence).
// p.inject_delay_us (tests): the group's last rank sleeps that long between its GEMM and its
// collective in t_s, so the wait must be at least that delay less t_m.
void run_wait_point(benchmark::State& state, BenchEnv& env, const OverlapPoint& p);

}  // namespace ovb::mb
