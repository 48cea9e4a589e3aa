// A central finite difference of a function computed in floating point, with an error bound made
// of the two parts of the arithmetic - truncation (estimated from a second step size) and the
// noise of the computed function (estimated from nearby evaluations) - so that a gradient check
// holds on any BLAS kernel and still sees a wrong gradient.
//
//   fd(e) = (f(x + e) - f(x - e)) / 2e = f'(x) + e^2 f'''(x) / 6 + (n(x+e) - n(x-e)) / 2e + ...
// Truncation: fd(e) - fd(2e) = -3 e^2 f''' / 6 to leading order, so |fd(e) - fd(2e)| / 3 estimates
// it; the bound takes twice that for the higher-order terms. Noise: a computed f is f + n, with n
// the rounding of the whole computation, which is not smooth in x. Its standard deviation sigma
// is estimated from the fourth differences of f at x + j h (j = 0..12) as in J. J. More and
// S. M. Wild, "Estimating computational noise", SIAM J. Sci. Comput. 33(3), 2011, Eq. (2.5):
// sigma^2 = gamma_4 * mean (Delta^4 f)^2, gamma_4 = (4!)^2 / 8!. h must move the computation as
// much as the step does, so that the noise at the points is as independent as at x +- e (h = e/2;
// with h = e/16 the noise of a norm gain's loss came out 30 times too small), and the fourth
// difference of the smooth part, h^4 f'''', must stay below the noise. The two noise terms of
// fd(e) are independent, so its noise has standard deviation sigma / (sqrt(2) e); the bound
// takes 6 of them (a normal deviate passes 6 standard deviations with probability 2e-9; sigma
// from 9 differences is itself uncertain by about a quarter). A value rounded at the end to a
// grid of spacing `quantum` (an fp32 loss: its last place) adds at most quantum / 2e.
#pragma once

#include <cmath>
#include <functional>

namespace ovb::testing {

struct FiniteDifference {
  double value = 0;       // fd(eps)
  double truncation = 0;  // bound on the truncation error (twice the Richardson estimate)
  double noise = 0;       // bound on the noise of fd(eps): 6 standard deviations + quantum / 2e
  double sigma = 0;       // the estimated noise of f itself
  double tolerance() const { return truncation + noise; }
};

// f(d, &applied): the function at x + d, where `applied` receives the offset actually applied
// (the caller may round x + d, e.g. float(x + d) - x).
using OffsetFunction = std::function<double(double d, double* applied)>;

inline FiniteDifference central_difference(const OffsetFunction& f, double eps, double h,
                                           double quantum = 0) {
  auto quotient = [&](double e) {
    double ap = 0, am = 0;
    const double fp = f(e, &ap);
    const double fm = f(-e, &am);
    return (fp - fm) / (ap - am);
  };
  FiniteDifference r;
  r.value = quotient(eps);
  r.truncation = 2 * std::abs(r.value - quotient(2 * eps)) / 3;
  constexpr int kPoints = 13;
  double v[kPoints];
  for (int j = 0; j < kPoints; ++j) {
    double applied = 0;
    v[j] = f(j * h, &applied);
  }
  double mean_sq = 0;
  for (int j = 0; j + 4 < kPoints; ++j) {
    const double d4 = v[j + 4] - 4 * v[j + 3] + 6 * v[j + 2] - 4 * v[j + 1] + v[j];
    mean_sq += d4 * d4 / (kPoints - 4);
  }
  const double gamma4 = 576.0 / 40320.0;
  r.sigma = std::sqrt(gamma4 * mean_sq);
  r.noise = 6 * r.sigma / (std::sqrt(2.0) * eps) + quantum / (2 * eps);
  return r;
}

}  // namespace ovb::testing
