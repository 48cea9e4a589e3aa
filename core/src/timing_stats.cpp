// Warm-up rule, sample count and percentiles of timed figures (see timing_stats.hpp).
#include "ovb/timing_stats.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "ovb/error.hpp"

namespace ovb::stats {

int default_warmup(int n) {
  if (n <= 1) return 0;
  const int tenth = (n + 9) / 10;  // ceil(n/10) in integers: no rounding doubt at multiples of 10
  return std::min(std::max(3, tenth), n - 1);
}

int default_runs() {
  int n = kMinTimedSamples;
  while (n - default_warmup(n) < kMinTimedSamples) ++n;
  return n;
}

double percentile(std::vector<double> values, double q) {
  if (values.empty()) throw Error("percentile of an empty list of samples");
  if (!(q >= 0 && q <= 100)) throw Error("percentile " + std::to_string(q) + " outside [0, 100]");
  std::sort(values.begin(), values.end());
  const double pos = static_cast<double>(values.size() - 1) * q / 100.0;
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const std::size_t hi = std::min(lo + 1, values.size() - 1);
  return values[lo] + (values[hi] - values[lo]) * (pos - static_cast<double>(lo));
}

TimingSummary summarize_ms(const std::vector<double>& times_ms, int warmup) {
  const int n = static_cast<int>(times_ms.size());
  TimingSummary s;
  s.warmup = warmup < 0 ? default_warmup(n) : warmup;
  if (s.warmup >= n)
    throw Error("warm-up of " + std::to_string(s.warmup) + " runs leaves none of " +
                std::to_string(n) + " timed");
  const std::vector<double> timed(times_ms.begin() + s.warmup, times_ms.end());
  s.iterations_timed = static_cast<int>(timed.size());
  s.p10_ms = percentile(timed, 10);
  s.p50_ms = percentile(timed, 50);
  s.p90_ms = percentile(timed, 90);
  return s;
}

nlohmann::json to_json(const TimingSummary& s) {
  return {{"warmup", s.warmup}, {"iterations_timed", s.iterations_timed},
          {"p10_ms", s.p10_ms}, {"p50_ms", s.p50_ms},
          {"p90_ms", s.p90_ms}, {"enough_samples", s.iterations_timed >= kMinTimedSamples}};
}

}  // namespace ovb::stats
