// ovb-model search: every valid configuration of a GPU count, ranked by predicted iteration time,
// for one strategy of the table (ovb/model/strategy.hpp: AxoNN's 4D algorithm, the Megatron-LM
// strategy) or all of them (--strategy); ovb-model versus: the best of each side by side.
// Slurm jobs for the top-k 4D configurations come from the slurm layer, which runs this search and
// reads its JSON: `slurm/emit-sbatch --out-dir DIR -- SEARCH_ARGS`.
#include <iostream>

#include "commands.hpp"
#include "model_options.hpp"
#include "ovb/cli.hpp"
#include "ovb/context.hpp"
#include "ovb/error.hpp"
#include "ovb/io.hpp"
#include "ovb/model/strategy.hpp"
#include "ovb/model/table.hpp"

namespace ovb::model::cli {

namespace {

class Search : public Command {
 public:
  explicit Search(bool versus) : versus_(versus) {
    if (versus_) strategy_ = "all";
  }

  void setup(CLI::App& sub) override {
    args_.add(sub);
    if (!versus_) {
      std::vector<std::string> words;
      std::string help;
      for (const Strategy* s : strategies()) {
        words.push_back(s->name);
        help += std::string(help.empty() ? "" : ", ") + s->name + " (" + s->about + ")";
      }
      words.push_back("all");
      help += std::string(" or all (") + (strategies().size() == 2 ? "both" : "each") +
              ", side by side)";
      sub.add_option("--strategy", strategy_, help)
          ->check(CLI::IsMember(words))
          ->capture_default_str();
    }
    for (const Strategy* s : strategies()) settings_.push_back(s->add_options(sub));
    sub.add_option("--gpus", gpus_, "Number of GPUs (ranks)")->required()->check(ovb::positive());
    sub.add_option("--top", top_, "Configurations to print and write (0 = all)")
        ->check(ovb::non_negative())
        ->capture_default_str();
    sub.add_flag("--include-unfit", include_unfit_,
                 "Also list configurations that do not fit in memory (after those that do)");
    sub.add_option("--json", json_, "Write the ranked configurations as JSON (results/SCHEMA.md)");
  }

  int run(const LaunchContext& ctx) override {
    const Machine mc = args_.load();
    const GptShape m = args_.shape();
    const GptPlanOptions base = args_.plan(mc);
    std::cout << describe(m) << ", " << m.parameter_count() << " parameters, batch " << base.batch
              << ", " << gpus_ << " GPUs on " << mc.name << "\n";
    nlohmann::json configs = nlohmann::json::array(), counts = nlohmann::json::object();
    nlohmann::json inputs = args_.inputs_json(m, base, mc);
    inputs["gpus"] = gpus_;
    std::vector<std::pair<const Strategy*, nlohmann::json>> bests;
    double ms_total = 0;
    for (std::size_t i = 0; i < strategies().size(); ++i) {
      const Strategy& s = *strategies()[i];
      const StrategyQuery q{m, &mc, gpus_, base, args_.choices(), settings_[i]()};
      s.write_inputs(q.settings, inputs);
      if (strategy_ != s.name && strategy_ != "all") continue;
      nlohmann::json best;
      ms_total += run_strategy(s, q, configs, counts[s.name], best);
      bests.emplace_back(&s, best);
    }
    nlohmann::json vs;
    if (strategy_ == "all") vs = versus_line(bests);

    if (!json_.empty()) {
      // The first strategy alone writes its counts flat: the search had no other when they came.
      const bool flat = strategy_ == strategies().front()->name;
      nlohmann::json out = {{"context", run_context(nullptr, ctx)},
                            {"strategy", strategy_},
                            {"inputs", inputs},
                            {"counts", flat ? counts[strategy_] : counts},
                            {"elapsed_ms", ms_total},
                            {"configs", configs}};
      if (!vs.is_null()) out["versus"] = vs;
      write_json(json_, out);
      std::cout << "wrote " << json_ << "\n";
    }
    if (configs.empty()) {
      // An empty ranking is not a result a script should go on with (nor emit jobs for).
      std::cerr << "ovb-model: error: none of the configurations fits in GPU memory: try "
                << "--recompute, more GPUs or a smaller batch (--include-unfit lists them anyway)"
                << std::endl;
      return 1;
    }
    return 0;
  }

