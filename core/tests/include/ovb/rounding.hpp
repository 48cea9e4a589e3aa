// Rounding-error bounds of fp32 arithmetic, for tests that compare two computations of the same
// quantity done in different orders (another BLAS kernel, another process grid, micro-batches)
// or against a double-precision reference. Every tolerance built from these functions is a
// bound that holds for any correct summation order, so a test that fails has found a bug, not a
// kernel that adds in another order.
//
// Source: N. J. Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed. (SIAM 2002):
// u = 2^-24 is the unit roundoff of IEEE binary32 with round to nearest (Sec. 2.1);
// gamma_n = n u / (1 - n u) (Lemma 3.1); a sum of n terms, in any order and with any
// bracketing, is within gamma_{n-1} sum |x_i| of the exact sum (Sec. 4.2, Eq. (4.4)); an inner
// product of length n, fused or not, within gamma_n sum |x_i y_i| (Sec. 3.1, Eq. (3.5)).
#pragma once

#include <cmath>
#include <cstdint>
#include <stdexcept>

namespace ovb::testing {

// The unit roundoff of fp32 (round to nearest even).
inline constexpr double kFp32Unit = 0x1p-24;

// gamma_n for fp32: the relative bound on n successive roundings. Throws when n u >= 1 (no
// bound; the test's sizes are wrong).
inline double fp32_gamma(std::int64_t n) {
  const double nu = static_cast<double>(n) * kFp32Unit;
  if (n < 0 || nu >= 1) throw std::invalid_argument("fp32_gamma: n u >= 1, no rounding bound");
  return nu / (1 - nu);
}

// Bound on |computed - exact| for an fp32 inner product (or sum of products) of length n whose
// terms have absolute sum `magnitude` (sum |x_i y_i|), in any order.
inline double fp32_dot_bound(std::int64_t n, double magnitude) {
  return fp32_gamma(n) * magnitude;
}

// Bound on the difference of two fp32 evaluations of the same sum of products, each in its own
// order: both are within fp32_dot_bound of the exact value.
inline double fp32_two_orders_bound(std::int64_t n, double magnitude) {
  return 2 * fp32_dot_bound(n, magnitude);
}

// The spacing of fp32 values at |x| (its last place): the rounding grid of a result stored as
// fp32, such as a loss summed in fp32.
inline double fp32_last_place(double x) {
  const float f = static_cast<float>(std::abs(x));
  return static_cast<double>(std::nextafter(f, 2 * f + 1)) - f;
}

}  // namespace ovb::testing
