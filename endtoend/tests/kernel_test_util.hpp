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

namespace ovb::gpt::testing {

inline std::vector<float> random_vec(std::size_t n, unsigned seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, scale);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

// Checks grad against central differences of loss() with respect to x, on up to `samples`
// evenly spread elements. loss() must read x.
inline void check_gradient(std::vector<float>& x, const std::vector<float>& grad,
                           const std::function<double()>& loss, const char* what, double eps = 1e-2,
                           double rtol = 5e-3, double atol = 5e-4, std::size_t samples = 40) {
  ASSERT_EQ(x.size(), grad.size()) << what;
  const std::size_t step = std::max<std::size_t>(1, x.size() / samples);
  for (std::size_t i = 0; i < x.size(); i += step) {
    const float saved = x[i];
    x[i] = saved + static_cast<float>(eps);
    const double lp = loss();
    x[i] = saved - static_cast<float>(eps);
    const double lm = loss();
    x[i] = saved;
    const double fd = (lp - lm) / (2 * eps);
    EXPECT_NEAR(grad[i], fd, atol + rtol * std::max(std::abs(fd), std::abs(double(grad[i]))))
        << what << " element " << i;
  }
}

inline double dot(const std::vector<float>& a, const std::vector<float>& b) {
  double s = 0;
  for (std::size_t i = 0; i < a.size(); ++i) s += double(a[i]) * b[i];
  return s;
}

}  // namespace ovb::gpt::testing
