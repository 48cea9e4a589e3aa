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

// The exact inputs: element idx of A and of B in storage order, -1, 0 or 1.
float gemm_a_value(std::uint64_t idx);
float gemm_b_value(std::uint64_t idx);

// Relative tolerance of C against the exact integer sums: 0 for fp32 outputs (integer sums are
// exact), two units in the last place of 16-bit outputs (rounding of the result and of split-K
// partial sums).
double gemm_output_tolerance(Storage out);

class GemmWorkload {
 public:
  // Throws UsageError when the type is unsupported here, the library has no algorithm for the
  // shape, or A+B+C would exceed max_bytes. sm_target: the GEMM's SM budget (Gemm::plan).
  GemmWorkload(Backend& backend, Gemm& gemm, const GemmShape& shape, GemmType t, int max_algos,
               std::size_t max_bytes, int sm_target = 0);
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
