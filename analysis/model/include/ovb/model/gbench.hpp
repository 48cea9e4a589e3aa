// Reading the suite's Google Benchmark result files (ovb-collective, ovb-gemm, ovb-overlap:
// results/SCHEMA.md "Microbenchmarks") for calibration.
#pragma once

#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace ovb::model {

// One measured benchmark: its JSON entry and its label as key=value pairs.
struct BenchRow {
  std::string file;
  std::string name;
  const nlohmann::json* entry = nullptr;
  std::map<std::string, std::string> label;

  bool has(const char* key) const;
  // A numeric counter; throws UsageError naming the file, benchmark and key when absent.
  double number(const char* key) const;
  // label[key], else the "key:value" part of the name ("all_reduce/1048576/group:world"), else "".
  std::string tag(const std::string& key) const;
};

// The scenario of an ovb-overlap row: its label's "scenario=", else
// metrics::kDefaultOverlapScenario (ovb/metrics.hpp; rows written before the label carried it).
std::string overlap_scenario(const BenchRow& r);

// Reads a Google Benchmark JSON file; throws UsageError when it cannot be read or has no
// "benchmarks" list.
nlohmann::json read_gbench(const std::string& path);

// One row per benchmark run whose name starts with `prefix`, as the Python readers choose it: the
// "median" aggregate when repetitions were run, else the "mean", else the plain iteration entry
// (the last one). Entries marked error_occurred (skipped) are left out. `doc` must outlive the
// rows.
std::vector<BenchRow> benchmark_rows(const nlohmann::json& doc, std::string_view prefix,
                                     const std::string& file);

}  // namespace ovb::model
