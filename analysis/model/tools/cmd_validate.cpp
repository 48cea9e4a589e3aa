// ovb-model validate: predict every published run of the validation file with its stated
// strategy and configuration, and print predicted vs published TFLOP/s per GPU with the error.
// --check makes a run outside the file's tolerance (or one whose configuration does not fit) a
// failure (exit status 1) unless the file states it as a known miss with its cause, and a known
// miss that comes inside the tolerance a failure too: the ctest of the validation.
#include <iostream>
#include <string>
#include <vector>

#include "commands.hpp"
#include "ovb/context.hpp"
#include "ovb/error.hpp"
#include "ovb/io.hpp"
#include "ovb/model/table.hpp"
#include "ovb/model/validate.hpp"

namespace ovb::model::cli {

namespace {

class Validate : public Command {
 public:
  void setup(CLI::App& sub) override {
    sub.add_option("--runs", runs_, "Validation data file")->capture_default_str();
    sub.add_option("--only", only_, "Only the run with this id");
    sub.add_option("--json", json_, "Write the table as JSON");
    sub.add_flag("--check", check_, "Exit 1 when a run is outside the file's tolerance");
  }

  int run(const LaunchContext& ctx) override {
    const ValidationSet set = load_published_runs(runs_);
    TextTable t({"run", "strategy", "machine", "GPUs", "configuration", "FLOPs", "published TF",
                 "predicted TF", "error %", "fits", "within"});
    std::vector<std::string> findings;
    nlohmann::json rows = nlohmann::json::array();
    int n = 0, outside = 0, unexpected = 0;
    for (const PublishedRun& r : set.runs) {
      if (!only_.empty() && r.id != only_) continue;
      const ValidationRow v = validate_run(r, set.tolerance_pct);
      ++n;
      if (!v.within) ++outside;
      if (!v.as_expected()) ++unexpected;
      if (!r.known_miss.empty()) findings.push_back("known miss, " + r.id + ": " + r.known_miss);
      if (r.verified && !*r.verified)
        findings.push_back("not verified against its source, " + r.id + ": " + r.unverified);
      t.row({r.id, r.strategy, r.machine, std::to_string(r.gpus), v.config, r.convention,
             fmt(r.published_tflops, 1), fmt(v.predicted_tflops, 1), fmt(v.error_pct, 1),
             v.fits ? "yes" : "no",
             v.within ? "yes" : r.known_miss.empty() ? "NO" : "no (known)"});
      rows.push_back(validation_row_json(v));
    }
    if (n == 0) throw UsageError("no run '" + only_ + "' in " + runs_);
    std::cout << "predicted vs published TFLOP/s per GPU (" << runs_ << "), tolerance +-"
              << fmt(set.tolerance_pct, 0) << " %:\n"
              << t.str() << n - outside << " of " << n << " within tolerance\n";
    for (const std::string& f : findings) std::cout << "  " << f << "\n";
    if (!json_.empty()) {
      write_json(json_, {{"context", run_context(nullptr, ctx)},
                         {"runs_file", runs_},
                         {"tolerance_pct", set.tolerance_pct},
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
  std::string runs_ = default_validation_file(), only_, json_;
  bool check_ = false;
};

}  // namespace

std::unique_ptr<Command> make_validate() {
  return std::make_unique<Validate>();
}

}  // namespace ovb::model::cli
