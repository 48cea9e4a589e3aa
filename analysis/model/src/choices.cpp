// The variants ovb-model chooses among (see choices.hpp).
#include "ovb/model/choices.hpp"

#include <utility>

namespace ovb::model {

std::vector<std::int64_t> micro_batch_candidates(std::int64_t local_batch) {
  std::vector<std::int64_t> out{0};
  for (std::int64_t d = local_batch - 1; d >= 1; --d)
    if (local_batch % d == 0) out.push_back(d);
  return out;
}

const std::vector<int>& tp_chunk_candidates() {
  static const std::vector<int> n{2, 4, 8};
  return n;
}

std::vector<GptPlanOptions> plan_variants(const GptShape& m, const GptPlanOptions& o,
                                          const Choices& c) {
  const std::vector<std::int64_t> mbs = c.micro_batch ? micro_batch_candidates(local_batch(o))
                                                      : std::vector<std::int64_t>{o.micro_batch};
  // Sharding levels (optimizer, gradients): ZeRO-2 is tried when --shard-gradients asks for it.
  std::vector<std::pair<bool, bool>> levels{{o.shard_optimizer, o.shard_gradients}};
  if (c.shard_optimizer) {
    levels = {{false, false}};
    if (o.grid.gdata > 1) {
      levels.emplace_back(true, false);
      if (o.shard_gradients) levels.emplace_back(true, true);
    }
  }
  std::vector<GptPlanOptions> out;
  for (const auto& [opt, grads] : levels)
    for (std::int64_t mb : mbs) {
      GptPlanOptions v = o;
      v.micro_batch = mb;
      v.shard_optimizer = opt;
      v.shard_gradients = grads;
      if (!c.tp_chunks) {
        out.push_back(v);
        continue;
      }
      v.otp = false;
      out.push_back(v);
      if (o.grid.gx == 1 && o.grid.gy == 1) continue;  // no forward output all-reduce
      for (int n : tp_chunk_candidates())
        if (tokens_per_rank(m, v) % n == 0) {
          GptPlanOptions t = v;
          t.otp = true;
          t.tp_chunks = n;
          out.push_back(t);
        }
    }
  return out;
}

bool preferred(bool fits, double time_us, double memory_bytes, bool best_fits, double best_time_us,
               double best_memory_bytes) {
  if (fits != best_fits) return fits;
  return fits ? time_us < best_time_us : memory_bytes < best_memory_bytes;
}

Prediction choose(const GptShape& m, const GptPlanOptions& o, const Choices& c, const Machine& mc) {
  GptPlanOptions probe = o;
  if (c.micro_batch) probe.micro_batch = 0;
  if (c.tp_chunks) probe.otp = false;  // every variant's chunks divide its tokens
  validate_gpt_plan(m, probe);
  Prediction best;
  bool have = false;
  for (const GptPlanOptions& v : plan_variants(m, probe, c)) {
    Prediction p = predict(m, v, mc);
    if (!have || preferred(p.fits, p.timeline.iteration_us, p.memory.total(), best.fits,
                           best.timeline.iteration_us, best.memory.total()))
      best = std::move(p);
    have = true;
  }
  return best;
}

}  // namespace ovb::model
