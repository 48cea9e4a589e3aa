// Configuration search of the Megatron-LM strategy (see megatron_search.hpp).
#include "ovb/model/megatron_search.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <utility>

#include "ovb/error.hpp"
#include "ovb/model/flops.hpp"
#include "ovb/model/predict.hpp"

namespace ovb::model {

namespace {

std::vector<int> divisors_of(std::int64_t n) {
  std::vector<int> d;
  for (std::int64_t i = 1; i <= n; ++i)
    if (n % i == 0) d.push_back(static_cast<int>(i));
  return d;
}

bool pinned_or(int pin, int v) { return pin == 0 || pin == v; }

// Block recomputation where no recomputation does not fit and recomputing every layer does: the
// fewest recomputed layers per chunk that fit, the fastest of them (each one adds its forward).
// The activations fall linearly in that number (megatron_memory), so it is worked out from the
// two ends and checked by a prediction (one more layer where rounding left it just over).
std::optional<MegatronPrediction> fewest_recomputed_layers(const GptShape& m, MegatronConfig c,
                                                           const Machine& mc,
                                                           const ComputeTerms& ct,
                                                           const MegatronPrediction& none,
                                                           const MegatronPrediction& full) {
  c.recompute = Recompute::full;
  c.recompute_layers = 0;
  const std::int64_t chunk = chunk_layers(m, c);
  const double saved = (none.memory.activations - full.memory.activations) / chunk;
  if (chunk < 2 || saved <= 0) return std::nullopt;
  const double over = none.memory.total() - none.memory_limit_bytes;
  for (auto n = std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(over / saved)));
       n < chunk; ++n) {
    c.recompute_layers = static_cast<int>(n);
    MegatronPrediction p = predict_megatron(m, c, mc, ct);
    if (p.fits) return p;
  }
  return std::nullopt;
}

}  // namespace

MegatronSearchResult search_megatron(const GptShape& m, const MegatronSearchOptions& opt,
                                     const Machine& mc) {
  if (opt.gpus < 1) throw UsageError("the number of GPUs must be >= 1, got " + std::to_string(opt.gpus));
  if (opt.batch < 1) throw UsageError("the global batch must be >= 1");
  if (opt.recompute.empty()) throw UsageError("no recompute mode to search");
  if (opt.tp_comm_overlap && !opt.sequence_parallel)
    throw UsageError(kTpOverlapNeedsSequenceParallel);
  MegatronSearchResult r;
  r.memory_limit_bytes = memory_limit_bytes(mc);
  std::map<std::pair<int, int>, ComputeTerms> terms;  // (tp, micro-batch)
  for (int tp : divisors_of(opt.gpus)) {
    if (!pinned_or(opt.tp, tp) || (tp > mc.ranks_per_node() && !opt.tp_across_nodes) ||
        m.heads % tp || m.hidden % tp)
      continue;
    for (int pp : divisors_of(opt.gpus / tp)) {
      const bool uneven = opt.first_stage_layers > 0 || opt.last_stage_layers > 0;
      const auto split = split_stages(m.layers, pp, opt.first_stage_layers, opt.last_stage_layers);
      if (!pinned_or(opt.pp, pp) || !split) continue;
      const int dp = opt.gpus / (tp * pp);
      if (opt.batch % dp) continue;
      // Interleaving splits a stage into equal chunks: the middle stages' (even: every stage's).
      const std::int64_t chunked = uneven && pp > 2 ? split->middle : split->first;
      const std::int64_t ends = std::min(split->first, split->last);
      for (std::int64_t mb = 1; mb <= opt.batch / dp; mb *= 2) {
        if (!pinned_or(opt.micro_batch, static_cast<int>(mb)) || (opt.batch / dp) % mb) continue;
        for (int v : divisors_of(chunked)) {
          if (!pinned_or(opt.virtual_stages, v) || (v > 1 && pp < 2) || v > ends) continue;
          if (v > 1 && pp == 2 && !opt.features.interleave_pp2) continue;
          MegatronConfig c;
          c.tp = tp;
          c.pp = pp;
          c.dp = dp;
          c.micro_batch = static_cast<int>(mb);
          c.virtual_stages = v;
          c.batch = opt.batch;
          c.act_dtype = opt.act_dtype;
          c.sequence_parallel = opt.sequence_parallel;
          c.distributed_optimizer = opt.distributed_optimizer;
          c.first_stage_layers = opt.first_stage_layers;
          c.last_stage_layers = opt.last_stage_layers;
          c.tp_across_nodes = opt.tp_across_nodes;
          c.tp_comm_overlap = opt.tp_comm_overlap;
          c.untie_embeddings = opt.untie_embeddings;
          c.features = opt.features;
          if (v > 1 && c.microbatches() % pp) continue;
          const auto key = std::make_pair(tp, c.micro_batch);
          auto it = terms.find(key);
          if (it == terms.end())
            it = terms.emplace(key, megatron_compute_terms(m, c, mc)).first;
          std::optional<MegatronPrediction> none, full;
          for (Recompute rc : opt.recompute) {
            c.recompute = rc;
            r.ranked.push_back(predict_megatron(m, c, mc, it->second));
            ++r.configs;
            if (!r.ranked.back().fits) ++r.unfit;
            if (rc == Recompute::none) none = r.ranked.back();
            if (rc == Recompute::full) full = r.ranked.back();
          }
          if (none && full && !none->fits && full->fits && c.features.block_recompute)
            if (auto b = fewest_recomputed_layers(m, c, mc, it->second, *none, *full)) {
              r.ranked.push_back(*b);
              ++r.configs;
            }
        }
      }
    }
  }
  std::stable_sort(r.ranked.begin(), r.ranked.end(),
                   [](const MegatronPrediction& a, const MegatronPrediction& b) {
                     if (a.fits != b.fits) return a.fits;
                     return a.time.iteration_us < b.time.iteration_us;
                   });
  return r;
}

