// Rank-aware Google Benchmark reporting (see reporting.hpp).
#include "harness/reporting.hpp"

#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <memory>
#include <sstream>
#include <streambuf>

#include "harness/gbench_compat.hpp"
#include "ovb/error.hpp"
#include "ovb/io.hpp"

namespace ovb::mb {

namespace {
bool starts_with(const std::string& s, const char* p) {
  return s.rfind(p, 0) == 0;
}

// mpirun and srun give even a single rank a pseudo-terminal, also when their own output goes to
// a log file: under a launcher, colour codes would end up in the file.
bool under_launcher() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "SLURM_PROCID"})
    if (std::getenv(v)) return true;
  return false;
}

bool truthy(const std::string& v) {
  return v.empty() || v == "true" || v == "yes" || v == "1";
}

// Prints nothing: the display reporter of ranks other than 0.
class NullReporter final : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>&) override {}
};

// Forwards to several reporters and keeps a RunRecord of every run.
class TeeReporter final : public benchmark::BenchmarkReporter {
 public:
  TeeReporter(std::vector<benchmark::BenchmarkReporter*> to, std::vector<RunRecord>* records)
      : to_(std::move(to)), records_(records) {}
  bool ReportContext(const Context& c) override {
    bool ok = true;
    for (auto* r : to_) ok = r->ReportContext(c) && ok;
    return ok;
  }
  void ReportRuns(const std::vector<Run>& runs) override {
    for (auto* r : to_) r->ReportRuns(runs);
    for (const Run& run : runs) records_->push_back(record_of(run));
  }
  void Finalize() override {
    for (auto* r : to_) r->Finalize();
  }

 private:
  static RunRecord record_of(const Run& run) {
    RunRecord r;
    r.name = run.benchmark_name();
    r.family = run.run_name.function_name;
    r.label = run.report_label;
    r.aggregate = run.run_type == Run::RT_Aggregate;
    r.aggregate_name = run.aggregate_name;
    r.error = run_skipped(run);
    r.error_message = run_skip_message(run);
    r.iterations = static_cast<std::int64_t>(run.iterations);
    r.real_time = run.GetAdjustedRealTime();
    for (const auto& [k, c] : run.counters) r.counters[k] = c.value;
    return r;
  }
  std::vector<benchmark::BenchmarkReporter*> to_;
  std::vector<RunRecord>* records_;
};

// The console table, with Google Benchmark's "Library was built as DEBUG" warning (Debian's
// package is built without NDEBUG) replaced by what it means here: every time is manual (the
// programs' own events and clocks, SetIterationTime), so the library's build type does not enter
// the numbers; the JSON context still records it as library_build_type.
class ConsoleTable final : public benchmark::ConsoleReporter {
 public:
  using benchmark::ConsoleReporter::ConsoleReporter;
  bool ReportContext(const Context& c) override {
    std::ostringstream text;
    std::ostream* saved = &GetErrorStream();
    SetErrorStream(&text);
    const bool ok = benchmark::ConsoleReporter::ReportContext(c);
    SetErrorStream(saved);
    *saved << debug_note(text.str());
    return ok;
  }
};

class NullBuf final : public std::streambuf {
 protected:
  int overflow(int c) override { return c; }
};

std::unique_ptr<benchmark::BenchmarkReporter> display_reporter(const OutputOptions& out,
                                                               int world) {
  if (out.format == "json") return std::make_unique<benchmark::JSONReporter>();
  const char* term = std::getenv("TERM");
  const bool color = out.color == "auto" ? (world == 1 && !under_launcher() &&
                                            isatty(STDOUT_FILENO) && term &&
                                            std::string(term) != "dumb")
                                         : truthy(out.color);
  int opts = benchmark::ConsoleReporter::OO_None;
  if (color) opts |= benchmark::ConsoleReporter::OO_Color;
  if (out.tabular) opts |= benchmark::ConsoleReporter::OO_Tabular;
  return std::make_unique<ConsoleTable>(
      static_cast<benchmark::ConsoleReporter::OutputOptions>(opts));
}
}  // namespace

std::string json_without_nan(const std::string& in) {
  std::string out;
  out.reserve(in.size());
  bool in_string = false;
  for (std::size_t i = 0; i < in.size(); ++i) {
    const char c = in[i];
    if (in_string) {
      out += c;
      if (c == '\\' && i + 1 < in.size())
        out += in[++i];
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
      out += c;
      continue;
    }
    bool replaced = false;
    for (const char* tok : {"-NaN", "NaN", "-Infinity", "Infinity"}) {
      if (in.compare(i, std::char_traits<char>::length(tok), tok) == 0) {
        out += "null";
        i += std::char_traits<char>::length(tok) - 1;
        replaced = true;
        break;
      }
    }
    if (!replaced) out += c;
  }
  return out;
}

