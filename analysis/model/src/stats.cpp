// Line fits, relative errors and rank correlation (see stats.hpp).
#include "ovb/model/stats.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "ovb/error.hpp"

namespace ovb::model {

namespace {

void quality(LineFit& f, const std::vector<double>& x, const std::vector<double>& y) {
  const double n = static_cast<double>(y.size());
  const double mean = std::accumulate(y.begin(), y.end(), 0.0) / n;
  double ss_res = 0, ss_tot = 0;
  f.max_rel_err = 0;
  for (std::size_t i = 0; i < y.size(); ++i) {
    const double pred = f.intercept + f.slope * x[i];
    ss_res += (pred - y[i]) * (pred - y[i]);
    ss_tot += (y[i] - mean) * (y[i] - mean);
    if (y[i] != 0) f.max_rel_err = std::max(f.max_rel_err, std::abs(pred - y[i]) / std::abs(y[i]));
  }
  if (ss_tot > 0) f.r2 = 1 - ss_res / ss_tot;
}

}  // namespace

LineFit fit_line(const std::vector<double>& x, const std::vector<double>& y,
                 const std::vector<double>& w) {
  if (x.size() != y.size() || x.empty() || (!w.empty() && w.size() != x.size()))
    throw Error("fit_line: need equal, non-empty x, y (and weights)");
  auto wt = [&](std::size_t i) { return w.empty() ? 1.0 : w[i]; };
  double W = 0, mx = 0, my = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    W += wt(i);
    mx += wt(i) * x[i];
    my += wt(i) * y[i];
  }
  mx /= W;
  my /= W;
  double sxx = 0, sxy = 0, sxx0 = 0, sxy0 = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    sxx += wt(i) * (x[i] - mx) * (x[i] - mx);
    sxy += wt(i) * (x[i] - mx) * (y[i] - my);
    sxx0 += wt(i) * x[i] * x[i];
    sxy0 += wt(i) * x[i] * y[i];
  }
  if (sxx0 == 0) throw Error("fit_line: every x is zero");
  LineFit f;
  // One distinct x (sxx ~ 0 up to rounding), or a negative latency: through the origin.
  const bool one_x = sxx <= 1e-12 * sxx0;
  if (!one_x) {
    f.slope = sxy / sxx;
    f.intercept = my - f.slope * mx;
  }
  if (one_x || f.intercept < 0) {
    f.intercept = 0;
    f.slope = sxy0 / sxx0;
    f.through_origin = true;
  }
  quality(f, x, y);
  return f;
}

double error_pct(double predicted, double measured) {
  return 100.0 * (predicted - measured) / measured;
}

std::vector<double> ranks(const std::vector<double>& v) {
  std::vector<std::size_t> idx(v.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::stable_sort(idx.begin(), idx.end(),
                   [&](std::size_t a, std::size_t b) { return v[a] < v[b]; });
  std::vector<double> r(v.size());
  for (std::size_t i = 0; i < idx.size();) {
    std::size_t j = i;
    while (j + 1 < idx.size() && v[idx[j + 1]] == v[idx[i]]) ++j;
    const double mean_rank = (static_cast<double>(i) + static_cast<double>(j)) / 2 + 1;
    for (std::size_t k = i; k <= j; ++k) r[idx[k]] = mean_rank;
    i = j + 1;
  }
  return r;
}

std::optional<double> spearman(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size() || a.size() < 2) return std::nullopt;
  const std::vector<double> ra = ranks(a), rb = ranks(b);
  const double n = static_cast<double>(a.size());
  const double ma = std::accumulate(ra.begin(), ra.end(), 0.0) / n;
  const double mb = std::accumulate(rb.begin(), rb.end(), 0.0) / n;
  double sab = 0, saa = 0, sbb = 0;
  for (std::size_t i = 0; i < ra.size(); ++i) {
    sab += (ra[i] - ma) * (rb[i] - mb);
    saa += (ra[i] - ma) * (ra[i] - ma);
    sbb += (rb[i] - mb) * (rb[i] - mb);
  }
  if (saa == 0 || sbb == 0) return std::nullopt;
  return sab / std::sqrt(saa * sbb);
}

}  // namespace ovb::model
