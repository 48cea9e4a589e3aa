// ovb-model search: every valid configuration of a GPU count, ranked by predicted iteration time,
// for AxoNN's 4D algorithm, the Megatron-LM strategy or both (--strategy); ovb-model versus: the
// best of each side by side.
// Slurm jobs for the top-k 4D configurations come from the slurm layer, which runs this search and
// reads its JSON: `slurm/emit-sbatch --out-dir DIR -- SEARCH_ARGS`.
#include <chrono>
#include <iostream>

#include "commands.hpp"
#include "megatron_options.hpp"
#include "model_options.hpp"
#include "ovb/cli.hpp"
#include "ovb/context.hpp"
#include "ovb/error.hpp"
#include "ovb/io.hpp"
#include "ovb/model/flops.hpp"
#include "ovb/model/megatron_search.hpp"
#include "ovb/model/predict.hpp"
#include "ovb/model/search.hpp"
#include "ovb/model/table.hpp"

namespace ovb::model::cli {

namespace {

class Search : public Command {
 public:
  explicit Search(bool versus) : versus_(versus) {
    if (versus_) meg_.strategy = "all";
  }

  void setup(CLI::App& sub) override {
    args_.add(sub);
    meg_.add(sub, !versus_);
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
    const GptPlanOptions base = args_.plan(mc);
    std::cout << describe(m) << ", " << m.parameter_count() << " parameters, batch " << base.batch
              << ", " << gpus_ << " GPUs on " << mc.name << "\n";
    nlohmann::json configs = nlohmann::json::array(), counts = nlohmann::json::object();
    nlohmann::json best_4d, best_meg;
    double ms_total = 0;
    if (meg_.want_4d()) ms_total += run_4d(m, base, mc, configs, counts, best_4d);
    if (meg_.want_megatron()) ms_total += run_megatron(m, base, mc, configs, counts, best_meg);
    nlohmann::json vs;
    if (meg_.strategy == "all") vs = versus_line(best_4d, best_meg);

    if (!json_.empty()) {
      nlohmann::json inputs = args_.inputs_json(m, base, mc);
      inputs["gpus"] = gpus_;
      inputs["pow2_only"] = pow2_;
      inputs["orders"] = orders_;
      inputs["megatron"] = meg_.inputs_json();
      nlohmann::json out = {{"context", run_context(nullptr, ctx)},
                            {"strategy", meg_.strategy},
                            {"inputs", inputs},
                            {"counts", meg_.strategy == "4d" ? counts["4d"] : counts},
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

  // AxoNN's 4D algorithm: every grid and order; prints its table, appends its configurations.
  double run_4d(const GptShape& m, const GptPlanOptions& base, const Machine& mc,
                nlohmann::json& configs, nlohmann::json& counts, nlohmann::json& best) const {
    SearchOptions so;
    so.gpus = gpus_;
    so.pow2_only = pow2_;
    so.all_orders = orders_ == "all";
    so.base = base;
    so.choose = args_.choices();
    const auto t0 = std::chrono::steady_clock::now();
    const SearchResult r = search(m, so, mc);
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();

    if (r.configs == 0)  // nothing to rank: the model or batch fits no grid of this GPU count
      throw UsageError("no valid configuration of " + std::to_string(gpus_) + " GPUs: " +
                       (r.invalid > 0 ? "e.g. " + r.invalid_example : std::string("no grid")));
    std::cout << "4D: overlap " << overlap_string(so.base) << "; " << r.grids << " grids ("
              << (pow2_ ? "powers of two" : "all divisors") << "), " << r.invalid << " invalid, "
              << r.configs << " configurations with orders, " << r.unfit << " do not fit in "
              << fmt(r.memory_limit_bytes / 1e9) << " GB; " << fmt(ms, 1) << " ms\n";
    if (so.choose.micro_batch || so.choose.shard_optimizer)
      std::cout << "  chosen per configuration (the fastest that fits, else the smallest):"
                << (so.choose.micro_batch ? " micro-batch (one micro-step or a divisor of the "
                                            "local batch)"
                                          : "")
                << (so.choose.micro_batch && so.choose.shard_optimizer ? " and" : "")
                << (so.choose.shard_optimizer
                        ? (so.base.shard_gradients ? " sharding (off, optimizer, optimizer and gradients)"
                                                   : " sharded optimizer (off or on)")
                        : "")
                << "; "
                << r.variants << " variants costed\n";
    if (r.unfit > 0) {
      std::cout << "  largest memory term of those that do not fit:";
      for (const auto& [term, n] : r.unfit_by_term) std::cout << " " << term << " " << n;
      std::cout << "\n";
    }
    if (r.invalid > 0) std::cout << "  e.g. " << r.invalid_example << "\n";
    TextTable t({"rank", "grid", "order", "mb", "steps", "shard", "iter ms", "compute", "interf",
                 "exposed", "x", "y", "z", "data", "world", "mem GB", "fits", "MFU %"});
    int rank = 0;
    const Recompute rc = base.recompute ? Recompute::full : Recompute::none;
    for (const Candidate& c : r.ranked) {
      if (!c.fits && !include_unfit_) break;
      if (top_ > 0 && rank >= top_) break;
      ++rank;
      const Timeline& tl = c.timeline;
      std::vector<std::string> row = {
          std::to_string(rank), std::to_string(c.grid.gx) + "x" + std::to_string(c.grid.gy) + "x" +
                                    std::to_string(c.grid.gz) + "x" + std::to_string(c.grid.gdata)};
      nlohmann::json j = config_json(c.grid, tl, c.memory_bytes, r.memory_limit_bytes, c.fits);
      j["strategy"] = "4d";
      j["rank"] = rank;
      j["recompute"] = name_of(rc);
      const FlopReport f =
          flop_report(m, base.batch, rc, tl.iteration_us, gpus_, mc.peak());
      j["flops"] = flops_json(f);
      j.update(choice_json(c.options));
      row.push_back(j["order"]);
      row.push_back(std::to_string(micro_batch(c.options)));
      row.push_back(std::to_string(micro_steps(c.options)));
      row.push_back(gradients_sharded(c.options) ? "grads" : c.options.shard_optimizer ? "on" : "off");
      for (double v : {tl.iteration_us, tl.compute_us, tl.interference_us, tl.exposed_total_us()})
        row.push_back(fmt(v / 1e3, 3));
      for (Group g : kGroups) row.push_back(fmt(tl.comm_group_us(g) / 1e3, 3));
      row.push_back(fmt(c.memory_bytes / 1e9));
      row.push_back(c.fits ? "yes" : "no");
      row.push_back(fmt(100 * f.mfu, 1));
      t.row(row);
      if (rank == 1 && c.fits) best = j;
      configs.push_back(j);
    }
    std::cout << (rank ? t.str() : "no 4D configuration fits\n");
    if (best.is_null()) {  // say what memory costs: the fastest configuration ignoring it
      const Candidate* f = nullptr;
      for (const Candidate& c : r.ranked)
        if (!f || c.timeline.iteration_us < f->timeline.iteration_us) f = &c;
      if (f)
        std::cout << "  fastest ignoring memory: " << f->grid.str() << " micro-batch "
                  << micro_batch(f->options) << (f->options.shard_optimizer ? ", sharded" : "")
                  << " " << fmt(f->timeline.iteration_us / 1e3, 1) << " ms, "
                  << fmt(f->memory_bytes / 1e9) << " GB per GPU"
                  << (so.choose.micro_batch || so.choose.shard_optimizer
                          ? " (of each configuration's smallest variant)"
                          : "")
                  << "\n";
    }
    counts["4d"] = {{"grids", r.grids},     {"invalid", r.invalid},
                    {"configs", r.configs}, {"variants", r.variants},
                    {"unfit", r.unfit},     {"unfit_by_term", r.unfit_by_term}};
    return ms;
  }

  // The Megatron-LM strategy: prints its table, appends its configurations.
  double run_megatron(const GptShape& m, const GptPlanOptions& base, const Machine& mc,
                      nlohmann::json& configs, nlohmann::json& counts,
                      nlohmann::json& best) const {
    const auto t0 = std::chrono::steady_clock::now();
    const MegatronSearchResult r =
        search_megatron(m, meg_.search_options(gpus_, base.batch, base.act_dtype), mc);
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (r.configs == 0)
      throw UsageError("no valid Megatron configuration of " + std::to_string(gpus_) +
                       " GPUs (tp must divide the heads" +
                       (meg_.tp_across_nodes
                            ? std::string()
                            : " and stay in a node of " + std::to_string(mc.ranks_per_node())) +
                       (meg_.first_stage_layers > 0 || meg_.last_stage_layers > 0
                            ? ", pp - 1 or pp - 2 the layers left after the first/last stage's"
                            : ", pp the layers") +
                       ", dp * micro-batch the batch)");
    std::cout << "Megatron-LM: " << r.configs << " configurations, " << r.unfit
              << " do not fit in " << fmt(r.memory_limit_bytes / 1e9) << " GB; " << fmt(ms, 1)
              << " ms\n";
    TextTable t({"rank", "tp", "pp", "dp", "mb", "v", "recompute", "iter ms", "bubble", "p2p",
                 "dp exp", "mem GB", "fits", "MFU %", "HFU %"});
    int rank = 0;
    for (const MegatronPrediction& p : r.ranked) {
      if (!p.fits && !include_unfit_) break;
      if (top_ > 0 && rank >= top_) break;
      ++rank;
      nlohmann::json j = megatron_config_json(m, p, mc);
      j["rank"] = rank;
      const MegatronConfig& c = p.config;
      t.row({std::to_string(rank), std::to_string(c.tp), std::to_string(c.pp),
             std::to_string(c.dp), std::to_string(c.micro_batch),
             std::to_string(c.virtual_stages), std::string(name_of(c.recompute)),
             fmt(p.time.iteration_us / 1e3, 3), fmt(p.time.bubble_us / 1e3, 3),
             fmt(p.time.p2p_us / 1e3, 3), fmt(p.time.dp_exposed_us / 1e3, 3),
             fmt(p.memory.total() / 1e9), p.fits ? "yes" : "no",
             fmt(100 * j["flops"]["mfu"].get<double>(), 1),
             fmt(100 * j["flops"]["hfu"].get<double>(), 1)});
      if (rank == 1 && p.fits) best = j;
      configs.push_back(j);
    }
    std::cout << (rank ? t.str() : "no Megatron configuration fits\n");
    if (best.is_null()) {
      const MegatronPrediction* f = nullptr;
      for (const MegatronPrediction& p : r.ranked)
        if (!f || p.time.iteration_us < f->time.iteration_us) f = &p;
      if (f)
        std::cout << "  fastest ignoring memory: tp=" << f->config.tp << " pp=" << f->config.pp
                  << " dp=" << f->config.dp << " mb=" << f->config.micro_batch << " "
                  << name_of(f->config.recompute) << " " << fmt(f->time.iteration_us / 1e3, 1)
                  << " ms, " << fmt(f->memory.total() / 1e9) << " GB per GPU\n";
      if (!meg_.tp_across_nodes)
        std::cout << "  (tp stays inside a node of " << mc.ranks_per_node()
                  << " GPUs; --megatron-tp-across-nodes also searches larger tp)\n";
    }
    counts["megatron"] = {{"configs", r.configs}, {"unfit", r.unfit}};
    return ms;
  }

  // The best of each strategy side by side: which is faster and by how much.
  static nlohmann::json versus_line(const nlohmann::json& a, const nlohmann::json& b) {
    nlohmann::json vs = {{"best_4d", a}, {"best_megatron", b}};
    if (a.is_null() || b.is_null()) {
      vs["faster"] = a.is_null() && b.is_null() ? "none" : a.is_null() ? "megatron" : "4d";
      std::cout << "versus: " << (a.is_null() ? "no 4D configuration fits" : "")
                << (a.is_null() && b.is_null() ? "; " : "")
                << (b.is_null() ? "no Megatron configuration fits" : "") << "\n";
      return vs;
    }
    const double ta = a["predicted_ms"].get<double>(), tb = b["predicted_ms"].get<double>();
    const bool four_d = ta <= tb;
    const double ratio = four_d ? tb / ta : ta / tb;
    vs["faster"] = four_d ? "4d" : "megatron";
    vs["speedup"] = ratio;
    std::cout << "versus: best 4D " << a["gx"] << "x" << a["gy"] << "x" << a["gz"] << "x"
              << a["gdata"].get<int>() << " " << fmt(ta, 1) << " ms (MFU "
              << fmt(100 * a["flops"]["mfu"].get<double>(), 1) << " %), best Megatron tp="
              << b["tp"] << " pp=" << b["pp"] << " dp=" << b["dp"] << " mb=" << b["micro_batch"]
              << " v=" << b["virtual_stages"] << " " << b["recompute"].get<std::string>()
              << " (Megatron-LM era " << b["era"].get<std::string>() << ") " << fmt(tb, 1) << " ms (MFU " << fmt(100 * b["flops"]["mfu"].get<double>(), 1)
              << " %): " << (four_d ? "4D" : "Megatron-LM") << " is " << fmt(ratio, 2)
              << "x faster (" << (four_d ? "Megatron-LM" : "4D") << " takes " << fmt(100 * (ratio - 1), 1)
              << " % longer per iteration)\n";
    return vs;
  }

 private:
  bool versus_ = false;
  ModelArgs args_;
  MegatronArgs meg_;
  int gpus_ = 0, top_ = 10;
  bool pow2_ = false, include_unfit_ = false;
  std::string orders_ = "all", json_;
};

}  // namespace

std::unique_ptr<Command> make_search() {
  return std::make_unique<Search>(false);
}

std::unique_ptr<Command> make_versus() {
  return std::make_unique<Search>(true);
}

}  // namespace ovb::model::cli
