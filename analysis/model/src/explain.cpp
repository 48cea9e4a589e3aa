// One configuration term by term (see explain.hpp).
#include "ovb/model/explain.hpp"

#include <sstream>

#include "ovb/model/table.hpp"

namespace ovb::model {

using nlohmann::json;

namespace {

std::string shape(const GemmTerm& g) {
  return std::to_string(g.m) + "x" + std::to_string(g.n) + "x" + std::to_string(g.k);
}

json gemm_json(const GemmTerm& g) {
  return {{"m", g.m},
          {"n", g.n},
          {"k", g.k},
          {"flop", g.flop},
          {"tflops", g.tflops},
          {"source", name_of(g.source)},
          {"time_us", g.time_us}};
}

json mem_json(const MemTerm& t) {
  return {{"bytes", t.bytes}, {"fwd_us", t.time_us}, {"bwd_us", t.bwd_us}};
}

json slot_json(const CommSlot& s, double mult) {
  const CollOp& op = s.op;
  const CollCost& c = s.cost;
  return {{"phase", name_of(op.phase)},
          {"recompute", op.recompute},
          {"op", op.op},
          {"role", name_of(op.role)},
          {"kind", name_of(c.kind)},
          {"group", name_of(c.group)},
          {"p", c.p},
          {"ip", c.ip},
          {"placement", name_of(c.placement)},
          {"sharing", c.sharing},
          {"bytes", c.bytes},
          {"moved_bytes", c.moved},
          {"bw_gbps", c.bw_gbps},
          {"alpha_us", c.alpha_us},
          {"algorithm", c.algorithm},
          {"nodes", c.nodes},
          {"time_us", c.time_us},
          {"times", mult},
          {"total_ms", c.time_us * mult / 1e3}};
}

void gemm_rows(TextTable& t, const LinearCompute& c) {
  const std::string name(name_of(c.id));
  for (auto [pass, g] : {std::pair{"fwd", &c.fwd}, {"dX", &c.dx}, {"dW", &c.dw}})
    t.row({name, pass, shape(*g), fmt(g->flop / 1e9, 2), fmt(g->tflops, 1),
           std::string(name_of(g->source)), fmt(g->time_us, 1)});
}

}  // namespace

std::string explain_text(const Prediction& p) {
  const GptShape& m = p.shape;
  const GptPlanOptions& o = p.options;
  const ComputeTerms& ct = p.compute;
  std::ostringstream os;
  os << describe(m) << ", " << m.parameter_count() << " parameters, batch " << o.batch << ", grid "
     << o.grid.str() << ", overlap " << overlap_string(o)
     << (o.otp ? " (tp " + std::to_string(o.tp_chunks) + " chunks)" : std::string())
     << ", recompute " << (o.recompute ? "yes" : "no") << ", weights "
     << (o.cache_weights ? "cached" : "gathered again")
     << (o.ors ? ", ORS window " + std::to_string(o.ors_window) : std::string()) << ", optimizer "
     << (o.shard_optimizer ? "sharded over data" : "not sharded")
     << (gradients_sharded(o) ? ", gradients too" : "") << ", " << name_of(o.act_dtype)
     << " (grads " << name_of(o.grad_dtype) << ") on " << p.machine << "\nmicro-batch "
     << micro_batch(o) << " sequences x " << ct.micro_steps << " micro-step"
     << (ct.micro_steps > 1 ? "s" : "") << "; tokens per rank T = " << ct.tokens
     << (ct.micro_steps > 1 ? " per micro-step" : "") << "\n\n";

  os << "Compute per rank: GEMMs (one block; x" << m.layers << ", then the LM head"
     << (ct.micro_steps > 1 ? "; per micro-step" : "") << ")\n";
  TextTable g({"layer", "pass", "m x n x k", "GFLOP", "TFLOP/s", "source", "us"});
  for (const LinearCompute& c : ct.block.lin) gemm_rows(g, c);
  gemm_rows(g, ct.head.lm_head);
  os << g.str("  ");
  const BlockCompute& b = ct.block;
  os << "  attention: " << fmt(b.attn_flop / 1e9, 2) << " GFLOP fwd, " << fmt(b.attn_fwd_us, 1)
     << " us fwd, " << fmt(b.attn_bwd_us, 1) << " us bwd\n";
  TextTable mt({"memory-bound", "fwd bytes", "fwd us", "bwd us"});
  auto mem_row = [&](const char* n, const MemTerm& t) {
    mt.row({n, fmt(t.bytes, 0), fmt(t.time_us, 1), fmt(t.bwd_us, 1)});
  };
  mem_row("ln1", b.ln1);
  mem_row("ln2", b.ln2);
  mem_row("attention i/o", b.attn_io);
  for (const LinearCompute& c : b.lin)
    mem_row((std::string(name_of(c.id)) + " epilogue").c_str(), c.epilogue);
  mem_row("embedding", ct.head.embed);
  mem_row("ln_f", ct.head.ln_f);
  mem_row("cross-entropy", ct.head.ce);
  os << mt.str("  ");
  os << "  optimizer: " << fmt(ct.optimizer.params, 0) << " parameters, "
     << fmt(ct.optimizer.bytes / 1e6, 1) << " MB, " << fmt(ct.optimizer.time_us, 1) << " us\n"
     << "  block " << fmt(b.fwd_us, 1) << " us fwd, " << fmt(b.bwd_us, 1) << " us bwd; head "
     << fmt(ct.head.fwd_us, 1) << " / " << fmt(ct.head.bwd_us, 1) << " us"
     << (ct.micro_steps > 1 ? "; gradient accumulation " +
                                  fmt(m.layers * b.accumulate_us + ct.head.accumulate_us, 1) +
                                  " us per micro-step after the first"
                            : std::string())
     << "; compute total " << fmt(ct.total_us(m.layers, o.recompute) / 1e3, 3) << " ms\n\n";

  os << "Collectives (alone; 'x' = times per iteration)\n";
  TextTable ct2({"phase", "op", "role", "kind", "group", "p", "ip", "place", "share", "MB", "GB/s",
                 "alpha us", "us", "x", "total ms"});
  for_each_slot(p.comm, [&](const CommSlot& s, double mult) {
    const CollCost& c = s.cost;
    ct2.row({std::string(name_of(s.op.phase)) + (s.op.recompute ? "(rc)" : ""), s.op.op,
             std::string(name_of(s.op.role)), std::string(name_of(c.kind)),
             std::string(name_of(c.group)), std::to_string(c.p), std::to_string(c.ip),
             std::string(name_of(c.placement)), std::to_string(c.sharing), fmt(c.bytes / 1e6, 3),
             fmt(c.bw_gbps, 1), fmt(c.alpha_us, 1), fmt(c.time_us, 1), fmt(mult, 0),
             fmt(c.time_us * mult / 1e3, 3)});
  });
  os << ct2.str("  ");

  const Timeline& t = p.timeline;
  os << "\nOverlap: communication alone / exposed (ms)\n";
  TextTable ot({"group", "kind", "calls", "alone", "exposed"});
  for (Group gr : kGroups)
    for (CollKind k : kKinds) {
      const int gi = static_cast<int>(gr), ki = static_cast<int>(k);
      if (t.count[gi][ki] == 0) continue;
      ot.row({std::string(name_of(gr)), std::string(name_of(k)), fmt(t.count[gi][ki], 0),
              fmt(t.comm_us[gi][ki] / 1e3, 3), fmt(t.exposed_us[gi][ki] / 1e3, 3)});
    }
  os << ot.str("  ") << "  interference (compute slowed by overlapped communication): "
     << fmt(t.interference_us / 1e3, 3) << " ms\n\n";

  const GptMemory& mem = p.memory;
  os << "Memory per GPU (GB): params " << fmt(mem.params / 1e9) << ", grads "
     << fmt(mem.grads / 1e9) << ", optimizer " << fmt(mem.optimizer / 1e9) << ", gathered "
     << fmt(mem.gathered / 1e9) << ", grad blocks " << fmt(mem.grad_blocks / 1e9)
     << ", activations " << fmt(mem.activations / 1e9) << ", workspace " << fmt(mem.workspace / 1e9)
     << "; total " << fmt(mem.total() / 1e9) << " of " << fmt(p.memory_limit_bytes / 1e9)
     << (mem.total() <= p.memory_limit_bytes ? " (fits)" : " (does not fit: largest term " +
                                                              std::string(mem.largest_term()) + ")")
     << "\n\n";
  os << format_breakdown(p);
  return os.str();
}

json explain_json(const Prediction& p) {
  const ComputeTerms& ct = p.compute;
  json lin = json::array();
  auto linear = [&](const LinearCompute& c) {
    lin.push_back({{"layer", name_of(c.id)},
                   {"fwd", gemm_json(c.fwd)},
                   {"dx", gemm_json(c.dx)},
                   {"dw", gemm_json(c.dw)},
                   {"epilogue", mem_json(c.epilogue)}});
  };
  for (const LinearCompute& c : ct.block.lin) linear(c);
  linear(ct.head.lm_head);
  const BlockCompute& b = ct.block;
  json compute = {
      {"tokens_per_rank", ct.tokens},
      {"micro_steps", ct.micro_steps},
      {"accumulate_us",
       static_cast<double>(p.shape.layers) * b.accumulate_us + ct.head.accumulate_us},
      {"linears", lin},
      {"attention", {{"flop", b.attn_flop}, {"fwd_us", b.attn_fwd_us}, {"bwd_us", b.attn_bwd_us}}},
      {"memory_bound",
       {{"ln1", mem_json(b.ln1)},
        {"ln2", mem_json(b.ln2)},
        {"attention_io", mem_json(b.attn_io)},
        {"embedding", mem_json(ct.head.embed)},
        {"ln_f", mem_json(ct.head.ln_f)},
        {"cross_entropy", mem_json(ct.head.ce)}}},
      {"optimizer",
       {{"params", ct.optimizer.params},
        {"bytes", ct.optimizer.bytes},
        {"time_us", ct.optimizer.time_us}}},
      {"block_fwd_us", b.fwd_us},
      {"block_bwd_us", b.bwd_us},
      {"head_fwd_us", ct.head.fwd_us},
      {"head_bwd_us", ct.head.bwd_us},
      {"total_ms", ct.total_us(p.shape.layers, p.options.recompute) / 1e3}};
  json colls = json::array();
  for_each_slot(p.comm,
                [&](const CommSlot& s, double mult) { colls.push_back(slot_json(s, mult)); });
  json overlap = json::array();
  const Timeline& t = p.timeline;
  for (Group gr : kGroups)
    for (CollKind k : kKinds) {
      const int gi = static_cast<int>(gr), ki = static_cast<int>(k);
      if (t.count[gi][ki] > 0)
        overlap.push_back({{"group", name_of(gr)},
                           {"kind", name_of(k)},
                           {"count", t.count[gi][ki]},
                           {"alone_ms", t.comm_us[gi][ki] / 1e3},
                           {"exposed_ms", t.exposed_us[gi][ki] / 1e3}});
    }
  const GptMemory& mem = p.memory;
  return {{"config", summary_json(p)},
          {"compute", compute},
          {"collectives", colls},
          {"aggregated", p.comm.aggregated()},
          {"overlap", overlap},
          {"memory",
           {{"params", mem.params},
            {"grads", mem.grads},
            {"optimizer", mem.optimizer},
            {"gathered", mem.gathered},
            {"grad_blocks", mem.grad_blocks},
            {"activations", mem.activations},
            {"workspace", mem.workspace},
            {"total", mem.total()},
            {"limit", p.memory_limit_bytes},
            {"fits", p.fits}}}};
}

}  // namespace ovb::model
