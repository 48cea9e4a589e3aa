// What an event of a trace is, for the overlap analysis (docs/metrics.md, "Overlap in a
// trace"): GPU kernels are communication when their name starts with "nccl" (NCCL's kernels) or -
// in this suite's host traces - when they carry a "collective" argument, else compute; memcpy and
// memset activity is memory, except the copies copy_is_communication() names (copy-engine
// collectives, peer exchanges); user_annotation / gpu_user_annotation are ranges (NVTX and the
// suite's ScopedRanges). Everything else is either a known kind the analysis does not use
// (ignored: metadata, flows, CPU ops, runtime calls, ...) or an unknown kind (counted).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace ovb::trace {

enum class EventClass : std::uint8_t {
  compute,
  comm,
  memory,
  cpu_range,
  gpu_range,
  ignored,
  unknown
};

// ph and cat as written in the event (cat compared case-insensitively: older PyTorch wrote
// "Kernel", "Memcpy"); has_collective_arg: args has a "collective" key.
EventClass classify_event(std::string_view ph, std::string_view cat, std::string_view name,
                          bool has_collective_arg);

// The rule for a memcpy (never a memset): communication when
//   - it is peer-to-peer: CUPTI's copy kind PTOP (the name says "PtoP") or its source and
//     destination devices differ (Kineto's and this suite's args "fromDevice" / "toDevice");
//   - it was launched inside a collective: a "collective" argument (the suite's collective range,
//     joined by the CUDA tracer), a "range" argument naming an NCCL range (its NVTX ranges,
//     "ncclAllReduce", "ncclGroupEnd", ...) or a "range_domain" "NCCL" (the CUDA tracer: a range
//     in NCCL's NVTX domain encloses the launch);
//   - or it runs on a communication stream: one whose track the trace names as communication
//     (is_comm_track_name) or on which a communication kernel runs (resolved after the whole
//     trace is read, rank_trace.cpp).
// Otherwise memory.
struct CopyFacts {
  bool peer = false;            // PtoP, or fromDevice != toDevice
  bool in_collective = false;   // "collective" arg, "range" / "range_domain" "nccl..."
  bool on_comm_stream = false;  // decided once the trace is read
};
bool copy_is_communication(const CopyFacts& f);
bool is_memcpy_cat(std::string_view cat);              // gpu_memcpy / memcpy (any case)
bool is_peer_copy_name(std::string_view name);         // "Memcpy PtoP ..."
bool is_nccl_range_name(std::string_view range_name);  // "nccl..." (any case)
// A stream track named as communication: "comm..." (this suite's host tracks, "comm x / stream
// 1"), or containing "communication" or "nccl" (any case).
bool is_comm_track_name(std::string_view track_name);

// What a kernel (or memory operation) is for, from its name, for the kernel breakdown:
//   gemm:          nvjet, cutlass, gemm, cublas (cuBLAS/cuBLASLt and CUTLASS kernels)
//   attention:     cudnn, flash, sdpa, fmha, attn (cuDNN's fused attention, FlashAttention,
//                  this suite's attention kernels), checked before gemm
//   communication: comm events (NCCL kernels, collectives of host traces)
//   optimizer:     adam, sumsq (AdamW and the gradient norm)
//   memory:        memcpy / memset activity
//   elementwise:   every other kernel (layer norm, GELU, cross-entropy, embedding, ...)
// Names are compared case-insensitively. Only for compute, comm and memory classes.
enum class KernelCategory : std::uint8_t {
  gemm,
  attention,
  communication,
  optimizer,
  elementwise,
  memory
};
inline constexpr int kKernelCategories = 6;
std::string_view name_of(KernelCategory c);  // "gemm", "attention", ...
KernelCategory kernel_category(EventClass cls, std::string_view name);

// The collective of an NCCL kernel from its name ("ncclDevKernel_AllReduce_Sum_bf16_RING_LL" ->
// "all_reduce"; reduce_scatter, all_gather, broadcast, reduce, send_recv); "unknown" otherwise.
std::string collective_from_kernel_name(std::string_view name);

// A collective name as PyTorch writes it ("allreduce", "_allgather_base", "reduce_scatter_tensor",
// "all_gather_into_tensor") in this suite's spelling ("all_reduce", ...); other names unchanged.
std::string normalize_collective(std::string_view name);

}  // namespace ovb::trace
