// Event classification for the overlap analysis (see classify.hpp).
#include "classify.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <initializer_list>

namespace ovb::trace {

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

bool contains(std::string_view hay, std::string_view needle) {
  return hay.find(needle) != std::string_view::npos;
}

// Categories of Kineto / PyTorch profiler traces that carry no GPU activity of their own.
constexpr std::array<std::string_view, 17> kIgnoredCats = {"cpu_op",
                                                           "operator",
                                                           "python_function",
                                                           "python",
                                                           "cuda_runtime",
                                                           "cuda_driver",
                                                           "runtime",
                                                           "driver",
                                                           "cuda_sync",
                                                           "ac2g",
                                                           "trace",
                                                           "overhead",
                                                           "fwdbwd",
                                                           "memory",
                                                           "[memory]",
                                                           "cpu_instant_event",
                                                           "cuda_profiler_range"};

// Chrome trace phases other than complete events and metadata: flows, instants, counters,
// async and object events - known, not used.
constexpr std::string_view kIgnoredPhases = "MiIstfCbenONDPRc";

}  // namespace

EventClass classify_event(std::string_view ph, std::string_view cat, std::string_view name,
                          bool has_collective_arg) {
  if (ph != "X") {
    if (ph.size() == 1 && contains(kIgnoredPhases, ph)) return EventClass::ignored;
    return EventClass::unknown;  // e.g. B/E pairs: not produced by Kineto nor by this suite
  }
  const std::string c = lower(cat);
  if (c == "kernel") {
    if (has_collective_arg || lower(name.substr(0, 4)) == "nccl") return EventClass::comm;
    return EventClass::compute;
  }
  if (c == "gpu_memcpy" || c == "memcpy" || c == "gpu_memset" || c == "memset")
    return EventClass::memory;
  if (c == "user_annotation") return EventClass::cpu_range;
  if (c == "gpu_user_annotation") return EventClass::gpu_range;
  if (std::find(kIgnoredCats.begin(), kIgnoredCats.end(), c) != kIgnoredCats.end())
    return EventClass::ignored;
  return EventClass::unknown;
}

bool copy_is_communication(const CopyFacts& f) {
  return f.peer || f.in_collective || f.on_comm_stream;
}

bool is_memcpy_cat(std::string_view cat) {
  const std::string c = lower(cat);
  return c == "gpu_memcpy" || c == "memcpy";
}

bool is_peer_copy_name(std::string_view name) { return contains(lower(name), "ptop"); }

bool is_nccl_range_name(std::string_view range_name) {
  return lower(range_name.substr(0, 4)) == "nccl";
}

bool is_comm_track_name(std::string_view track_name) {
  const std::string n = lower(track_name);
  return n.rfind("comm", 0) == 0 || contains(n, "communication") || contains(n, "nccl");
}

std::string_view name_of(KernelCategory c) {
  switch (c) {
    case KernelCategory::gemm: return "gemm";
    case KernelCategory::attention: return "attention";
    case KernelCategory::communication: return "communication";
    case KernelCategory::optimizer: return "optimizer";
    case KernelCategory::elementwise: return "elementwise";
    case KernelCategory::memory: return "memory";
  }
  return "?";
}

KernelCategory kernel_category(EventClass cls, std::string_view name) {
  if (cls == EventClass::comm) return KernelCategory::communication;
  if (cls == EventClass::memory) return KernelCategory::memory;
  const std::string n = lower(name);
  auto any = [&](std::initializer_list<std::string_view> keys) {
    return std::any_of(keys.begin(), keys.end(), [&](std::string_view k) { return contains(n, k); });
  };
  // Attention first: cuDNN's attention kernels may carry GEMM-like words in their names.
  if (any({"cudnn", "flash", "sdpa", "fmha", "attn"})) return KernelCategory::attention;
  if (any({"nvjet", "cutlass", "gemm", "cublas"})) return KernelCategory::gemm;
  if (any({"adam", "sumsq"})) return KernelCategory::optimizer;
  return KernelCategory::elementwise;
}

std::string collective_from_kernel_name(std::string_view name) {
  // Order matters: "ReduceScatter" contains "Reduce", "AllReduce" contains "Reduce".
  if (contains(name, "AllReduce")) return "all_reduce";
  if (contains(name, "ReduceScatter")) return "reduce_scatter";
  if (contains(name, "AllGather")) return "all_gather";
  if (contains(name, "Broadcast")) return "broadcast";
  if (contains(name, "SendRecv") || contains(name, "Send") || contains(name, "Recv"))
    return "send_recv";
  if (contains(name, "Reduce")) return "reduce";
  return "unknown";
}

std::string normalize_collective(std::string_view name) {
  const std::string n = lower(name);
  if (contains(n, "allreduce") || contains(n, "all_reduce")) return "all_reduce";
  if (contains(n, "reduce_scatter") || contains(n, "reducescatter")) return "reduce_scatter";
  if (contains(n, "allgather") || contains(n, "all_gather")) return "all_gather";
  if (contains(n, "broadcast")) return "broadcast";
  if (contains(n, "alltoall") || contains(n, "all_to_all")) return "all_to_all";
  return std::string(name);
}

}  // namespace ovb::trace
