// ovb-model validate: predict every published run of the validation file with its stated
// strategy and configuration, and print predicted vs published TFLOP/s per GPU with the error.
// --check makes a run outside the file's tolerance (or one whose configuration does not fit) a
// failure (exit status 1) unless the file states it as a known miss with its cause, and a known
// miss that comes inside the tolerance a failure too: the ctest of the validation.
// Beside each error, Calculon's on the same run where analysis/validation/calculon_results.json
// (written by analysis/validation/calculon/run_calculon.py) has it, and the mean |error| of both
// over the runs both predict, for all runs and for each group of runs (one paper's table).
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "commands.hpp"
#include "ovb/context.hpp"
#include "ovb/error.hpp"
#include "ovb/io.hpp"
#include "ovb/model/table.hpp"
#include "ovb/model/validate.hpp"
#include "ovb/model/validate_calculon.hpp"

namespace ovb::model::cli {

namespace {

// Mean |error| of a set of runs, ovb-model's alone and both tools' over the runs both predict.
struct ErrorSummary {
  int runs = 0, both = 0;
  double sum = 0, max = 0, sum_both = 0, sum_calculon = 0;
  void add(const ValidationRow& v) {
    ++runs;
    sum += std::abs(v.error_pct);
    max = std::max(max, std::abs(v.error_pct));
    if (!v.calculon_error_pct) return;
    ++both;
    sum_both += std::abs(v.error_pct);
    sum_calculon += std::abs(*v.calculon_error_pct);
  }
  std::string str(const std::string& name) const {
    std::string s = name + ": " + std::to_string(runs) + " runs, mean |error| " +
                    fmt(sum / runs, 1) + " % (max " + fmt(max, 1) + " %)";
    if (both > 0)
      s += "; the " + std::to_string(both) + " Calculon also predicts: ovb-model " +
           fmt(sum_both / both, 1) + " %, Calculon " + fmt(sum_calculon / both, 1) + " %";
    return s;
  }
  nlohmann::json json(const std::string& name) const {
    const auto mean = [](double total, int n) { return n ? nlohmann::json(total / n) : nullptr; };
    return {{"group", name},
            {"runs", runs},
            {"mean_abs_error_pct", mean(sum, runs)},
            {"max_abs_error_pct", max},
            {"runs_both_predict", both},
            {"mean_abs_error_pct_both", mean(sum_both, both)},
            {"calculon_mean_abs_error_pct_both", mean(sum_calculon, both)}};
  }
};

class Validate : public Command {
 public:
  void setup(CLI::App& sub) override {
    sub.add_option("--runs", runs_, "Validation data file")->capture_default_str();
    sub.add_option("--only", only_, "Only the run with this id");
    sub.add_option("--json", json_, "Write the table as JSON");
    sub.add_flag("--check", check_, "Exit 1 when a run is outside the file's tolerance");
    sub.add_option("--calculon", calculon_,
                   "Calculon's predictions of the same runs (run_calculon.py's output)")
        ->capture_default_str();
  }

  int run(const LaunchContext& ctx) override {
    const ValidationSet set = load_published_runs(runs_);
    const SecondToolTimes calculon = load_calculon_results(calculon_);
    TextTable t({"run", "strategy", "machine", "GPUs", "configuration", "FLOPs", "published TF",
                 "predicted TF", "error %", "Calculon %", "fits", "within"});
    ErrorSummary all;
    std::map<std::string, ErrorSummary> groups;
    std::vector<std::string> findings;
    nlohmann::json rows = nlohmann::json::array();
    int n = 0, outside = 0, unexpected = 0;
    for (const PublishedRun& r : set.runs) {
      if (!only_.empty() && r.id != only_) continue;
      ValidationRow v = validate_run(r, set.tolerance_pct);
      add_second_tool(v, calculon);
      all.add(v);
      if (!r.group.empty()) groups[r.group].add(v);
      ++n;
      if (!v.within) ++outside;
      if (!v.as_expected()) ++unexpected;
      if (!r.known_miss.empty()) findings.push_back("known miss, " + r.id + ": " + r.known_miss);
      if (!r.era_inferred.empty()) findings.push_back("era inferred, " + r.id + ": " + r.era_inferred);
      if (r.verified && !*r.verified)
        findings.push_back("not verified against its source, " + r.id + ": " + r.unverified);
      t.row({r.id, r.strategy, r.machine, std::to_string(r.gpus), v.config, r.convention,
             fmt(v.published_tflops, 1), fmt(v.predicted_tflops, 1), fmt(v.error_pct, 1),
             v.calculon_error_pct ? fmt(*v.calculon_error_pct, 1) : "-", v.fits ? "yes" : "no",
             v.within               ? "yes"
             : r.known_miss.empty() ? "NO"
                                    : "no (known)"});
      rows.push_back(validation_row_json(v));
    }
    if (n == 0) throw UsageError("no run '" + only_ + "' in " + runs_);
    std::cout << "predicted vs published TFLOP/s per GPU (" << runs_ << "), tolerance +-"
              << fmt(set.tolerance_pct, 0) << " %:\n"
              << t.str() << n - outside << " of " << n << " within tolerance\n";
    nlohmann::json summaries = nlohmann::json::array({all.json("all")});
    std::cout << all.str("all runs") << "\n";
    for (const auto& [name, g] : groups) {
      std::cout << g.str(name) << "\n";
      summaries.push_back(g.json(name));
    }
    std::cout << "(Calculon: " << calculon_ << ")\n";
    for (const std::string& f : findings) std::cout << "  " << f << "\n";
    if (!json_.empty()) {
      write_json(json_, {{"context", run_context(nullptr, ctx)},
                         {"runs_file", runs_},
                         {"tolerance_pct", set.tolerance_pct},
                         {"calculon_file", calculon_},
                         {"summaries", summaries},
                         {"rows", rows}});
      std::cout << "wrote " << json_ << "\n";
    }
    if (check_ && unexpected > 0) {
      std::cerr << "ovb-model: validation: " << unexpected << " of " << n
                << " runs not as the file states (outside the tolerance, or a known miss now "
                   "inside it: see the table)\n";
      return 1;
    }
    return 0;
  }

 private:
  std::string runs_ = default_validation_file(), calculon_ = default_calculon_file(), only_, json_;
  bool check_ = false;
};

}  // namespace

std::unique_ptr<Command> make_validate() {
  return std::make_unique<Validate>();
}

}  // namespace ovb::model::cli
