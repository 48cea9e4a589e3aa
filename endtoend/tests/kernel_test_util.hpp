// Helpers for kernel tests: seeded random vectors, a finite-difference gradient check, and a
// host backend + host kernels for tests that run without a GPU.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>
#include <vector>

#include "kernels/kernels.hpp"
#include "ovb/backend.hpp"
#include "ovb/finite_difference.hpp"
#include "ovb/rounding.hpp"

namespace ovb::gpt::testing {

inline std::vector<float> random_vec(std::size_t n, unsigned seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, scale);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

// Checks grad against central differences of loss() with respect to x, on up to `samples`
// evenly spread elements, within the difference's own error bound (ovb/finite_difference.hpp:
// truncation from a second step, loss()'s rounding noise from nearby evaluations, step eps) plus
// the gradient's own fp32 rounding, gamma_n |grad| with n = x.size() (no reduction of the kernel's
// backward is longer than its input). loss() must read x; `quantum` is the grid its value is
// rounded to at the end (fp32_last_place of an fp32 loss; 0 for a sum in double). A wrong backward
// (a missing factor, a dropped term, a transposed index) moves an element by a fraction of itself;
// so that the check keeps that power, at least half of the sampled elements must have a bound below
// half their gradient.
inline void check_gradient(std::vector<float>& x, const std::vector<float>& grad,
                           const std::function<double()>& loss, const char* what, double eps = 1e-2,
                           std::size_t samples = 40, double quantum = 0) {
  ASSERT_EQ(x.size(), grad.size()) << what;
  const std::size_t step = std::max<std::size_t>(1, x.size() / samples);
  std::size_t sampled = 0, sharp = 0;
  for (std::size_t i = 0; i < x.size(); i += step) {
    const float saved = x[i];
    const auto at = [&](double d, double* applied) {
      x[i] = static_cast<float>(saved + d);
      *applied = static_cast<double>(x[i]) - saved;
      return loss();
    };
    const ovb::testing::FiniteDifference fd =
        ovb::testing::central_difference(at, eps, eps / 2, quantum);
    x[i] = saved;
    const double g = grad[i];
    const double tol = fd.tolerance() + ovb::testing::fp32_dot_bound(
                                            static_cast<std::int64_t>(x.size()), std::abs(g));
    ++sampled;
    sharp += tol < 0.5 * std::abs(g) ? 1 : 0;
    EXPECT_NEAR(g, fd.value, tol) << what << " element " << i << ": truncation " << fd.truncation
                                  << ", noise " << fd.noise;
  }
  EXPECT_GE(2 * sharp, sampled) << what << ": most sampled gradients are within their bound of 0";
}

inline double dot(const std::vector<float>& a, const std::vector<float>& b) {
  double s = 0;
  for (std::size_t i = 0; i < a.size(); ++i) s += double(a[i]) * b[i];
  return s;
}

}  // namespace ovb::gpt::testing
