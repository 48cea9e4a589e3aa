// A GEMM ready to time: A, B, C on the backend with exact inputs (values -1, 0, 1 from the element
// index), a plan (descriptors and algorithm made once), and a check of C against exact integer
// sums. Used by ovb-gemm and by ovb-overlap.
#pragma once

#include <cstdint>
#include <memory>

#include "harness/pattern.hpp"
#include "ovb/backend.hpp"
#include "ovb/gemm.hpp"

namespace ovb::mb {

class GemmWorkload {
 public:
  // Throws UsageError when the type is unsupported here, the library has no algorithm for the
  // shape, or A+B+C would exceed max_bytes.
  GemmWorkload(Backend& backend, Gemm& gemm, const GemmShape& shape, GemmType t, int max_algos,
               std::size_t max_bytes);
  void run(Stream& s) { plan_->run(s, a_.data(), b_.data(), c_.data()); }
  GemmPlan& plan() { return *plan_; }
  const GemmShape& shape() const { return shape_; }
  GemmType type() const { return type_; }
  // After run() has completed: entries of C that differ from the exact result (every entry up to
  // 4096 of them, else C[0,0], C[m-1,n-1] and 1024 spread ones); 16-bit outputs may differ by the
  // output's rounding. With inject, C[0,0] is corrupted first. Returns this rank's count.
  std::int64_t check(bool inject);

  // The exact value of C[i,j] for this shape (inputs are functions of the element index).
  static std::int64_t reference(const GemmShape& s, std::int64_t i, std::int64_t j);

 private:
  Backend& backend_;
  GemmShape shape_;
  GemmType type_;
  std::unique_ptr<GemmPlan> plan_;
  Buffer a_, b_, c_;
};

}  // namespace ovb::mb
