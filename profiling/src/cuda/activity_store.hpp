// What the CUDA tracer keeps of the CUPTI records and of the ranges it saw: compact copies, taken
// as each activity buffer completes (records outside the capture window are dropped then), and
// turned into trace events only when the trace is written (cuda_export.cpp).
// Times are CUPTI timestamps (ns); names are interned (a kernel name is stored once).
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <unordered_map>
#include <vector>

#include "ovb/annotate.hpp"

namespace ovb::trace::cuda {

struct KernelRec {
  std::int64_t start, end;
  std::uint32_t device, stream, correlation, name;
  std::int32_t grid[3], block[3];
};

struct CopyRec {  // memcpy (MEMCPY, or MEMCPY2 for peer copies) or memset
  std::int64_t start, end;
  std::uint64_t bytes;
  std::uint32_t device, stream, correlation;
  std::uint8_t copy_kind;  // CUpti_ActivityMemcpyKind (memcpy only)
  bool memset;
  std::int64_t src_device = -1, dst_device = -1;  // peer copies (MEMCPY2): devices copied between
};

struct SyncRec {
  std::int64_t start, end;
  std::uint32_t type, stream, correlation;
};

struct ApiRec {
  std::int64_t start, end;
  std::uint32_t thread, correlation, cbid;
  bool driver;
};

struct MarkerRec {  // an NVTX range the tracer's own hooks did not see
  std::int64_t start, end;
  std::uint32_t thread, name, domain;
};

// A range seen by the tracer's hooks (ScopedRange in linked mode, NVTX callbacks when injected).
// Its id is the external correlation id pushed while it was open.
struct RangeRec {
  RangeInfo info;
  std::string domain;
  std::int64_t begin = 0, end = -1;  // end < 0: still open
  std::uint64_t parent = 0;          // enclosing range on the same thread, 0 for none
  std::uint64_t thread = 0;          // OS thread id
};

struct ActivityStore {
  std::vector<KernelRec> kernels;
  std::vector<CopyRec> copies;
  std::vector<SyncRec> syncs;
  std::vector<ApiRec> apis;
  std::vector<MarkerRec> markers;
  std::unordered_map<std::uint64_t, RangeRec> ranges;                // by id
  std::unordered_map<std::uint32_t, std::uint64_t> range_of_launch;  // correlation -> range id
  std::unordered_map<std::uint64_t, MarkerRec> open_markers;         // CUPTI marker id -> start
  std::uint64_t dropped = 0;         // records CUPTI could not store (buffers full)
  std::uint64_t outside_window = 0;  // records dropped because they fell outside every window

  // Interned strings: index 0 is "".
  std::uint32_t intern(const std::string& s);
  const std::string& str(std::uint32_t i) const { return strings[i]; }
  std::deque<std::string> strings{std::string()};
  std::unordered_map<std::string, std::uint32_t> string_ids;
  std::unordered_map<const void*, std::uint32_t> kernel_name_ids;  // CUPTI's shared name pointers
};

}  // namespace ovb::trace::cuda
