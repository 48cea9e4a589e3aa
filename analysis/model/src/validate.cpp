// Validation against published runs (see validate.hpp; docs/validation.md).
#include "ovb/model/validate.hpp"

#include <cmath>
#include <cstdlib>

#include "ovb/error.hpp"
#include "ovb/io.hpp"
#include "ovb/metrics.hpp"
#include "ovb/model/megatron.hpp"  // megatron_era: a run's config.era
#include "ovb/model/strategy.hpp"

namespace ovb::model {

using nlohmann::json;

std::string default_validation_file() {
  if (const char* env = std::getenv("OVB_VALIDATION_FILE"); env && *env) return env;
  return OVB_VALIDATION_FILE;
}

namespace {

[[noreturn]] void bad(const std::string& path, const std::string& what) {
  throw UsageError("validation file " + path + ": " + what);
}

const json& field(const json& j, const char* key, const std::string& path, const std::string& where) {
  if (!j.is_object() || !j.contains(key) || j.at(key).is_null())
    bad(path, where + "'" + key + "' is missing");
  return j.at(key);
}

double number(const json& j, const char* key, const std::string& path, const std::string& where) {
  const json& v = field(j, key, path, where);
  if (!v.is_number() || !(v.get<double>() > 0)) bad(path, where + "'" + key + "' must be a number > 0");
  return v.get<double>();
}

std::string text(const json& j, const char* key, const std::string& path, const std::string& where) {
  const json& v = field(j, key, path, where);
  if (!v.is_string()) bad(path, where + "'" + key + "' is not a string");
  return v.get<std::string>();
}

// The published figure: TFLOP/s per GPU or seconds per iteration, exactly one of them.
void read_published_figure(const json& pub, PublishedRun& p, const std::string& path,
                           const std::string& where) {
  const bool tflops = pub.contains("tflops_per_gpu"), time = pub.contains("iteration_s");
  if (tflops == time) bad(path, where + "give exactly one of 'tflops_per_gpu' and 'iteration_s'");
  if (tflops) p.published_tflops = number(pub, "tflops_per_gpu", path, where);
  if (time) p.published_iteration_s = number(pub, "iteration_s", path, where);
}

// The published TFLOP/s per GPU in the row's convention (for a published time, the prediction's
// FLOP count over that time) and the error; both are ratios of the same FLOP count, so a run
// published as a time is compared in time.
void compare_with_published(ValidationRow& row) {
  const PublishedRun& run = row.run;
  const double predicted_s = row.predicted_ms / 1e3;
  row.published_tflops = run.published_iteration_s > 0
                             ? row.predicted_tflops * predicted_s / run.published_iteration_s
                             : run.published_tflops;
  row.error_pct = 100 * (row.predicted_tflops - row.published_tflops) / row.published_tflops;
}

// Predicted TFLOP/s per GPU of a search entry in the given convention.
double tflops_of(const json& best, const std::string& convention) {
  return best["flops"][convention == "model" ? "model_tflops_per_gpu" : "hardware_tflops_per_gpu"]
      .get<double>();
}

}  // namespace

ValidationSet load_published_runs(const std::string& path) {
  const json doc = read_json(path);
  ValidationSet set;
  set.tolerance_pct = number(doc, "tolerance_pct", path, "");
  const json& runs = field(doc, "runs", path, "");
  if (!runs.is_array() || runs.empty()) bad(path, "'runs' must be a non-empty list");
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const json& r = runs[i];
    const std::string where = "runs[" + std::to_string(i) + "].";
    PublishedRun p;
    p.id = text(r, "id", path, where);
    const std::string at = "run " + p.id + ": ";
    p.source = text(r, "source", path, at);
    p.strategy = text(r, "strategy", path, at);
    try {
      strategy(p.strategy);
    } catch (const UsageError&) {
      bad(path, at + "'strategy' must be " + strategy_names() + ", got '" + p.strategy + "'");
    }
    p.machine = text(r, "machine", path, at);
    p.gpus = static_cast<int>(number(r, "gpus", path, at));
    p.batch = static_cast<std::int64_t>(number(r, "batch", path, at));
    const json& m = field(r, "model", path, at);
    p.model.layers = static_cast<std::int64_t>(number(m, "layers", path, at + "model."));
    p.model.hidden = static_cast<std::int64_t>(number(m, "hidden", path, at + "model."));
    p.model.heads = static_cast<std::int64_t>(number(m, "heads", path, at + "model."));
    p.model.seq = static_cast<std::int64_t>(number(m, "seq", path, at + "model."));
    p.model.vocab = static_cast<std::int64_t>(number(m, "vocab", path, at + "model."));
    // Llama runs: the architecture and its block widths (GQA's K/V heads, the SwiGLU width).
    if (m.contains("arch")) {
      try {
        p.model.arch = parse_arch(text(m, "arch", path, at + "model."));
      } catch (const UsageError& e) {
        bad(path, at + "model.arch: " + e.what());
      }
    }
    if (p.model.llama()) {
      p.model.kv_heads = static_cast<std::int64_t>(number(m, "kv_heads", path, at + "model."));
      p.model.ffn_hidden = static_cast<std::int64_t>(number(m, "ffn_hidden", path, at + "model."));
    } else if (m.contains("kv_heads") || m.contains("ffn_hidden")) {
      bad(path, at + "model.kv_heads and model.ffn_hidden are Llama's: set model.arch to llama");
    }
    try {
      validate_gpt_shape(p.model);
    } catch (const UsageError& e) {
      bad(path, at + "model: " + e.what());
    }
    p.config = r.contains("config") ? r["config"] : json::object();
    const json& pub = field(r, "published", path, at);
    read_published_figure(pub, p, path, at + "published.");
    if (r.contains("group")) p.group = text(r, "group", path, at);
    p.convention = text(pub, "convention", path, at + "published.");
    if (p.convention != "model" && p.convention != "hardware" && p.convention != "narayanan")
      bad(path, at + "published.convention must be model, hardware or narayanan, got '" +
                    p.convention + "'");
    if (p.convention == "narayanan" && p.model.arch != Arch::gpt)
      bad(path, at + "published.convention narayanan is a GPT formula; the model is not a GPT");
    if (r.contains("known_miss")) p.known_miss = text(r, "known_miss", path, at);
    if (r.contains("verified")) {
      if (!r["verified"].is_boolean()) bad(path, at + "'verified' must be true or false");
      p.verified = r["verified"].get<bool>();
      if (!*p.verified) {
        p.unverified = text(r, "unverified", path, at + "verified is false, so ");
        if (p.unverified.empty()) bad(path, at + "'unverified' must say which figures and why");
      }
    }
    // The run's software, where it differs from the machine preset's default (e.g. runs from
    // before FlashAttention existed put the attention scores through memory).
    if (p.config.contains("flash_attention") && !p.config["flash_attention"].is_boolean())
      bad(path, at + "config.flash_attention must be true or false");
    if (p.config.contains("tp_across_nodes") && !p.config["tp_across_nodes"].is_boolean())
      bad(path, at + "config.tp_across_nodes must be true or false");
    for (const char* key : {"tp_comm_overlap", "untie_embeddings", "fused_epilogues",
                            "sequence_parallel", "distributed_optimizer"})
      if (p.config.contains(key) && !p.config[key].is_boolean())
        bad(path, at + "config." + key + " must be true or false");
    if (p.config.contains("era")) {
      if (!p.config["era"].is_string()) bad(path, at + "config.era must be a string");
      try {
        megatron_era(p.config["era"].get<std::string>());
      } catch (const UsageError& e) {
        bad(path, at + "config.era: " + e.what());
      }
    } else if (p.strategy == "megatron") {
      // No era named: the one its software statements place it in, as the search's defaults
      // read them (sequence parallelism on unless stated off).
      const json& c = p.config;
      const InferredEra e = infer_megatron_era(
          c.value("flash_attention", true), c.value("sequence_parallel", true),
          c.contains("recompute") && c["recompute"] == "selective");
      if (e.era != "core") {
        p.config["era"] = e.era;
        p.era_inferred = e.why;
      }
    }
    set.runs.push_back(p);
  }
  return set;
}

