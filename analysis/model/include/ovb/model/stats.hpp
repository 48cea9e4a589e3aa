// Statistics of the model's calibration and validation: least-squares line fits with their
// quality, relative errors, and Spearman's rank correlation.
#pragma once

#include <optional>
#include <vector>

namespace ovb::model {

// y = intercept + slope * x by weighted least squares (minimises sum w_i (fit(x_i) - y_i)^2; no
// weights: all 1). When the best intercept is negative (a latency cannot be), the line is refitted
// through the origin. r2 = 1 - SS_res / SS_tot, unweighted (nullopt when all y are equal);
// max_rel_err = max |fit(x) - y| / y.
struct LineFit {
  double intercept = 0, slope = 0;
  std::optional<double> r2;
  double max_rel_err = 0;
  bool through_origin = false;
};
// Throws Error when x, y (and w) differ in length, are empty, or all x are zero.
LineFit fit_line(const std::vector<double>& x, const std::vector<double>& y,
                 const std::vector<double>& w = {});

// 100 * (predicted - measured) / measured.
double error_pct(double predicted, double measured);

// Ranks 1..n, ties get the mean of their ranks.
std::vector<double> ranks(const std::vector<double>& v);
// Pearson correlation of the ranks; nullopt for fewer than 2 values or a constant series.
std::optional<double> spearman(const std::vector<double>& a, const std::vector<double>& b);

}  // namespace ovb::model
