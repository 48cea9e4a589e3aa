// ovb-model explain CONFIG: one configuration term by term; --timeline FILE: its predicted
// iteration as a trace (timeline_trace.hpp) for ovb-trace analyze and Perfetto.
#include <CLI/CLI.hpp>

#include <iostream>

#include "commands.hpp"
#include "model_options.hpp"
#include "ovb/context.hpp"
#include "ovb/error.hpp"
#include "ovb/io.hpp"
#include "ovb/model/choices.hpp"
#include "ovb/model/explain.hpp"
#include "ovb/model/timeline_trace.hpp"
#include "ovb/output_file.hpp"

namespace ovb::model::cli {

namespace {

class Explain : public Command {
 public:
  void setup(CLI::App& sub) override {
    sub.add_option("config", config_, "Grid GXxGYxGZxGDATA[:order], e.g. 2x2x2x4 or 2x2x2x4:y,x,z")
        ->required();
    args_.add(sub);
    sub.add_option("--json", json_, "Write every term as JSON");
    sub.add_option("--timeline", timeline_,
                   "Write the predicted iteration as a trace in the suite's format (one rank, a "
                   "track per stream; docs/trace-format.md): for ovb-trace analyze and Perfetto");
  }

  int run(const LaunchContext& ctx) override {
    if (is_stdout_name(json_) && is_stdout_name(timeline_))
      throw UsageError("--json and --timeline both name standard output; give one a file");
    const Machine mc = args_.load();
    const GptShape m = args_.shape();
    GptPlanOptions o = args_.plan(mc);
    o.grid = GridShape::parse(config_);
    // An impossible grid: the plan's validation message. With auto: the variant search picks.
    const Choices ch = args_.choices();
    const Prediction p = choose(m, o, ch, mc);
    if (ch.micro_batch || ch.shard_optimizer || ch.tp_chunks)
      std::cout << "chosen (the fastest that fits, else the smallest): micro-batch "
                << micro_batch(p.options) << " (" << micro_steps(p.options) << " micro-step"
                << (micro_steps(p.options) > 1 ? "s" : "") << "), optimizer "
                << (p.options.shard_optimizer ? "sharded" : "not sharded")
                << (gradients_sharded(p.options) ? ", gradients too" : "") << ", tp "
                << (p.options.otp ? std::to_string(p.options.tp_chunks) + " chunks" : "off")
                << " among " << plan_variants(m, p.options, ch).size() << " variants\n";
    std::cout << explain_text(p);
    if (!json_.empty()) {
      nlohmann::json j = explain_json(p);
      j["context"] = run_context(nullptr, ctx);
      j["inputs"] = args_.inputs_json(m, p.options, mc);
      write_json(json_, j);
      std::cout << "wrote " << json_ << "\n";
    }
    if (!timeline_.empty()) {
      nlohmann::json c = run_context(nullptr, ctx);
      c["inputs"] = args_.inputs_json(m, p.options, mc);
      write_timeline_trace(timeline_, p, predicted_spans(p, mc), std::move(c));
      std::cout << "wrote " << timeline_ << "\n";
    }
    return 0;
  }

 private:
  ModelArgs args_;
  std::string config_, json_, timeline_;
};

}  // namespace

std::unique_ptr<Command> make_explain() {
  return std::make_unique<Explain>();
}

}  // namespace ovb::model::cli