  // One strategy: its search, its table; appends its configurations, sets its best that fits.
  double run_strategy(const Strategy& s, const StrategyQuery& q, nlohmann::json& configs,
                      nlohmann::json& counts, nlohmann::json& best) const {
    const StrategySearch r = s.search(q);
    if (r.size == 0) throw UsageError(r.invalid);
    std::cout << r.summary;
    std::vector<std::string> columns = {"rank"};
    columns.insert(columns.end(), r.columns.begin(), r.columns.end());
    TextTable t(columns);
    int rank = 0;
    for (std::size_t i = 0; i < r.size; ++i) {
      const bool fits = r.view(i).fits;
      if (!fits && !include_unfit_) break;
      if (top_ > 0 && rank >= top_) break;
      ++rank;
      nlohmann::json j = r.entry(i);
      j["rank"] = rank;
      std::vector<std::string> row = {std::to_string(rank)};
      for (std::string& cell : r.row(i, j)) row.push_back(std::move(cell));
      t.row(row);
      if (rank == 1 && fits) best = j;
      configs.push_back(j);
    }
    std::cout << (rank ? t.str() : "no " + std::string(s.short_title) + " configuration fits\n");
    if (best.is_null()) std::cout << r.none_fit;
    counts = r.counts;
    return r.elapsed_ms;
  }

  // The best of each strategy side by side: which is faster and by how much.
  static nlohmann::json versus_line(
      const std::vector<std::pair<const Strategy*, nlohmann::json>>& bests) {
    nlohmann::json vs = nlohmann::json::object();
    std::string missing;
    const Strategy* fast = nullptr;  // the fastest that fits
    const Strategy* second = nullptr;
    double t_fast = 0, t_second = 0;
    for (const auto& [s, b] : bests) {
      vs[std::string("best_") + s->name] = b;
      if (b.is_null()) {
        missing += (missing.empty() ? "" : "; ") + std::string("no ") + s->short_title +
                   " configuration fits";
        continue;
      }
      const double t = b["predicted_ms"].get<double>();
      if (!fast || t < t_fast) {
        second = fast;
        t_second = t_fast;
        fast = s;
        t_fast = t;
      } else if (!second || t < t_second) {
        second = s;
        t_second = t;
      }
    }
    if (!missing.empty()) {
      vs["faster"] = fast ? fast->name : "none";
      std::cout << "versus: " << missing << "\n";
      return vs;
    }
    const double ratio = t_second / t_fast;
    vs["faster"] = fast->name;
    vs["speedup"] = ratio;
    std::cout << "versus: ";
    for (std::size_t i = 0; i < bests.size(); ++i) {
      const auto& [s, b] = bests[i];
      std::cout << (i ? ", " : "") << "best " << s->short_title << " " << s->describe(b) << " "
                << fmt(b["predicted_ms"].get<double>(), 1) << " ms (MFU "
                << fmt(100 * b["flops"]["mfu"].get<double>(), 1) << " %)";
    }
    std::cout << ": " << fast->title << " is " << fmt(ratio, 2) << "x faster (" << second->title
              << " takes " << fmt(100 * (ratio - 1), 1) << " % longer per iteration)\n";
    return vs;
  }

 private:
  bool versus_ = false;
  ModelArgs args_;
  std::string strategy_ = strategies().front()->name;
  std::vector<std::function<nlohmann::json()>> settings_;  // per strategy of the table
  int gpus_ = 0, top_ = 10;
  bool include_unfit_ = false;
  std::string json_;
};

}  // namespace

std::unique_ptr<Command> make_search() {
  return std::make_unique<Search>(false);
}

std::unique_ptr<Command> make_versus() {
  return std::make_unique<Search>(true);
}

}  // namespace ovb::model::cli
