// A GEMM ready to time: A, B, C on the backend with inputs computed from the element index, a plan
// (descriptors and algorithm made once), and a check of C against a reference computed on the
// host. Used by ovb-gemm and by ovb-overlap.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

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

// The values a GEMM is timed on. exact: -1, 0, 1 (gemm_a_value), every partial sum exact, C
// checked to the output's rounding. random: integers in [-127, 127] / 64 (e4m3: [-7, 7] / 4),
// from a hash of the element index, so sign, exponent and seven significant bits vary as with
// trained weights and activations; under a power cap a GEMM's clock, and so its rate, depends on
// how many bits its data switch, and -1/0/1 switch few. C is checked to the bound of fp32
// accumulation.
enum class GemmInputs { exact, random };
// The names, in the enum's order: the one list name_of, parse_gemm_inputs and --inputs use.
inline const std::vector<std::string> kGemmInputNames = {"exact", "random"};
std::string_view name_of(GemmInputs i);
GemmInputs parse_gemm_inputs(std::string_view s);  // throws UsageError naming the choices
// Element idx of an input stored as s, for `seed` 11 (A) or 23 (B): exact in every storage.
float gemm_random_value(std::uint64_t idx, std::uint64_t seed, Storage s);

// C[i,j] from the inputs, in double (exact), and the sum of |a b| over k that bounds the
// rounding of fp32 accumulation in any order: |fl(C) - C| <= gamma(k) * abs_sum.
struct GemmReference {
  double value = 0, abs_sum = 0;
};
GemmReference gemm_reference(const GemmShape& s, std::int64_t i, std::int64_t j, GemmInputs in,
                             Storage storage);
// The tolerance of a computed C[i,j]: fp32 accumulation of k products (gamma(k) = k u / (1 - k u),
// u = 2^-24; 0 for exact inputs, whose partial sums are integers) and the output's rounding.
double gemm_check_tolerance(const GemmReference& r, std::int64_t k, GemmInputs in, Storage out);

class GemmWorkload {
 public:
  // Throws UsageError when the type is unsupported here, the library has no algorithm for the
  // shape, or A+B+C would exceed max_bytes. sm_target: the GEMM's SM budget (Gemm::plan).
  GemmWorkload(Backend& backend, Gemm& gemm, const GemmShape& shape, GemmType t, int max_algos,
               std::size_t max_bytes, int sm_target = 0, GemmInputs inputs = GemmInputs::exact);
  void run(Stream& s) { plan_->run(s, a_.data(), b_.data(), c_.data()); }
  GemmPlan& plan() { return *plan_; }
  const GemmShape& shape() const { return shape_; }
  GemmType type() const { return type_; }
  GemmInputs inputs() const { return inputs_; }
  // After run() has completed: entries of C that differ from the reference by more than
  // gemm_check_tolerance (every entry up to 4096 of them, else C[0,0], C[m-1,n-1] and 1024 spread
  // ones). With inject, C[0,0] is corrupted first. Returns this rank's count.
  std::int64_t check(bool inject);

  // The exact value of C[i,j] for this shape (inputs are functions of the element index).
  static std::int64_t reference(const GemmShape& s, std::int64_t i, std::int64_t j);

 private:
  Backend& backend_;
  GemmShape shape_;
  GemmType type_;
  GemmInputs inputs_;
  std::unique_ptr<GemmPlan> plan_;
  Buffer a_, b_, c_;
};

}  // namespace ovb::mb
