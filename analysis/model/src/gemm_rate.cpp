// GEMM throughput of one device for a local shape: the machine's GEMM table (exact shape, else
// inverse-distance weighting in log2(m, n, k) space), else peak x gemm_efficiency.
#include <cmath>
#include <limits>

#include "ovb/model/compute_cost.hpp"

namespace ovb::model {

std::string_view name_of(GemmSource s) {
  switch (s) {
    case GemmSource::table_exact: return "table";
    case GemmSource::table_interpolated: return "interpolated";
    case GemmSource::peak_efficiency: return "peak x efficiency";
  }
  return "?";
}

GemmRate gemm_rate(const Machine& mc, std::int64_t m, std::int64_t n, std::int64_t k,
                   std::string_view dtype) {
  // Entries of this dtype when the table has any, else all of them (a table of one precision).
  bool any_of_dtype = false;
  for (const GemmPoint& g : mc.gemm_table) any_of_dtype |= g.dtype == dtype;
  auto usable = [&](const GemmPoint& g) { return !any_of_dtype || g.dtype == dtype; };

  const double lm = std::log2(static_cast<double>(m)), ln = std::log2(static_cast<double>(n)),
               lk = std::log2(static_cast<double>(k));
  double wsum = 0, vsum = 0, min_flop = std::numeric_limits<double>::max();
  for (const GemmPoint& g : mc.gemm_table) {
    if (!usable(g)) continue;
    if (g.m == m && g.n == n && g.k == k) return {g.tflops, GemmSource::table_exact};
    const double dm = lm - std::log2(static_cast<double>(g.m)),
                 dn = ln - std::log2(static_cast<double>(g.n)),
                 dk = lk - std::log2(static_cast<double>(g.k));
    const double w = 1.0 / (dm * dm + dn * dn + dk * dk);  // inverse squared distance
    wsum += w;
    vsum += w * g.tflops;
    min_flop = std::min(min_flop, 2.0 * g.m * g.n * g.k);
  }
  if (wsum == 0) return {mc.peak() * mc.gemm_efficiency, GemmSource::peak_efficiency};
  // Below the smallest measured GEMM the time stops shrinking (launch- and latency-bound): scale
  // the throughput down with the FLOP count instead of extrapolating it.
  const double flop = 2.0 * static_cast<double>(m) * n * k;
  const double scale = std::min(1.0, flop / min_flop);
  return {vsum / wsum * scale, GemmSource::table_interpolated};
}

}  // namespace ovb::model
