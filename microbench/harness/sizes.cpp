// Sizes, sweeps and knobs (see sizes.hpp).
#include "harness/sizes.hpp"

#include <cctype>
#include <cstdio>
#include <limits>

#include "ovb/error.hpp"

namespace ovb::mb {

std::size_t parse_bytes(std::string_view s, std::string_view what) {
  auto fail = [&]() -> std::size_t {
    throw UsageError(std::string(what) + " '" + std::string(s) +
                     "' is not a byte count (examples: 8, 64K, 1M, 2G)");
  };
  std::string_view t = s;
  if (!t.empty() && (t.back() == 'B' || t.back() == 'b')) t.remove_suffix(1);
  std::size_t mult = 1;
  if (!t.empty()) {
    switch (std::toupper(static_cast<unsigned char>(t.back()))) {
      case 'K': mult = 1ull << 10; break;
      case 'M': mult = 1ull << 20; break;
      case 'G': mult = 1ull << 30; break;
      case 'T': mult = 1ull << 40; break;
      default: break;
    }
    if (mult != 1) t.remove_suffix(1);
  }
  if (t.empty()) return fail();
  std::size_t v = 0;
  for (char c : t) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return fail();
    const std::size_t d = static_cast<std::size_t>(c - '0');
    if (v > (std::numeric_limits<std::size_t>::max() - d) / 10) return fail();
    v = v * 10 + d;
  }
  if (v > std::numeric_limits<std::size_t>::max() / mult) return fail();
  return v * mult;
}

std::vector<std::size_t> size_sweep(std::size_t min, std::size_t max, std::size_t factor) {
  if (min == 0) throw UsageError("the minimum size must be at least 1 byte");
  if (max < min)
    throw UsageError("the maximum size " + std::to_string(max) + " is below the minimum " +
                     std::to_string(min));
  if (min < max && factor < 2)
    throw UsageError("the size step factor must be at least 2, got " + std::to_string(factor));
  std::vector<std::size_t> out;
  for (std::size_t v = min; v <= max; v *= factor) {
    out.push_back(v);
    if (min == max || v > max / factor) break;
  }
  return out;
}

std::string knob_text(int v) {
  return v < 0 ? "default" : std::to_string(v);
}

std::string human_bytes(std::size_t b) {
  const char* unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(b);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.4g %s", v, unit[u]);
  return buf;
}

std::vector<std::string> split_list(std::string_view s, char sep) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= s.size()) {
    const std::size_t end = std::min(s.find(sep, start), s.size());
    if (end > start) out.emplace_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

}  // namespace ovb::mb
