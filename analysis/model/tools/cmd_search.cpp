// ovb-model search: every valid configuration of a GPU count, ranked by predicted iteration time.
// Slurm jobs for the top-k configurations come from the slurm layer, which runs this search and
// reads its JSON: `slurm/emit-sbatch --out-dir DIR -- SEARCH_ARGS`.
#include <chrono>
#include <iostream>

#include "commands.hpp"
#include "model_options.hpp"
#include "ovb/cli.hpp"
#include "ovb/context.hpp"
#include "ovb/error.hpp"
#include "ovb/io.hpp"
#include "ovb/model/predict.hpp"
#include "ovb/model/search.hpp"
#include "ovb/model/table.hpp"

namespace ovb::model::cli {

namespace {

class Search : public Command {
 public:
  void setup(CLI::App& sub) override {
    args_.add(sub);
    sub.add_option("--gpus", gpus_, "Number of GPUs (ranks)")->required()->check(ovb::positive());
    sub.add_option("--top", top_, "Configurations to print and write (0 = all)")
        ->check(ovb::non_negative())
        ->capture_default_str();
    sub.add_flag("--pow2", pow2_,
                 "Powers of two only (AxoNN's enumeration); default: all divisors");
    sub.add_option("--orders", orders_,
                   "X/Y/Z placement orders: all (every distinct one) or default (x,y,z)")
        ->check(CLI::IsMember({"all", "default"}))
        ->capture_default_str();
    sub.add_flag("--include-unfit", include_unfit_,
                 "Also list configurations that do not fit in memory (after those that do)");
    sub.add_option("--json", json_, "Write the ranked configurations as JSON (results/SCHEMA.md)");
  }

  int run(const LaunchContext& ctx) override {
    const Machine mc = args_.load();
    const GptShape m = args_.shape();
    SearchOptions so;
    so.gpus = gpus_;
    so.pow2_only = pow2_;
    so.all_orders = orders_ == "all";
    so.base = args_.plan(mc);
    const auto t0 = std::chrono::steady_clock::now();
    const SearchResult r = search(m, so, mc);
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();

    if (r.configs == 0)  // nothing to rank: the model or batch fits no grid of this GPU count
      throw UsageError("no valid configuration of " + std::to_string(gpus_) + " GPUs: " +
                       (r.invalid > 0 ? "e.g. " + r.invalid_example : std::string("no grid")));
    std::cout << "GPT " << m.layers << "x" << m.hidden << " (heads " << m.heads << ", seq " << m.seq
              << ", vocab " << m.vocab << "), batch " << so.base.batch << ", " << gpus_
              << " GPUs, overlap " << overlap_string(so.base) << " on " << mc.name << "\n"
              << r.grids << " grids (" << (pow2_ ? "powers of two" : "all divisors") << "), "
              << r.invalid << " invalid, " << r.configs << " configurations with orders, "
              << r.unfit << " do not fit in " << fmt(r.memory_limit_bytes / 1e9) << " GB; "
              << fmt(ms, 1) << " ms\n";
    if (r.invalid > 0) std::cout << "  e.g. " << r.invalid_example << "\n";
    TextTable t({"rank", "grid", "order", "iter ms", "compute", "interf", "exposed", "x", "y", "z",
                 "data", "world", "mem GB", "fits"});
    nlohmann::json configs = nlohmann::json::array();
    int rank = 0;
    for (const Candidate& c : r.ranked) {
      if (!c.fits && !include_unfit_) break;
      if (top_ > 0 && rank >= top_) break;
      ++rank;
      const Timeline& tl = c.timeline;
      std::vector<std::string> row = {
          std::to_string(rank), std::to_string(c.grid.gx) + "x" + std::to_string(c.grid.gy) + "x" +
                                    std::to_string(c.grid.gz) + "x" + std::to_string(c.grid.gdata)};
      nlohmann::json j = config_json(c.grid, tl, c.memory_bytes, r.memory_limit_bytes, c.fits);
      j["rank"] = rank;
      row.push_back(j["order"]);
      for (double v : {tl.iteration_us, tl.compute_us, tl.interference_us, tl.exposed_total_us()})
        row.push_back(fmt(v / 1e3, 3));
      for (Group g : kGroups) row.push_back(fmt(tl.comm_group_us(g) / 1e3, 3));
      row.push_back(fmt(c.memory_bytes / 1e9));
      row.push_back(c.fits ? "yes" : "no");
      t.row(row);
      configs.push_back(j);
    }
    std::cout << (rank ? t.str() : "no configuration fits\n");
    if (!json_.empty()) {
      nlohmann::json inputs = args_.inputs_json(m, so.base, mc);
      inputs["gpus"] = gpus_;
      inputs["pow2_only"] = pow2_;
      inputs["orders"] = orders_;
      write_json(json_, {{"context", run_context(nullptr, ctx)},
                         {"inputs", inputs},
                         {"counts",
                          {{"grids", r.grids},
                           {"invalid", r.invalid},
                           {"configs", r.configs},
                           {"unfit", r.unfit}}},
                         {"elapsed_ms", ms},
                         {"configs", configs}});
      std::cout << "wrote " << json_ << "\n";
    }
    return 0;
  }

 private:
  ModelArgs args_;
  int gpus_ = 0, top_ = 10;
  bool pow2_ = false, include_unfit_ = false;
  std::string orders_ = "all", json_;
};

}  // namespace

std::unique_ptr<Command> make_search() {
  return std::make_unique<Search>();
}

}  // namespace ovb::model::cli
