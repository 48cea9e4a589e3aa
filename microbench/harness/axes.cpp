// Typed sweep axes: parsers of the value types and the enumeration of points (see axes.hpp).
#include "harness/axes.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <limits>

#include "harness/sizes.hpp"

namespace ovb::mb {

CLI::Option* AxisBase::add_to(CLI::App& app) {
  std::string shown;
  for (const std::string& d : defaults_) shown += (shown.empty() ? "" : ",") + d;
  // The axis must not move after this: the callback refers to it.
  return app
      .add_option_function<std::vector<std::string>>(
          flag_, [this](const std::vector<std::string>& raw) { set(raw); }, help_)
      ->delimiter(',')
      ->type_name("LIST")
      ->default_str(shown);
}

void for_each_point(std::initializer_list<const AxisBase*> axes,
                    const std::function<void(const Point&)>& f) {
  const std::vector<const AxisBase*> list(axes);
  for (const AxisBase* a : list)
    if (a->size() == 0) return;
  std::vector<std::size_t> index(list.size(), 0);
  while (true) {
    f(Point(list, index));
    // Odometer: the last axis turns fastest.
    std::size_t i = list.size();
    while (i > 0) {
      --i;
      if (++index[i] < list[i]->size()) break;
      index[i] = 0;
      if (i == 0) return;
    }
    if (list.empty()) return;
  }
}

namespace {
// A range expanding to more values than this is a typo, not a sweep.
constexpr std::size_t kMaxRangeValues = 100000;

// A decimal integer, possibly negative; false for anything else or an overflow.
bool parse_int(const std::string& s, std::int64_t& out) {
  const bool neg = !s.empty() && s[0] == '-';
  std::size_t i = neg ? 1 : 0;
  if (i == s.size()) return false;
  std::int64_t v = 0;
  for (; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    const int d = s[i] - '0';
    if (v > (std::numeric_limits<std::int64_t>::max() - d) / 10) return false;
    v = v * 10 + d;
  }
  out = neg ? -v : v;
  return true;
}

// The parts of "A:B[:C]" (one part without a colon); empty when a part is empty or there are
// more than three.
std::vector<std::string> range_parts(const std::string& item) {
  const std::vector<std::string> parts = split_list(item, ':');
  const auto colons = static_cast<std::size_t>(std::count(item.begin(), item.end(), ':'));
  if (parts.empty() || parts.size() > 3 || colons + 1 != parts.size()) return {};
  return parts;
}

[[noreturn]] void bad(const std::string& item, const std::string& why) {
  throw UsageError("'" + item + "' " + why);
}
}  // namespace

Axis<std::int64_t> int64_axis(std::string flag, std::string help, std::vector<std::string> defaults,
                              std::int64_t lo, std::int64_t hi,
                              std::vector<std::pair<std::string, std::int64_t>> words) {
  // The message names the words that are not numbers themselves ("default", not "-1").
  std::vector<std::string> names;
  for (const auto& [w, v] : words)
    if (std::int64_t x; !parse_int(w, x)) names.push_back(w);
  const std::string neither = names.empty()       ? "is not an integer"
                              : names.size() == 1 ? "is neither '" + names[0] + "' nor an integer"
                                                  : "is not an integer and " + not_one_of(names);
  auto parse = [lo, hi, words = std::move(words), neither](const std::string& item) {
    for (const auto& [w, v] : words)
      if (item == w) return std::vector<std::int64_t>{v};
    auto in_range = [&](std::int64_t v) {
      if (v < lo || v > hi)
        bad(item, "is outside " + std::to_string(lo) + ".." + std::to_string(hi));
      return v;
    };
    const std::vector<std::string> parts = range_parts(item);
    std::int64_t v[3] = {0, 0, 1};
    bool ok = !parts.empty();
    for (std::size_t i = 0; i < parts.size(); ++i) ok = ok && parse_int(parts[i], v[i]);
    if (!ok) {
      if (item.find(':') == std::string::npos) bad(item, neither);
      bad(item, "is not a range FIRST:LAST[:STEP] of integers");
    }
    if (parts.size() == 1) return std::vector<std::int64_t>{in_range(v[0])};
    if (v[1] < v[0] || v[2] < 1)
      bad(item, "is not a range FIRST:LAST[:STEP] with FIRST <= LAST and STEP >= 1");
    in_range(v[0]);
    in_range(v[1]);
    const auto steps = static_cast<std::uint64_t>(v[1] - v[0]) / static_cast<std::uint64_t>(v[2]);
    if (steps >= kMaxRangeValues)
      bad(item, "has more than " + std::to_string(kMaxRangeValues) + " values");
    std::vector<std::int64_t> out;
    for (std::int64_t x = v[0];; x += v[2]) {
      out.push_back(x);
      if (v[1] - x < v[2]) break;
    }
    return out;
  };
  return Axis<std::int64_t>(std::move(flag), std::move(help), std::move(defaults), parse);
}

Axis<std::size_t> bytes_axis(std::string flag, std::string help,
                             std::vector<std::string> defaults) {
  auto parse = [](const std::string& item) {
    const std::string why =
        "is not a byte count (examples: 8, 64K, 1M, 2G) or a range MIN:MAX[:FACTOR]";
    const std::vector<std::string> parts = range_parts(item);
    if (parts.empty()) bad(item, why);
    std::size_t v[3] = {0, 0, 2};
    for (std::size_t i = 0; i < parts.size(); ++i) {
      try {
        v[i] = parse_bytes(parts[i]);
      } catch (const UsageError&) {
        bad(item, why);
      }
    }
    if (parts.size() == 1) return std::vector<std::size_t>{v[0]};
    try {
      return size_sweep(v[0], v[1], v[2]);
    } catch (const UsageError& e) {
      bad(item, std::string("is not a range: ") + e.what());
    }
  };
  return Axis<std::size_t>(std::move(flag), std::move(help), std::move(defaults), parse);
}

Axis<bool> bool_axis(std::string flag, std::string help, std::vector<std::string> defaults) {
  return enum_axis<bool>(std::move(flag), std::move(help), std::move(defaults),
                         {{"0", false}, {"1", true}, {"false", false}, {"true", true}});
}

Axis<std::string> string_axis(std::string flag, std::string help, std::vector<std::string> defaults,
                              std::function<std::string(const std::string&)> check) {
  auto parse = [check = std::move(check)](const std::string& item) {
    if (check)
      if (const std::string why = check(item); !why.empty()) bad(item, why);
    return std::vector<std::string>{item};
  };
  return Axis<std::string>(std::move(flag), std::move(help), std::move(defaults), parse);
}

std::string not_one_of(const std::vector<std::string>& words) {
  std::string out = "is not one of ";
  for (std::size_t i = 0; i < words.size(); ++i) out += (i ? ", " : "") + words[i];
  return out;
}

}  // namespace ovb::mb
