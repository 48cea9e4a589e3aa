// The replay's step costs (see kernel_cost.hpp): which ComputeTerms entry each compute op of the
// schedule is, GEMM and collective costs remembered by shape and by (group, kind, count, dtype).
#include "kernel_cost.hpp"

#include <functional>

#include "ovb/error.hpp"
#include "ovb/model/comm_cost.hpp"

namespace ovb::model {

namespace {

// A table's first slot for a key (open addressing; the tables keep at most half their slots
// filled, so a probe always ends).
template <std::size_t N>
std::size_t first_slot(std::size_t hash) {
  return static_cast<std::size_t>((hash * 0x9E3779B97F4A7C15ull) >> 32) & (N - 1);
}

std::size_t hash_of(const GemmShape& g) {
  return std::hash<std::int64_t>{}((g.m * 1000003 + g.n) * 1009 + g.k);
}

std::size_t hash_of(const CollOp& op) {
  return std::hash<std::int64_t>{}(op.count * 131 + op.group_size * 17 +
                                   static_cast<int>(op.group) * 5 + static_cast<int>(op.kind) * 3 +
                                   static_cast<int>(op.dtype));
}

}  // namespace

KernelCosts::KernelCosts(const GptShape& m, const ComputeTerms& ct, const PlanComm& pc,
                         const GptPlanOptions& o, const Machine& mc)
    : ct_(ct), mc_(mc), grid_(o.grid, o.grid.world()), dtype_(name_of(o.act_dtype)) {
  // AdamW runs bucket by bucket (the step's adamw steps), each for its chunk of the parameters.
  const double block = static_cast<double>(data_chunk(block_bucket_count(m, o.grid), o));
  const double head = static_cast<double>(data_chunk(head_bucket_count(m, o.grid), o));
  const double total = static_cast<double>(m.layers) * block + head;
  adamw_block_ = ct.optimizer.time_us * block / total;
  adamw_head_ = ct.optimizer.time_us * head / total;
  // The GEMMs of the unchunked layers are ComputeTerms' own; the collectives PlanComm's.
  for (const LinearCompute* lc :
       {&ct.block.lin[0], &ct.block.lin[1], &ct.block.lin[2], &ct.block.lin[3], &ct.head.lm_head})
    for (const GemmTerm* g : {&lc->fwd, &lc->dx, &lc->dw}) {
      GemmEntry& e = find(GemmShape{g->m, g->n, g->k});
      if (e.us < 0) add(e, GemmShape{g->m, g->n, g->k}, g->time_us);
    }
  for_each_slot(pc, [&](const CommSlot& s, double) {
    CollEntry& e = find(s.op);
    if (e.count < 0) add(e, s.op, link_use(mc, s.cost));
  });
}

KernelCosts::GemmEntry& KernelCosts::find(const GemmShape& g) {
  for (std::size_t i = first_slot<kSlots>(hash_of(g));; i = (i + 1) & (kSlots - 1))
    if (gemms_[i].us < 0 || gemms_[i].shape == g) return gemms_[i];
}

void KernelCosts::add(GemmEntry& e, const GemmShape& g, double us) {
  if (2 * (gemm_count_ + 1) > kSlots) return;  // full: no longer remembered
  ++gemm_count_;
  e = {g, us};
}

KernelCosts::CollEntry& KernelCosts::find(const CollOp& op) {
  for (std::size_t i = first_slot<kSlots>(hash_of(op));; i = (i + 1) & (kSlots - 1)) {
    CollEntry& e = colls_[i];
    if (e.count < 0 || (e.count == op.count && e.group_size == op.group_size &&
                        e.group == op.group && e.kind == op.kind && e.dtype == op.dtype))
      return e;
  }
}

void KernelCosts::add(CollEntry& e, const CollOp& op, const LinkUse& use) {
  if (2 * (coll_count_ + 1) > kSlots) return;
  ++coll_count_;
  e = {op.count, op.group_size, op.group, op.kind, op.dtype, use};
}

KernelCosts::Kernel KernelCosts::resolve(std::string_view op, bool head) const {
  const std::size_t dot = op.find('.');
  const std::string_view base = op.substr(0, dot);
  const std::string_view suffix = dot == std::string_view::npos ? "" : op.substr(dot + 1);
  const BlockCompute& b = ct_.block;
  const HeadCompute& h = ct_.head;
  auto fixed = [](double us) { return Kernel{us, 0, false}; };
  // Linear layers: their GEMMs (forward and dX with the layer's epilogue) and accumulations.
  const LinearCompute* lc = base == name_of(LinearId::lm_head) ? &h.lm_head : nullptr;
  for (const LinearCompute& l : b.lin)
    if (base == name_of(l.id)) lc = &l;
  if (lc) {
    if (suffix == "fwd") return {0, lc->epilogue.time_us, true};
    if (suffix == "dx") return {0, lc->epilogue.bwd_us, true};
    if (suffix == "dw") return {0, 0, true};
    if (suffix == "accumulate") return fixed(lc->accumulate.time_us);  // the bias's included
    if (suffix == "bias_accumulate") return fixed(0);
  }
  // Norms: the statistics' kernel is inside the forward term; backward, the whole term before the
  // statistics' all-reduce.
  const MemTerm* norm = base == "ln1"    ? &b.ln1
                        : base == "ln2"  ? &b.ln2
                        : base == "ln_f" ? &h.ln_f
                                         : nullptr;
  if (norm) {
    if (suffix.empty()) return fixed(norm->time_us);
    if (suffix == "bwd_stats") return fixed(norm->bwd_us);
    if (suffix == "stats" || suffix == "bwd") return fixed(0);
  }
  if (op == "attention") return fixed(b.attn_fwd_us + b.attn_io.time_us);
  if (op == "attention.bwd") return fixed(b.attn_bwd_us + b.attn_io.bwd_us);
  if (op == "embedding") return fixed(h.embed.time_us);
  if (op == "embedding.bwd") return fixed(h.embed.bwd_us);
  if (op == "ce") return fixed(h.ce.time_us);
  if (op == "ce.bwd") return fixed(h.ce.bwd_us);
  if (op == "bucket.accumulate") return fixed(head ? h.accumulate_us : b.accumulate_us);
  if (op == "adamw") return fixed(head ? adamw_head_ : adamw_block_);
  // Inside other terms: GELU, SwiGLU and RoPE in the linear layers' epilogues, the cross-entropy's
  // combination in its statistics, the gradient norm's sum of squares and the zeroing of a bucket
  // in AdamW's traffic.
  for (std::string_view zero : {"gelu", "gelu.bwd", "swiglu", "swiglu.bwd", "rope", "rope.bwd",
                                "ce_combine", "sumsq", "bucket.zero"})
    if (op == zero) return fixed(0);
  throw Error("ovb-model has no cost for the schedule's compute step '" + std::string(op) +
              "' (gpt_schedule changed: update analysis/model/src/kernel_cost.cpp)");
}

double KernelCosts::compute_us(const Step& s) {
  const bool head = s.layer < 0;
  const char* key = s.op.data();  // names are the generator's constants
  for (std::size_t i = first_slot<kSlots>(std::hash<const void*>{}(key) ^ head);;
       i = (i + 1) & (kSlots - 1)) {
    NamedEntry& e = named_[i];
    if (!e.key)
      e = {key, head, resolve(s.op, head)};  // at most ~60 names: never full
    else if (e.key != key || e.head != head)
      continue;
    if (!e.k.gemm) return e.k.fixed_us;
    GemmEntry& g = find(s.gemm);
    double us = g.us;
    if (us < 0) {
      us = gemm_term(mc_, s.gemm.m, s.gemm.n, s.gemm.k, dtype_).time_us;
      add(g, s.gemm, us);
    }
    // The epilogue's share: the step's rows of the layer's T.
    return us + e.k.epilogue_us * static_cast<double>(s.gemm.m) / static_cast<double>(ct_.tokens);
  }
}

LinkUse KernelCosts::collective(const CollOp& op) {
  CollEntry& e = find(op);
  if (e.count >= 0) return e.use;
  const LinkUse use = link_use(mc_, cost_collective(mc_, grid_, op));
  add(e, op, use);
  return use;
}

}  // namespace ovb::model