SplitArgs split_args(int argc, char** argv) {
  SplitArgs s;
  s.own.push_back(argc > 0 ? argv[0] : "ovb");
  s.gbench.push_back(s.own[0]);
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto eq = a.find('=');
    const std::string key = a.substr(0, eq),
                      value = eq == std::string::npos ? "" : a.substr(eq + 1);
    if (!starts_with(a, "--benchmark_")) {
      s.own.push_back(a);
    } else if (key == "--benchmark_out") {
      if (value.empty()) throw UsageError("--benchmark_out needs a file: --benchmark_out=FILE");
      s.out.out_path = value;
    } else if (key == "--benchmark_out_format") {
      if (value != "json")
        throw UsageError(
            "--benchmark_out_format: only json is supported (the result file carries "
            "the run context), not '" +
            value + "'");
    } else if (key == "--benchmark_format") {
      if (value != "console" && value != "json")
        throw UsageError("--benchmark_format must be console or json, not '" + value + "'");
      s.out.format = value;
    } else if (key == "--benchmark_color") {
      s.out.color = value.empty() ? "true" : value;
    } else if (key == "--benchmark_counters_tabular") {
      s.out.tabular = truthy(value);
    } else if (key == "--benchmark_enable_random_interleaving") {
      throw UsageError(
          "--benchmark_enable_random_interleaving is not supported: each rank would "
          "draw its own order and their collectives would not match");
    } else {
      s.gbench.push_back(a);
    }
  }
  return s;
}

std::string debug_note(const std::string& context_text) {
  static const std::string warning = "***WARNING*** Library was built as DEBUG.";
  std::istringstream in(context_text);
  std::string out, line;
  while (std::getline(in, line)) {
    if (line.rfind(warning, 0) == 0)
      line =
          "note: Google Benchmark was built without NDEBUG (library_build_type debug); every time "
          "here is measured by this program's own timers, so that does not affect the numbers";
    out += line + "\n";
  }
  return out;
}

std::string every_case_errored(const std::vector<RunRecord>& records) {
  std::size_t cases = 0;
  const RunRecord* first = nullptr;
  for (const RunRecord& r : records) {
    if (r.aggregate) continue;
    ++cases;
    if (!r.error) return "";
    if (!first) first = &r;
  }
  if (!first) return "";
  return "every one of the " + std::to_string(cases) +
         " benchmark case(s) ended with an error, nothing was measured (first: " + first->name +
         ": " + first->error_message + ")";
}

std::string gbench_flags_help() {
  return "Google Benchmark flags (use the --flag=value form):\n"
         "  --benchmark_filter=REGEX       run only the benchmarks whose name matches\n"
         "  --benchmark_list_tests         list the benchmark names and exit\n"
         "  --benchmark_repetitions=N      repeat each benchmark (adds mean/median/stddev/cv)\n"
         "  --benchmark_report_aggregates_only, --benchmark_display_aggregates_only\n"
         "  --benchmark_min_time=S         measured seconds per benchmark (see --min-time)\n"
         "  --benchmark_time_unit=ns|us|ms|s, --benchmark_context=KEY=VALUE\n"
         "  --benchmark_out=FILE           JSON result file with the run context (rank 0)\n"
         "  --benchmark_format=console|json, --benchmark_color=auto|true|false,\n"
         "  --benchmark_counters_tabular=true   rank 0's standard output\n";
}

std::vector<RunRecord> run_benchmarks(const OutputOptions& out, int rank, int world,
                                      const std::function<nlohmann::json()>& context) {
  std::vector<RunRecord> records;
  if (rank != 0) {
    // Google Benchmark writes some things (e.g. --benchmark_list_tests) straight to std::cout.
    NullBuf null;
    std::streambuf* saved = std::cout.rdbuf(&null);
    NullReporter quiet;
    try {
      benchmark::RunSpecifiedBenchmarks(&quiet);
    } catch (...) {
      std::cout.rdbuf(saved);
      throw;
    }
    std::cout.rdbuf(saved);
    return records;
  }
  std::unique_ptr<benchmark::BenchmarkReporter> display = display_reporter(out, world);
  std::ostringstream json_text;
  benchmark::JSONReporter json;
  json.SetOutputStream(&json_text);
  json.SetErrorStream(&std::cerr);
  TeeReporter tee({display.get(), &json}, &records);
  benchmark::RunSpecifiedBenchmarks(&tee);
  std::cout.flush();
  if (!out.out_path.empty()) {
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(json_without_nan(json_text.str()));
    } catch (const nlohmann::json::exception& e) {
      throw Error(std::string("cannot parse Google Benchmark's JSON output: ") + e.what());
    }
    if (!j.contains("context") || !j["context"].is_object())
      j["context"] = nlohmann::json::object();
    const nlohmann::json ctx = context();
    for (const auto& [k, v] : ctx.items()) j["context"][k] = v;
    write_json(out.out_path, j);
    std::cout << "wrote " << out.out_path << std::endl;
  }
  return records;
}

}  // namespace ovb::mb
