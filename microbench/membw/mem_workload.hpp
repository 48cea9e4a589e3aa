// One memory-bound kernel ready to time: its buffers on the backend (inputs from mem_input,
// outputs filled with values no kernel writes, so unwritten elements are caught), the call on the
// backend's implementation (host loops or CUDA kernels), and the check against the reference.
#pragma once

#include <cstdint>
#include <vector>

#include "membw/mem_kernels.hpp"
#include "membw/mem_layout.hpp"
#include "ovb/backend.hpp"

namespace ovb::mb {

class MemWorkload {
 public:
  // Throws UsageError when the backend lacks the dtype, n is not a whole number of rows, or the
  // buffers would exceed max_bytes.
  MemWorkload(Backend& backend, MemClass c, DType t, std::int64_t n, std::int64_t row,
              std::size_t max_bytes);
  void run(Stream& s);
  // After exactly one run() has completed: output elements that differ from the reference, in
  // every row up to 256 rows, else the first, the last and 254 spread rows. With inject, one
  // output element is corrupted first. Returns this rank's count.
  std::int64_t check(bool inject);
  // Bytes one call moves (mem_class_bytes).
  double bytes() const;
  const MemArgs& args() const { return args_; }

 private:
  Backend& backend_;
  bool cuda_;
  MemArgs args_;
  std::vector<MemBuf> layout_;
  std::vector<Buffer> bufs_;
};

}  // namespace ovb::mb
