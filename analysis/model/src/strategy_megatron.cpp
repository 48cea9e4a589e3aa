// The Megatron-LM strategy as a strategy of the table (strategy.hpp): tensor (with sequence),
// pipeline and data parallelism searched by search_megatron (megatron_search.hpp), with its own
// options (--megatron-*, --no-sequence-parallel, --no-distributed-optimizer); a published run's
// "config" pins the same settings under the same keys.
#include <chrono>
#include <memory>
#include <sstream>

#include "ovb/cli.hpp"
#include "ovb/error.hpp"
#include "ovb/model/megatron_search.hpp"
#include "ovb/model/strategy.hpp"
#include "ovb/model/table.hpp"

namespace ovb::model {

namespace {

// The settings: "recompute" (any = search all), the pinned sizes (0 = search), the switches.
struct Args {
  std::string recompute = "any";
  std::string era = "core";  // megatron_era: the release whose code paths are costed
  int tp = 0, pp = 0, micro_batch = 0, virtual_stages = 0;
  int first_stage_layers = 0, last_stage_layers = 0;  // 0: as the other stages
  bool no_sequence_parallel = false, no_distributed_optimizer = false, tp_across_nodes = false;
  bool tp_comm_overlap = false, untie_embeddings = false, grad_reduce_16bit = false;

