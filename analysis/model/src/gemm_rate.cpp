// GEMM throughput of one device for a local shape: the machine's GEMM table (exact shape, else
// inverse-distance weighting in log2(m, n, k) space; below its smallest GEMM the quantized rate
// where the machine has SMs and tiles), else peak x gemm_efficiency (the best shape's rate, a
// ceiling) x the shape's wave and tile quantization on the machine's SMs; any of them times
// gemm_training_factor (inside a training step against how the table was measured) and capped at
// peak x gemm_max_efficiency (the best rate on random inputs) where the machine has one.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "ovb/model/compute_cost.hpp"

namespace ovb::model {

std::string_view name_of(GemmSource s) {
  switch (s) {
    case GemmSource::table_exact: return "table";
    case GemmSource::table_interpolated: return "interpolated";
    case GemmSource::peak_efficiency: return "peak x efficiency";
    case GemmSource::quantized: return "peak x efficiency x waves";
    case GemmSource::ceiling: return "ceiling";
  }
  return "?";
}

double wave_efficiency(const Machine& mc, std::int64_t m, std::int64_t n) {
  if (mc.sms < 1 || mc.gemm_tiles.empty()) return 1;
  auto ceil_div = [](std::int64_t a, std::int64_t b) { return (a + b - 1) / b; };
  double best = 0;
  for (const auto& t : mc.gemm_tiles) {
    const std::int64_t rows = ceil_div(m, t[0]), cols = ceil_div(n, t[1]);
    const double tiles = static_cast<double>(rows * cols);
    const double waves = tiles / mc.sms;
    const double area = static_cast<double>(m) * static_cast<double>(n) /
                        (static_cast<double>(rows * t[0]) * static_cast<double>(cols * t[1]));
    best = std::max(best, waves / std::ceil(waves) * area);
  }
  return best;
}

namespace {

GemmRate rate_below_ceiling(const Machine& mc, std::int64_t m, std::int64_t n, std::int64_t k,
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
  if (wsum == 0) {
    if (mc.sms < 1 || mc.gemm_tiles.empty())
      return {mc.peak() * mc.gemm_efficiency, GemmSource::peak_efficiency};
    return {mc.peak() * mc.gemm_efficiency * wave_efficiency(mc, m, n), GemmSource::quantized};
  }
  // Below the smallest measured GEMM the table says nothing about how the rate falls: on a
  // machine with SMs and tiles, the best shape's rate times this shape's wave and tile
  // quantization (the smaller pieces of a chunked GEMM: H100, results/h100/fine-overlap/); without
  // them the time stops shrinking there (the throughput scaled down with the FLOP count).
  const double flop = 2.0 * static_cast<double>(m) * n * k;
  if (flop < min_flop && mc.sms >= 1 && !mc.gemm_tiles.empty())
    return {mc.peak() * mc.gemm_efficiency * wave_efficiency(mc, m, n), GemmSource::quantized};
  const double scale = std::min(1.0, flop / min_flop);
  return {vsum / wsum * scale, GemmSource::table_interpolated};
}

}  // namespace

GemmRate gemm_rate(const Machine& mc, std::int64_t m, std::int64_t n, std::int64_t k,
                   std::string_view dtype) {
  GemmRate r = rate_below_ceiling(mc, m, n, k, dtype);
  r.tflops *= mc.gemm_training_factor;
  const std::optional<double> ceiling = mc.gemm_ceiling_tflops();
  return ceiling && r.tflops > *ceiling ? GemmRate{*ceiling, GemmSource::ceiling} : r;
}

}  // namespace ovb::model