ValidationRow validate_run(const PublishedRun& run, double tolerance_pct) {
  ValidationRow row;
  row.run = run;
  Machine mc = load_machine(run.machine);
  const json& cfg = run.config;
  if (cfg.contains("flash_attention")) mc.flash_attention = cfg["flash_attention"].get<bool>();
  if (cfg.contains("fused_epilogues")) mc.fused_epilogues = cfg["fused_epilogues"].get<bool>();
  const Strategy& s = strategy(run.strategy);
  StrategyQuery q;
  q.model = run.model;
  q.machine = &mc;
  q.gpus = run.gpus;
  q.base.batch = run.batch;
  q.base.act_dtype = parse_dtype(mc.precision);
  q.settings = s.defaults();
  s.from_config(cfg, q);
  const StrategySearch r = s.search(q);
  if (r.size == 0)
    throw UsageError("run " + run.id + ": no valid " + s.short_title +
                     " configuration for its settings");
  const StrategyView b = r.view(0);
  row.best = r.entry(0);
  row.fits = b.fits;
  row.predicted_ms = b.iteration_us / 1e3;
  row.config = b.config;
  row.predicted_tflops =
      run.convention == "narayanan"
          ? metrics::tflops_per_gpu(
                metrics::narayanan_flop(static_cast<double>(run.batch),
                                        static_cast<double>(run.model.seq),
                                        static_cast<double>(run.model.layers),
                                        static_cast<double>(run.model.hidden),
                                        static_cast<double>(run.model.vocab)),
                row.predicted_ms / 1e3, run.gpus)
          : tflops_of(row.best, run.convention);
  compare_with_published(row);
  row.within = row.fits && std::abs(row.error_pct) <= tolerance_pct;
  return row;
}

json validation_row_json(const ValidationRow& r) {
  const auto or_null = [](const std::optional<double>& v) { return v ? json(*v) : json(nullptr); };
  return {{"id", r.run.id},
          {"source", r.run.source},
          {"strategy", r.run.strategy},
          {"machine", r.run.machine},
          {"gpus", r.run.gpus},
          {"batch", r.run.batch},
          {"convention", r.run.convention},
          {"published_tflops_per_gpu", r.published_tflops},
          {"published_iteration_s",
           r.run.published_iteration_s > 0 ? json(r.run.published_iteration_s) : json(nullptr)},
          {"group", r.run.group.empty() ? json(nullptr) : json(r.run.group)},
          {"calculon_iteration_s", or_null(r.calculon_s)},
          {"calculon_error_pct", or_null(r.calculon_error_pct)},
          {"predicted_tflops_per_gpu", r.predicted_tflops},
          {"predicted_ms", r.predicted_ms},
          {"error_pct", r.error_pct},
          {"fits", r.fits},
          {"within_tolerance", r.within},
          {"known_miss", r.run.known_miss.empty() ? json(nullptr) : json(r.run.known_miss)},
          {"verified", r.run.verified ? json(*r.run.verified) : json(nullptr)},
          {"era_inferred", r.run.era_inferred.empty() ? json(nullptr) : json(r.run.era_inferred)},
          {"config", r.config},
          {"best", r.best}};
}

}  // namespace ovb::model
