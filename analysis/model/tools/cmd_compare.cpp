// ovb-model compare: predicted vs measured gpt4d configurations.
#include <CLI/CLI.hpp>

#include <iostream>

#include "commands.hpp"
#include "ovb/context.hpp"
#include "ovb/io.hpp"
#include "ovb/model/compare.hpp"

namespace ovb::model::cli {

namespace {

class Compare : public Command {
 public:
  void setup(CLI::App& sub) override {
    sub.add_option(
           "inputs", inputs_,
           "gpt4d results (--out) and ovb-trace analyses (--json), or folders holding them; "
           "RUN.trace-analysis.json pairs with RUN.json")
        ->required();
    sub.add_option("--machine", machine_, "Machine file or preset (e.g. the calibrated one)")
        ->required();
    sub.add_option("--top-k", k_, "Is the measured fastest among the predicted k fastest?")
        ->capture_default_str();
    sub.add_option("--json", json_, "Write the comparison as JSON (results/SCHEMA.md, compare)");
  }

  int run(const LaunchContext& ctx) override {
    const Machine mc = load_machine(machine_);
    std::vector<std::string> skipped;
    const std::vector<MeasuredRun> runs = load_runs(inputs_, &skipped);
    for (const std::string& s : skipped) std::cerr << "warning: skipped " << s << "\n";
    const Comparison c = compare(runs, mc, k_);
    std::cout << "model " << mc.name << " vs measurement\n" << c.text;
    if (!json_.empty()) {
      nlohmann::json j = c.doc;
      j["context"] = run_context(nullptr, ctx);
      write_json(json_, j);
      std::cout << "wrote " << json_ << "\n";
    }
    return 0;
  }

 private:
  std::vector<std::string> inputs_;
  std::string machine_, json_;
  int k_ = 3;
};

}  // namespace

std::unique_ptr<Command> make_compare() {
  return std::make_unique<Compare>();
}

}  // namespace ovb::model::cli