nlohmann::json megatron_config_json(const GptShape& m, const MegatronPrediction& p,
                                    const Machine& mc) {
  const MegatronConfig& c = p.config;
  const MegatronTime& t = p.time;
  const MegatronMemory& mem = p.memory;
  nlohmann::json j = {
      {"strategy", "megatron"},
      {"tp", c.tp},
      {"pp", c.pp},
      {"dp", c.dp},
      {"micro_batch", c.micro_batch},
      {"virtual_stages", c.virtual_stages},
      {"microbatches", t.microbatches},
      {"recompute", name_of(c.recompute)},
      {"sequence_parallel", c.sequence_parallel},
      {"distributed_optimizer", c.distributed_optimizer},
      {"tp_comm_overlap", c.tp_comm_overlap},
      {"untie_embeddings", c.untie_embeddings},
      {"era", c.features.era},
      {"predicted_ms", t.iteration_us / 1e3},
      {"terms_ms",
       {{"stage_fwd", t.stage_fwd_us / 1e3},
        {"stage_bwd", t.stage_bwd_us / 1e3},
        {"tp_per_layer", (t.tp_fwd_us + t.tp_bwd_us) / 1e3},
        {"grad_accumulation_per_layer", t.grad_accumulation_us / 1e3},
        {"head", t.head_us / 1e3},
        {"cross_entropy", t.cross_entropy_us / 1e3},
        {"bubble", t.bubble_us / 1e3},
        {"p2p", t.p2p_us / 1e3},
        {"dp_reduce_scatter", t.dp_rs_us / 1e3},
        {"dp_all_gather", t.dp_ag_us / 1e3},
        {"dp_exposed", t.dp_exposed_us / 1e3},
        {"embedding_grads", t.embedding_grads_us / 1e3},
        {"interference", t.interference_us / 1e3},
        {"optimizer", t.optimizer_us / 1e3},
        {"grad_passes", t.grad_passes_us / 1e3}}},
      {"memory",
       {{"weights", mem.weights},
        {"gradients", mem.gradients},
        {"optimizer", mem.optimizer},
        {"activations", mem.activations},
        {"logits", mem.logits}}},
      {"memory_bytes", mem.total()},
      {"memory_limit_bytes", p.memory_limit_bytes},
      {"fits", p.fits}};
  if (c.uneven()) {  // 0: as the other stages
    j["first_stage_layers"] = c.first_stage_layers;
    j["last_stage_layers"] = c.last_stage_layers;
  }
  if (c.block_recompute()) j["recompute_layers"] = c.recompute_layers;
  j["flops"] = flops_json(flop_report(m, c.batch, c.recompute, t.iteration_us, c.gpus(), mc.peak(),
                                      recompute_share(m, c)));
  return j;
}

}  // namespace ovb::model
