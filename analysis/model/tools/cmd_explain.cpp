// ovb-model explain CONFIG: one configuration term by term.
#include <iostream>

#include "commands.hpp"
#include "model_options.hpp"
#include "ovb/context.hpp"
#include "ovb/io.hpp"
#include "ovb/model/explain.hpp"

namespace ovb::model::cli {

namespace {

class Explain : public Command {
 public:
  void setup(CLI::App& sub) override {
    sub.add_option("config", config_, "Grid GXxGYxGZxGDATA[:order], e.g. 2x2x2x4 or 2x2x2x4:y,x,z")
        ->required();
    args_.add(sub);
    sub.add_option("--json", json_, "Write every term as JSON");
  }

  int run(const LaunchContext& ctx) override {
    const Machine mc = args_.load();
    const GptShape m = args_.shape();
    GptPlanOptions o = args_.plan(mc);
    o.grid = GridShape::parse(config_);
    const Prediction p = predict(m, o, mc);  // an impossible grid: the plan's validation message
    std::cout << explain_text(p);
    if (!json_.empty()) {
      nlohmann::json j = explain_json(p);
      j["context"] = run_context(nullptr, ctx);
      j["inputs"] = args_.inputs_json(m, o, mc);
      write_json(json_, j);
      std::cout << "wrote " << json_ << "\n";
    }
    return 0;
  }

 private:
  ModelArgs args_;
  std::string config_, json_;
};

}  // namespace

std::unique_ptr<Command> make_explain() {
  return std::make_unique<Explain>();
}

}  // namespace ovb::model::cli
