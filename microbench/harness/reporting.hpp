// Google Benchmark output under MPI: only rank 0 prints (console or json) and writes the JSON
// result file, with the suite's run context merged into its "context"; the other ranks report
// nothing. Rank 0 also gets every run as a RunRecord for its own summaries (e.g. the nccl-tests
// table of ovb-collective).
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace ovb::mb {

struct RunRecord {
  std::string name;    // as reported, e.g. "all_reduce/bf16/world/oop/1048576/manual_time_median"
  std::string family;  // as registered, e.g. "all_reduce/bf16/world/oop/1048576"
  std::string label;
  bool aggregate = false;
  std::string aggregate_name;  // "mean", "median", "stddev", "cv" for aggregates
  bool error = false;          // skipped with SkipWithError
  std::string error_message;
  std::int64_t iterations = 0;
  double real_time = 0;  // per iteration, in the benchmark's time unit (microseconds here)
  std::map<std::string, double> counters;
};

struct OutputOptions {
  std::string out_path;            // --benchmark_out=FILE (JSON); empty: no file
  std::string format = "console";  // --benchmark_format=console|json (rank 0's stdout)
  std::string color = "auto";      // --benchmark_color=auto|true|false
  bool tabular = false;            // --benchmark_counters_tabular=true
};

struct SplitArgs {
  std::vector<std::string> own;     // the program's options (argv[0] first)
  std::vector<std::string> gbench;  // other --benchmark_* flags for benchmark::Initialize
  OutputOptions out;
};

// Separates the flags handled here (--benchmark_out, --benchmark_out_format=json,
// --benchmark_format, --benchmark_color, --benchmark_counters_tabular) and the other
// --benchmark_* flags from the program's options. Throws UsageError for an output format other
// than json, a display format other than console/json, and
// --benchmark_enable_random_interleaving
// (each rank would draw its own order, so their collectives would not match).
SplitArgs split_args(int argc, char** argv);

// Google Benchmark writes undefined numbers (e.g. the coefficient of variation of a counter that
// is always 0) as bare NaN / Infinity, which is not JSON: this makes them null (outside strings).
std::string json_without_nan(const std::string& gbench_json);

// Google Benchmark's context text with its "Library was built as DEBUG. Timings may be affected."
// line replaced by a note on why that does not apply here (all times are manual).
std::string debug_note(const std::string& context_text);

// "" unless every measured case (aggregates aside) ended with an error; then the sentence saying so,
// with the first case's message, for the program's one error line. No cases at all is "" too (e.g.
// --benchmark_list_tests, or a filter that matched nothing).
std::string every_case_errored(const std::vector<RunRecord>& records);

// Text for --help: the Google Benchmark flags these programs take.
std::string gbench_flags_help();

// Runs the registered benchmarks. Rank 0 prints and, with out.out_path, writes the JSON file
// (atomically) with context() merged into its "context"; returns rank 0's records (none elsewhere).
// Colour (--benchmark_color=auto) only on a terminal and with one rank: mpirun gives ranks a
// pseudo-terminal even when its own output goes to a file.
std::vector<RunRecord> run_benchmarks(const OutputOptions& out, int rank, int world,
                                      const std::function<nlohmann::json()>& context);

}  // namespace ovb::mb
