// Every metric of docs/metrics.md, defined once. Units are in the names: seconds (_s),
// bytes, GB/s (1e9 bytes/s), TFLOP/s (1e12 FLOP/s).
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

#include "ovb/backend.hpp"

namespace ovb::metrics {

// ---- Collective bandwidth (nccl-tests conventions) ----

// S: bytes of the full buffer. All-reduce: the buffer each rank holds (count_per_rank elements);
// reduce-scatter and all-gather: the total buffer, count_per_rank * n elements, where count_per_rank
// is the shard each rank receives (reduce-scatter) or contributes (all-gather).
double collective_bytes(CollKind k, std::size_t count_per_rank, int n, std::size_t elem_size);

// busbw factor F: 2(n-1)/n for all-reduce, (n-1)/n for reduce-scatter and all-gather.
double bus_factor(CollKind k, int n);

// algbw = S / t, in GB/s.
double algbw_gbps(double bytes, double seconds);

// busbw = algbw * F, in GB/s.
double busbw_gbps(CollKind k, int n, double bytes, double seconds);

// ---- GEMM throughput ----

// FLOP = 2*M*N*K.
double gemm_flop(double m, double n, double k);

// TFLOP/s = FLOP / t / 1e12.
double tflops(double flop, double seconds);

// Dense peak TFLOP/s per device for a precision ("bf16", "fp16", "tf32", "fp32", "fp8"), from the
// one table in metrics.cpp: A100 bf16 312, H100 SXM bf16 989 (fp8 1979), H200 as H100, MI250X 191.5
// per GCD (383 per module; a GCD is one device). Unknown device or precision: nullopt ("peak unknown").
std::optional<double> peak_tflops(std::string_view device_name, std::string_view precision);

// 100 * achieved / peak.
double percent_of_peak(double achieved_tflops, double peak);

// ---- Memory-bound kernels (microbench ovb-membw) ----

// Datasheet memory bandwidth of one device in GB/s, from the one table in metrics.cpp: H100 SXM
// 3350, H100 PCIe 2000, H200 4800, GH200 4000, A100 80GB 2039, A100 40GB 1555, MI250X 1638 per
// GCD. Unknown device (e.g. a CPU): nullopt. A kernel's achieved bandwidth is
// algbw_gbps(bytes moved, t) (ovb/mem_class.hpp); its efficiency is that over this peak.
std::optional<double> peak_memory_gbps(std::string_view device_name);

// ---- Overlap of one compute op and one collective (microbench) ----

struct OverlapTimes {
  double t_compute;        // t_c: compute alone
  double t_comm;           // t_m: communication alone
  double t_overlap;        // t_o: both concurrently, start of the first to end of the last
  double t_compute_under;  // t_c': compute's own duration under overlap
  double t_comm_under;     // t_m': communication's own duration under overlap
};

struct OverlapMetrics {
  double ideal;               // max(t_c, t_m)
  double serial;              // t_c + t_m
  double speedup_vs_serial;   // serial / t_o
  double overlap_efficiency;  // (serial - t_o) / min(t_c, t_m)
  double fraction_of_ideal;   // (serial/t_o - 1) / (serial/ideal - 1); NaN when serial == ideal
  double compute_slowdown;    // t_c'/t_c - 1
  double comm_slowdown;       // t_m'/t_m - 1
  double exposed_comm;        // t_o - t_c': the span not covered by the compute
};

OverlapMetrics overlap_metrics(const OverlapTimes& t);

// The ovb-overlap scenario that measures one GEMM against one collective
// (microbench/overlap/gemm_coll.cpp): ovb-overlap's default, the one the model's interference
// factors are calibrated from, and the scenario of a result row whose label names none (files
// written before the label carried "scenario=").
inline constexpr const char* kDefaultOverlapScenario = "gemm_coll";
// The ovb-overlap scenario that measures blocking_wait() (microbench/overlap/blocking_wait.hpp),
// which ovb-model calibrate reads into Machine::blocking_wait.
inline constexpr const char* kBlockingWaitScenario = "blocking_wait";
// The ovb-overlap scenario of a GEMM and its collective in dependent chunks
// (microbench/overlap/decomposition.cpp), whose chunk GEMMs ovb-model gemm --measured reads.
inline constexpr const char* kDecompositionScenario = "decomposition";

// Wait of a blocking collective after compute: t_s - t_c - t_m, with t_s the GEMM then the
// collective waited for on one stream and t_m the collective alone (each the max over ranks), t_c
// the GEMM alone (the mean over ranks of each rank's own time); what a rank waits beyond its own
// compute and the collective itself for partners still computing or not scheduled.
double blocking_wait(double t_sequence, double t_compute, double t_comm);

// Share of the possible speedup achieved: (serial/t_o - 1) / (serial/ideal - 1); NaN when
// serial == ideal.
double fraction_of_ideal(double serial, double ideal, double t_overlap);

// ---- A dependent pipeline: a GEMM and its collective cut into chunks (microbench) ----

// Decomposition loss: t_c,chunks - t_c,whole, the sum of the chunk GEMMs run alone (back to back)
// minus the unchunked GEMM alone; what cutting the GEMM costs before any overlap.
double decomposition_loss(double t_compute_chunks, double t_compute_whole);

// Fraction of the ideal of a pipeline, against its unchunked baseline (GEMM, then collective):
// fraction_of_ideal(t_cw + t_mw, max(t_cw, t_mw), t_o) with t_cw, t_mw the unchunked GEMM and
// collective alone; decomposition loss and interference both count against it.
double pipeline_fraction_of_ideal(double t_compute_whole, double t_comm_whole, double t_overlap);

// ---- Training throughput ----

// Model FLOP per iteration of a GPT (no recomputation, causal attention counted as half):
// F = 72*B*s*L*h^2 * (1 + s/(12h) + V/(12*L*h)), B = global batch in sequences.
// It is transformer_model_flop with 12h^2 weights per block.
double gpt_model_flop(double batch, double seq, double layers, double hidden, double vocab);

// Model FLOP per iteration of any decoder of this form (GPT, Llama): 2 FLOP per weight per token
// forward, 4 backward, on the block linears and the LM head, plus the attention core (QK^T and
// AV over all query heads, causal half counted; grouped K/V heads change no FLOP there):
// F = 6*B*s*(L*P + h*V) + 6*B*s^2*L*h, P = weight elements of one block's linear layers.
double transformer_model_flop(double batch, double seq, double layers, double hidden, double vocab,
                              double block_linear_params);

// With full activation recomputation one more forward is executed: hardware FLOP = F * 4/3.
double gpt_hardware_flop(double model_flop, bool full_recompute);

// With selective recomputation (Korthikanti et al. 2022) only the attention core (QK^T, softmax,
// AV) is recomputed: hardware FLOP = F + 2*B*s^2*L*h (the forward attention-core term of F, causal
// half counted, as in gpt_model_flop).
double gpt_selective_recompute_flop(double batch, double seq, double layers, double hidden);

// The FLOP count Megatron-LM's papers publish (Narayanan et al., SC21, arXiv 2104.04473, Section
// 5.1, Eq. (3)), for comparing with their TFLOP/s: F = 96*B*s*L*h^2 * (1 + s/(6h) + V/(16*L*h)).
// It counts full recomputation, the full s x s attention products (not their causal half, as
// gpt_model_flop) and the LM head three times (it is not recomputed), so it differs from
// gpt_hardware_flop(gpt_model_flop(...), true) by the attention and head terms.
double narayanan_flop(double batch, double seq, double layers, double hidden, double vocab);

// TFLOP/s per GPU = F / t / n_gpus / 1e12.
double tflops_per_gpu(double flop, double seconds, int n_gpus);

// MFU = achieved TFLOP/s per GPU / peak (a fraction, 0..1).
double mfu(double tflops_per_gpu, double peak);

// Training throughput: tokens/s = B * s / t (global batch B sequences of s tokens per iteration).
double tokens_per_s(double batch, double seq, double seconds);

}  // namespace ovb::metrics
