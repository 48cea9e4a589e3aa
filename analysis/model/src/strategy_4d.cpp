// AxoNN's 4D algorithm as a strategy of the table (strategy.hpp): every (Gx, Gy, Gz, Gdata) grid
// and X/Y/Z order of the GPU count (search.hpp), with the run configuration's schedule options
// (overlap flags, recompute, caching, sharding) and its own: --pow2 and --orders.
#include <CLI/CLI.hpp>

#include <chrono>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "ovb/error.hpp"
#include "ovb/model/flops.hpp"
#include "ovb/model/megatron.hpp"  // Recompute, name_of
#include "ovb/model/predict.hpp"
#include "ovb/model/search.hpp"
#include "ovb/model/strategy.hpp"
#include "ovb/model/table.hpp"

namespace ovb::model {

namespace {

nlohmann::json defaults() {
  return {{"pow2_only", false}, {"orders", "all"}};
}

std::function<nlohmann::json()> add_options(CLI::App& app) {
  struct Args {
    bool pow2 = false;
    std::string orders = "all";
  };
  auto a = std::make_shared<Args>();
  app.add_flag("--pow2", a->pow2,
               "Powers of two only (AxoNN's enumeration); default: all divisors");
  app.add_option("--orders", a->orders,
                 "X/Y/Z placement orders: all (every distinct one) or default (x,y,z)")
      ->check(CLI::IsMember({"all", "default"}))
      ->capture_default_str();
  return [a] { return nlohmann::json{{"pow2_only", a->pow2}, {"orders", a->orders}}; };
}

// Flat in "inputs": the search had no other strategy when they were added.
void write_inputs(const nlohmann::json& s, nlohmann::json& inputs) {
  inputs["pow2_only"] = s.at("pow2_only");
  inputs["orders"] = s.at("orders");
}

void from_config(const nlohmann::json& cfg, StrategyQuery& q) {
  q.settings["pow2_only"] = cfg.value("pow2", false);
  q.base.grad_dtype = parse_dtype(cfg.value("grad_dtype", std::string("fp32")));
  q.base.recompute = cfg.value("recompute", std::string("none")) == "full";
  parse_overlap(cfg.value("overlap", std::string("none")), q.base);
}

Recompute recompute_of(const GptPlanOptions& o) {
  return o.recompute ? Recompute::full : Recompute::none;
}

StrategyView view_of(const GridShape& g, const Timeline& t, double memory_bytes, bool fits) {
  return {t.iteration_us,
          memory_bytes,
          fits,
          g.str(),
          {{"compute", t.compute_us / 1e3},
           {"interference", t.interference_us / 1e3},
           {"exposed", t.exposed_total_us() / 1e3}}};
}

// What the search prints above its table: the counts, what it chose, why some do not fit.
std::string summary(const SearchResult& r, const SearchOptions& so, double ms) {
  std::ostringstream os;
  os << "4D: overlap " << overlap_string(so.base) << "; " << r.grids << " grids ("
     << (so.pow2_only ? "powers of two" : "all divisors") << "), " << r.invalid << " invalid, "
     << r.configs << " configurations with orders, " << r.unfit << " do not fit in "
     << fmt(r.memory_limit_bytes / 1e9) << " GB; " << fmt(ms, 1) << " ms\n";
  std::vector<std::string> chosen;
  if (so.choose.micro_batch)
    chosen.emplace_back("micro-batch (one micro-step or a divisor of the local batch)");
  if (so.choose.shard_optimizer)
    chosen.emplace_back(so.base.shard_gradients
                            ? "sharding (off, optimizer, optimizer and gradients)"
                            : "sharded optimizer (off or on)");
  if (so.choose.tp_chunks)
    chosen.emplace_back("tp chunks (off, or 2, 4, 8 where they divide the tokens and Gx*Gy > 1)");
  if (!chosen.empty()) {
    os << "  chosen per configuration (the fastest that fits, else the smallest):";
    for (std::size_t i = 0; i < chosen.size(); ++i)
      os << (i == 0 ? " " : i + 1 == chosen.size() ? " and " : ", ") << chosen[i];
    os << "; " << r.variants << " variants costed\n";
  }
  if (r.unfit > 0) {
    os << "  largest memory term of those that do not fit:";
    for (const auto& [term, n] : r.unfit_by_term) os << " " << term << " " << n;
    os << "\n";
  }
  if (r.invalid > 0) os << "  e.g. " << r.invalid_example << "\n";
  return os.str();
}

// When none fits, what memory costs: the fastest configuration ignoring it.
std::string none_fit(const SearchResult& r, const SearchOptions& so) {
  const Candidate* f = nullptr;
  for (const Candidate& c : r.ranked)
    if (!f || c.timeline.iteration_us < f->timeline.iteration_us) f = &c;
  if (!f) return "";
  std::ostringstream os;
  os << "  fastest ignoring memory: " << f->grid.str() << " micro-batch " << micro_batch(f->options)
     << (f->options.shard_optimizer ? ", sharded" : "")
     << (f->options.otp ? ", tp " + std::to_string(f->options.tp_chunks) + " chunks" : "") << " "
     << fmt(f->timeline.iteration_us / 1e3, 1) << " ms, " << fmt(f->memory_bytes / 1e9)
     << " GB per GPU"
     << (so.choose.micro_batch || so.choose.shard_optimizer || so.choose.tp_chunks
             ? " (of each configuration's smallest variant)"
             : "")
     << "\n";
  return os.str();
}

StrategySearch search_4d(const StrategyQuery& q) {
  SearchOptions so;
  so.gpus = q.gpus;
  so.pow2_only = q.settings.value("pow2_only", false);
  so.all_orders = q.settings.value("orders", std::string("all")) == "all";
  so.base = q.base;
  so.choose = q.choose;
  const auto t0 = std::chrono::steady_clock::now();
  auto r = std::make_shared<const SearchResult>(search(q.model, so, *q.machine));
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();

  StrategySearch out;
  out.size = r->ranked.size();
  out.elapsed_ms = ms;
  if (r->configs == 0)  // nothing to rank: the model or batch fits no grid of this GPU count
    out.invalid = "no valid configuration of " + std::to_string(q.gpus) + " GPUs: " +
                  (r->invalid > 0 ? "e.g. " + r->invalid_example : std::string("no grid"));
  out.view = [r](std::size_t i) {
    const Candidate& c = r->ranked.at(i);
    return view_of(c.grid, c.timeline, c.memory_bytes, c.fits);
  };
  const GptShape m = q.model;
  const GptPlanOptions base = q.base;
  const Machine* mc = q.machine;
  const int gpus = q.gpus;
  out.entry = [r, m, base, mc, gpus](std::size_t i) {
    const Candidate& c = r->ranked.at(i);
    nlohmann::json j =
        config_json(c.grid, c.timeline, c.memory_bytes, r->memory_limit_bytes, c.fits);
    j["strategy"] = "4d";
    j["recompute"] = name_of(recompute_of(base));
    j["flops"] = flops_json(
        flop_report(m, base.batch, recompute_of(base), c.timeline.iteration_us, gpus, mc->peak()));
    j.update(choice_json(c.options));
    return j;
  };
  out.columns = {"grid",    "order",   "mb",     "steps",   "shard", "tp",
                 "iter ms", "compute", "interf", "exposed", "x",     "y",
                 "z",       "data",    "world",  "mem GB",  "fits",  "MFU %"};
  out.row = [r](std::size_t i, const nlohmann::json& j) {
    const Candidate& c = r->ranked.at(i);
    const Timeline& tl = c.timeline;
    std::vector<std::string> row = {std::to_string(c.grid.gx) + "x" + std::to_string(c.grid.gy) +
                                    "x" + std::to_string(c.grid.gz) + "x" +
                                    std::to_string(c.grid.gdata)};
    row.push_back(j["order"]);
    row.push_back(std::to_string(micro_batch(c.options)));
    row.push_back(std::to_string(micro_steps(c.options)));
    row.push_back(gradients_sharded(c.options) ? "grads"
                  : c.options.shard_optimizer  ? "on"
                                               : "off");
    row.push_back(c.options.otp ? std::to_string(c.options.tp_chunks) : "-");
    for (double v : {tl.iteration_us, tl.compute_us, tl.interference_us, tl.exposed_total_us()})
      row.push_back(fmt(v / 1e3, 3));
    for (Group g : kGroups) row.push_back(fmt(tl.comm_group_us(g) / 1e3, 3));
    row.push_back(fmt(c.memory_bytes / 1e9));
    row.push_back(c.fits ? "yes" : "no");
    row.push_back(fmt(100 * j["flops"]["mfu"].get<double>(), 1));
    return row;
  };
  out.counts = {{"grids", r->grids},     {"invalid", r->invalid},
                {"configs", r->configs}, {"variants", r->variants},
                {"unfit", r->unfit},     {"unfit_by_term", r->unfit_by_term}};
  if (r->configs > 0) {
    out.summary = summary(*r, so, ms);
    out.none_fit = none_fit(*r, so);
  }
  return out;
}

StrategyView predict_4d(const StrategyQuery& q, const nlohmann::json& e) {
  GptPlanOptions o = q.base;
  o.grid = grid_from_json(e, "4D configuration: '");
  const std::int64_t mb = e.value("micro_batch", std::int64_t{0});
  if (mb > 0 && micro_batch(o) != mb) o.micro_batch = mb;
  o.shard_optimizer = e.value("shard_optimizer", o.shard_optimizer);
  o.shard_gradients = e.value("shard_gradients", o.shard_gradients);
  if (e.contains("tp_chunks")) {  // 0: tp off
    const int n = e["tp_chunks"].get<int>();
    o.otp = n > 0;
    if (n > 0) o.tp_chunks = n;
  }
  const Prediction p = predict(q.model, o, *q.machine);
  return view_of(p.options.grid, p.timeline, p.memory.total(), p.fits);
}

std::string describe(const nlohmann::json& e) {
  std::ostringstream os;
  os << e["gx"] << "x" << e["gy"] << "x" << e["gz"] << "x" << e["gdata"].get<int>();
  return os.str();
}

}  // namespace

extern const Strategy kStrategy4d;
const Strategy kStrategy4d = {.name = "4d",
                              .about = "AxoNN's 4D algorithm",
                              .short_title = "4D",
                              .title = "4D",
                              .defaults = defaults,
                              .add_options = add_options,
                              .write_inputs = write_inputs,
                              .from_config = from_config,
                              .search = search_4d,
                              .predict = predict_4d,
                              .describe = describe};

}  // namespace ovb::model