  nlohmann::json settings() const {
    return {{"era", era},
            {"recompute", recompute},
            {"tp", tp},
            {"pp", pp},
            {"micro_batch", micro_batch},
            {"virtual_stages", virtual_stages},
            {"first_stage_layers", first_stage_layers},
            {"last_stage_layers", last_stage_layers},
            {"sequence_parallel", !no_sequence_parallel},
            {"distributed_optimizer", !no_distributed_optimizer},
            {"tp_across_nodes", tp_across_nodes},
            {"tp_comm_overlap", tp_comm_overlap},
            {"untie_embeddings", untie_embeddings},
            {"grad_reduce_16bit", grad_reduce_16bit}};
  }
};

nlohmann::json defaults() {
  return Args{}.settings();
}

std::function<nlohmann::json()> add_options(CLI::App& app) {
  auto a = std::make_shared<Args>();
  app.add_option("--megatron-recompute", a->recompute,
                 "Megatron activation recomputation: any (search all), none, selective or full")
      ->check(CLI::IsMember({"any", "none", "selective", "full"}))
      ->capture_default_str();
  app.add_option(
         "--megatron-era", a->era,
         "Megatron-LM release whose code paths are costed: sc21 (2021: unfused gradient "
         "accumulation, data-parallel reduction after the pipeline flush), 2022 (to Aug "
         "2023: fused accumulation, reduction after the flush) or core (today's "
         "Megatron-Core: overlapped reduction and parameter gather); docs/model-megatron.md")
      ->check(CLI::IsMember(kMegatronEras))
      ->capture_default_str();
  app.add_option("--megatron-tp", a->tp, "Pin Megatron's tensor-parallel size (0 = search)")
      ->check(ovb::non_negative());
  app.add_option("--megatron-pp", a->pp, "Pin Megatron's pipeline-parallel size (0 = search)")
      ->check(ovb::non_negative());
  app.add_option("--megatron-micro-batch", a->micro_batch,
                 "Pin Megatron's micro-batch size in sequences (0 = search powers of two)")
      ->check(ovb::non_negative());
  app.add_option(
         "--megatron-virtual-stages", a->virtual_stages,
         "Pin the interleaved schedule's model chunks per stage (0 = search, 1 = plain 1F1B)")
      ->check(ovb::non_negative());
  app.add_option("--megatron-first-stage-layers", a->first_stage_layers,
                 "Layers of the first pipeline stage, the other stages sharing the rest evenly "
                 "(Megatron-Core's --decoder-first-pipeline-num-layers; 0 = an even split)")
      ->check(ovb::non_negative());
  app.add_option("--megatron-last-stage-layers", a->last_stage_layers,
                 "Layers of the last pipeline stage, the other stages sharing the rest evenly "
                 "(Megatron-Core's --decoder-last-pipeline-num-layers; 0 = an even split)")
      ->check(ovb::non_negative());
  app.add_flag("--no-sequence-parallel", a->no_sequence_parallel,
               "Megatron without sequence parallelism (TP all-reduces, replicated LN/dropout)");
  app.add_flag("--no-distributed-optimizer", a->no_distributed_optimizer,
               "Megatron with the optimizer state replicated on every data rank");
  app.add_flag("--megatron-tp-across-nodes", a->tp_across_nodes,
               "Also search Megatron tensor-parallel sizes larger than a node (their TP "
               "collectives cross the network)");
  app.add_flag("--megatron-tp-comm-overlap", a->tp_comm_overlap,
               "Megatron with Transformer Engine's tensor-parallel communication overlap "
               "(--tp-comm-overlap: each all-gather and reduce-scatter under its GEMM; needs "
               "sequence parallelism)");
  app.add_flag("--megatron-untie-embeddings", a->untie_embeddings,
               "Megatron GPT with its output layer's own weight (--untie-embeddings-and-output-"
               "weights; Megatron's default ties it to the word embeddings, Llama never does)");
  app.add_flag("--megatron-grad-reduce-16bit", a->grad_reduce_16bit,
               "Megatron with its gradients accumulated, reduced and kept in the parameters' "
               "16-bit dtype (NeMo's grad_reduce_in_fp32=False; Megatron-LM's launcher forces "
               "fp32 for bf16; era sc21 has it)");
  return [a] { return a->settings(); };
}

void write_inputs(const nlohmann::json& s, nlohmann::json& inputs) {
  inputs["megatron"] = s;
}

// A pinned size: an integer, else 0 (search).
int pinned(const nlohmann::json& s, const char* key) {
  return s.contains(key) && s.at(key).is_number_integer() ? s.at(key).get<int>() : 0;
}

// The published run's config holds the settings under their own keys.
void from_config(const nlohmann::json& cfg, StrategyQuery& q) {
  q.settings = defaults();
  for (const auto& [key, value] : cfg.items())
    if (q.settings.contains(key)) q.settings[key] = value;
}

MegatronSearchOptions search_options(const StrategyQuery& q) {
  const nlohmann::json& s = q.settings;
  MegatronSearchOptions o;
  o.gpus = q.gpus;
  o.batch = q.base.batch;
  o.act_dtype = q.base.act_dtype;
  const std::string rc = s.value("recompute", std::string("any"));
  if (rc != "any") o.recompute = {parse_recompute(rc)};
  o.tp = pinned(s, "tp");
  o.pp = pinned(s, "pp");
  o.micro_batch = pinned(s, "micro_batch");
  o.virtual_stages = pinned(s, "virtual_stages");
  o.first_stage_layers = pinned(s, "first_stage_layers");
  o.last_stage_layers = pinned(s, "last_stage_layers");
  o.sequence_parallel = s.value("sequence_parallel", true);
  o.distributed_optimizer = s.value("distributed_optimizer", true);
  o.tp_across_nodes = s.value("tp_across_nodes", false);
  o.tp_comm_overlap = s.value("tp_comm_overlap", false);
  o.untie_embeddings = s.value("untie_embeddings", false);
  o.features = megatron_era(s.value("era", std::string("core")));
  if (s.value("grad_reduce_16bit", false)) o.features.grad_buffer_fp32 = false;
  return o;
}

std::string config_words(const GptShape& m, const MegatronConfig& c) {
  std::string s =
      "tp=" + std::to_string(c.tp) + " pp=" + std::to_string(c.pp) + " dp=" + std::to_string(c.dp) +
      " mb=" + std::to_string(c.micro_batch) + " v=" + std::to_string(c.virtual_stages) + " " +
      recompute_words(m, c) + (c.features.era == "core" ? "" : " " + c.features.era) +
      (c.tp_comm_overlap ? " tp-overlap" : "") +
      (c.untie_embeddings && !m.llama() ? " untied" : "");
  if (c.uneven()) {
    const StageLayers st = *split_stages(m.layers, c.pp, c.first_stage_layers, c.last_stage_layers);
    s += " stages " + std::to_string(st.first) + "+" +
         (c.pp > 2 ? std::to_string(c.pp - 2) + "x" + std::to_string(st.middle) + "+"
                   : std::string()) +
         std::to_string(st.last);
  }
  return s;
}

StrategyView view_of(const GptShape& m, const MegatronPrediction& p) {
  const MegatronTime& t = p.time;
  return {t.iteration_us,
          p.memory.total(),
          p.fits,
          config_words(m, p.config),
          {{"bubble", t.bubble_us / 1e3},
           {"p2p", t.p2p_us / 1e3},
           {"dp_exposed", t.dp_exposed_us / 1e3},
           {"embedding_grads", t.embedding_grads_us / 1e3}}};
}

std::string none_fit(const GptShape& m, const MegatronSearchResult& r,
                     const MegatronSearchOptions& o, const Machine& mc) {
  std::ostringstream os;
  const MegatronPrediction* f = nullptr;
  for (const MegatronPrediction& p : r.ranked)
    if (!f || p.time.iteration_us < f->time.iteration_us) f = &p;
  if (f)
    os << "  fastest ignoring memory: tp=" << f->config.tp << " pp=" << f->config.pp
       << " dp=" << f->config.dp << " mb=" << f->config.micro_batch << " "
       << recompute_words(m, f->config) << " " << fmt(f->time.iteration_us / 1e3, 1) << " ms, "
       << fmt(f->memory.total() / 1e9) << " GB per GPU\n";
  if (!o.tp_across_nodes)
    os << "  (tp stays inside a node of " << mc.ranks_per_node()
       << " GPUs; --megatron-tp-across-nodes also searches larger tp)\n";
  return os.str();
}

StrategySearch search(const StrategyQuery& q) {
  const Machine& mc = *q.machine;
  const MegatronSearchOptions o = search_options(q);
  const auto t0 = std::chrono::steady_clock::now();
  auto r = std::make_shared<const MegatronSearchResult>(search_megatron(q.model, o, mc));
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  StrategySearch out;
  out.size = r->ranked.size();
  out.elapsed_ms = ms;
  if (r->configs == 0)
    out.invalid =
        "no valid Megatron configuration of " + std::to_string(q.gpus) +
        " GPUs (tp must divide the heads" +
        (o.tp_across_nodes ? std::string()
                           : " and stay in a node of " + std::to_string(mc.ranks_per_node())) +
        (o.first_stage_layers > 0 || o.last_stage_layers > 0
             ? ", pp - 1 or pp - 2 the layers left after the first/last stage's"
             : ", pp the layers") +
        ", dp * micro-batch the batch)";
  const GptShape m = q.model;
  const Machine* mcp = q.machine;
  out.view = [r, m](std::size_t i) { return view_of(m, r->ranked.at(i)); };
  out.entry = [r, m, mcp](std::size_t i) { return megatron_config_json(m, r->ranked.at(i), *mcp); };
  out.columns = {"tp",     "pp",  "dp",     "mb",     "v",    "recompute", "iter ms",
                 "bubble", "p2p", "dp exp", "mem GB", "fits", "MFU %",     "HFU %"};
  out.row = [r, m](std::size_t i, const nlohmann::json& j) {
    const MegatronPrediction& p = r->ranked.at(i);
    const MegatronConfig& c = p.config;
    return std::vector<std::string>{std::to_string(c.tp),
                                    std::to_string(c.pp),
                                    std::to_string(c.dp),
                                    std::to_string(c.micro_batch),
                                    std::to_string(c.virtual_stages),
                                    recompute_words(m, c),
                                    fmt(p.time.iteration_us / 1e3, 3),
                                    fmt(p.time.bubble_us / 1e3, 3),
                                    fmt(p.time.p2p_us / 1e3, 3),
                                    fmt(p.time.dp_exposed_us / 1e3, 3),
                                    fmt(p.memory.total() / 1e9),
                                    p.fits ? "yes" : "no",
                                    fmt(100 * j["flops"]["mfu"].get<double>(), 1),
                                    fmt(100 * j["flops"]["hfu"].get<double>(), 1)};
  };
  out.counts = {{"configs", r->configs}, {"unfit", r->unfit}};
  std::ostringstream os;
  os << "Megatron-LM: " << r->configs << " configurations, " << r->unfit << " do not fit in "
     << fmt(r->memory_limit_bytes / 1e9) << " GB; " << fmt(ms, 1) << " ms\n";
  out.summary = os.str();
  out.none_fit = none_fit(q.model, *r, o, mc);
  return out;
}

StrategyView predict(const StrategyQuery& q, const nlohmann::json& e) {
  const MegatronSearchOptions o = search_options(q);
  MegatronConfig c;
  c.tp = e.at("tp").get<int>();
  c.pp = e.at("pp").get<int>();
  c.dp = e.at("dp").get<int>();
  c.micro_batch = e.at("micro_batch").get<int>();
  c.virtual_stages = e.at("virtual_stages").get<int>();
  c.first_stage_layers = e.value("first_stage_layers", 0);
  c.last_stage_layers = e.value("last_stage_layers", 0);
  c.recompute = parse_recompute(e.at("recompute").get<std::string>());
  c.recompute_layers = e.value("recompute_layers", 0);
  c.sequence_parallel = e.value("sequence_parallel", o.sequence_parallel);
  c.distributed_optimizer = e.value("distributed_optimizer", o.distributed_optimizer);
  c.tp_across_nodes = o.tp_across_nodes;
  c.tp_comm_overlap = e.value("tp_comm_overlap", o.tp_comm_overlap);
  c.untie_embeddings = e.value("untie_embeddings", o.untie_embeddings);
  c.features = o.features;
  c.batch = o.batch;
  c.act_dtype = o.act_dtype;
  if (c.gpus() != q.gpus)
    throw UsageError("Megatron configuration tp * pp * dp = " + std::to_string(c.gpus()) +
                     " is not the " + std::to_string(q.gpus) + " GPUs");
  return view_of(q.model, predict_megatron(q.model, c, *q.machine));
}

std::string describe(const nlohmann::json& e) {
  std::ostringstream os;
  os << "tp=" << e["tp"] << " pp=" << e["pp"] << " dp=" << e["dp"] << " mb=" << e["micro_batch"]
     << " v=" << e["virtual_stages"] << " " << e["recompute"].get<std::string>()
     << (e.contains("recompute_layers")
             ? " (" + e["recompute_layers"].dump() +
                   (e["recompute_layers"] == 1 ? " layer" : " layers") + " of each chunk)"
             : std::string())
     << " (Megatron-LM era " << e["era"].get<std::string>()
     << (e.value("tp_comm_overlap", false) ? ", tensor-parallel overlap" : "")
     << (e.value("untie_embeddings", false) ? ", untied embeddings" : "") << ")";
  return os.str();
}

}  // namespace

extern const Strategy kStrategyMegatron;
const Strategy kStrategyMegatron = {.name = "megatron",
                                    .about = "TP+SP, PP, DP",
                                    .short_title = "Megatron",
                                    .title = "Megatron-LM",
                                    .defaults = defaults,
                                    .add_options = add_options,
                                    .write_inputs = write_inputs,
                                    .from_config = from_config,
                                    .search = search,
                                    .predict = predict,
                                    .describe = describe};

}  // namespace ovb::model
