// Typed sweep axes of the microbenchmarks (nvbench-style). An axis is declared once, with its flag,
// help, value type and default values; the values are parsed and validated when the command line
// or a sweep file sets them, so a bad value is one error naming the flag and the value, before
// anything runs. A program then enumerates the points of its axes (every combination) and reads
// typed values at each point instead of parsing strings again:
//
//   Axis<std::size_t> sizes = bytes_axis("--sizes", "Collective sizes", {"16M"});
//   Axis<PrioMode> prio = enum_axis<PrioMode>("--priorities", "...", {"equal"}, {{"equal", ...}});
//   sizes.add_to(app); prio.add_to(app);
//   for_each_point({&sizes, &prio}, [&](const Point& p) { run(sizes.at(p), prio.at(p)); });
//
// Value syntax (comma-separated lists, on the command line and in sweep files):
//   int64:  "4", "1:8" (every integer from 1 to 8), "0:12:4" (0, 4, 8, 12); words such as
//           "default" may stand for a number (NCCL knobs: default = -1).
//   bytes:  "8", "64K", "1M" (K = 1024, as nccl-tests), "1K:1M:4" (1K, 4K, ..., 1M: nccl-tests'
//           -b -e -f; the factor defaults to 2).
//   enum:   one of the declared words.      string: any text the axis's check accepts.
//   bool:   0, 1, false, true.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "ovb/cli_fwd.hpp"
#include "ovb/error.hpp"

namespace ovb::mb {

class Point;

// What every axis has, whatever its type: a flag ("--sizes") and the means to set its values.
class AxisBase {
 public:
  virtual ~AxisBase() = default;
  AxisBase(const AxisBase&) = delete;
  AxisBase& operator=(const AxisBase&) = delete;
  const std::string& flag() const { return flag_; }
  virtual std::size_t size() const = 0;
  // Parses `raw` (one item per element; a range item gives several values) and replaces the
  // values. Throws UsageError "<flag>: '<item>' <why>" for the first bad item (the parser's message
  // after the flag).
  virtual void set(const std::vector<std::string>& raw) = 0;
  // Registers the flag (comma-separated values) on `app`; its callback parses the values, so a
  // sweep file's value (applied through the same option) is checked in the same way. The callback
  // refers to the axis: register it where it stays (a member of the program's options).
  CLI::Option* add_to(CLI::App& app);

 protected:
  AxisBase(std::string flag, std::string help, std::vector<std::string> defaults)
      : flag_(std::move(flag)), help_(std::move(help)), defaults_(std::move(defaults)) {}
  std::string flag_, help_;
  std::vector<std::string> defaults_;
};

template <class T>
class Axis : public AxisBase {
 public:
  // Parses one item into one value or, for a range, several; throws UsageError naming the item
  // ("'1Q' is not a byte count ..."), which set() prefixes with the flag.
  using Parse = std::function<std::vector<T>(const std::string& item)>;

  Axis(std::string flag, std::string help, std::vector<std::string> defaults, Parse parse)
      : AxisBase(std::move(flag), std::move(help), std::move(defaults)), parse_(std::move(parse)) {
    set(defaults_);
  }
  // An axis whose values the program computes from other options (the GEMM cases of a model, the
  // precisions a backend resolves "default" to); it has no flag of its own.
  static Axis derived(std::string name, std::vector<T> values) {
    Axis a(std::move(name), "", {}, nullptr);
    a.values_ = std::move(values);
    return a;
  }
  Axis(Axis&& o) noexcept
      : AxisBase(std::move(o.flag_), std::move(o.help_), std::move(o.defaults_)),
        parse_(std::move(o.parse_)),
        values_(std::move(o.values_)) {}

  std::size_t size() const override { return values_.size(); }
  const std::vector<T>& values() const { return values_; }
  // By value: std::vector<bool> has no references to give.
  T at(const Point& p) const;

  void set(const std::vector<std::string>& raw) override {
    if (!parse_ && !raw.empty()) throw std::logic_error(flag_ + " is computed, not parsed");
    std::vector<T> out;
    for (const std::string& item : raw) {
      std::vector<T> v;
      try {
        v = parse_(item);
      } catch (const UsageError& e) {
        throw UsageError(flag_ + ": " + e.what());
      }
      out.insert(out.end(), v.begin(), v.end());
    }
    values_ = std::move(out);
  }
  void assign(std::vector<T> values) { values_ = std::move(values); }

 private:
  Parse parse_;
  std::vector<T> values_;
};

// One combination of axis values: an index into each axis of the sweep it belongs to.
class Point {
 public:
  Point(std::vector<const AxisBase*> axes, std::vector<std::size_t> index)
      : axes_(std::move(axes)), index_(std::move(index)) {}
  // The index of `axis`'s value; a std::logic_error for an axis outside the sweep (a bug).
  std::size_t index_of(const AxisBase& axis) const {
    for (std::size_t i = 0; i < axes_.size(); ++i)
      if (axes_[i] == &axis) return index_[i];
    throw std::logic_error("axis " + axis.flag() + " is not part of this sweep");
  }

 private:
  std::vector<const AxisBase*> axes_;
  std::vector<std::size_t> index_;
};

template <class T>
T Axis<T>::at(const Point& p) const {
  return values_[p.index_of(*this)];
}

// Calls f for every combination of the axes' values, the first axis varying slowest (as nested
// loops written in that order); none when an axis is empty.
void for_each_point(std::initializer_list<const AxisBase*> axes,
                    const std::function<void(const Point&)>& f);

// int64 values within [lo, hi]; `words` name special values ({"default", -1} for NCCL knobs).
Axis<std::int64_t> int64_axis(std::string flag, std::string help, std::vector<std::string> defaults,
                              std::int64_t lo, std::int64_t hi,
                              std::vector<std::pair<std::string, std::int64_t>> words = {});

// Byte counts with binary suffixes, and geometric ranges MIN:MAX[:FACTOR].
Axis<std::size_t> bytes_axis(std::string flag, std::string help, std::vector<std::string> defaults);

// true/false, also written 1/0.
Axis<bool> bool_axis(std::string flag, std::string help, std::vector<std::string> defaults);

// Text that `check` accepts (check returns "" or why not, completing "<flag>: '<item>' ...").
Axis<std::string> string_axis(std::string flag, std::string help, std::vector<std::string> defaults,
                              std::function<std::string(const std::string&)> check = nullptr);

// "is not one of a, b, c": the message of an enum axis for a word it does not know.
std::string not_one_of(const std::vector<std::string>& words);

// One of a list of words, each standing for a value of T.
template <class T>
Axis<T> enum_axis(std::string flag, std::string help, std::vector<std::string> defaults,
                  std::vector<std::pair<std::string, T>> words) {
  return Axis<T>(std::move(flag), std::move(help), std::move(defaults),
                 [words = std::move(words)](const std::string& item) {
                   std::vector<std::string> names;
                   for (const auto& [w, v] : words) {
                     if (w == item) return std::vector<T>{v};
                     names.push_back(w);
                   }
                   throw UsageError("'" + item + "' " + not_one_of(names));
                 });
}

}  // namespace ovb::mb
