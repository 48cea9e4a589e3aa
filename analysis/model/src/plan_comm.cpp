// Costed collective tables from ovb::gpt_collectives() (see plan_comm.hpp).
#include "ovb/model/plan_comm.hpp"

#include <algorithm>

#include "ovb/error.hpp"

namespace ovb::model {

namespace {

int linear_index(std::string_view op) {
  static constexpr std::string_view names[] = {"qkv", "attn_out", "mlp_up", "mlp_down"};
  for (int i = 0; i < 4; ++i)
    if (op == names[i]) return i;
  return -1;
}

[[noreturn]] void no_slot(const CollOp& op) {
  throw Error("ovb-model has no place in its timeline for the plan's collective '" + describe(op) +
              "' (gpt_plan changed: update analysis/model/src/plan_comm.cpp)");
}

CommSlot* linear_slot(LinearComm& l, const CollOp& op) {
  switch (op.role) {
    case CollRole::weight_gather:
      if (op.phase == Phase::forward) return &l.gather;
      return op.recompute ? &l.gather_rc : &l.gather_bwd;
    case CollRole::output_reduce: return op.recompute ? &l.out_reduce_rc : &l.out_reduce;
    case CollRole::input_grad_reduce: return &l.in_grad;
    case CollRole::weight_grad_scatter: return &l.wgrad;
    default: return nullptr;
  }
}

CommSlot* block_slot(BlockComm& b, const CollOp& op) {
  if (const int i = linear_index(op.op); i >= 0) return linear_slot(b.lin[i], op);
  const bool ln1 = op.op == "ln1", ln2 = op.op == "ln2";
  if (ln1 || ln2) {
    if (op.role == CollRole::ln_stats)
      return ln1 ? (op.recompute ? &b.ln1_rc : &b.ln1) : (op.recompute ? &b.ln2_rc : &b.ln2);
    if (op.role == CollRole::ln_grad_stats) return ln1 ? &b.ln1_grad : &b.ln2_grad;
  }
  if (op.op == "block" && op.role == CollRole::param_grad_reduce) return &b.param_reduce;
  if (op.op == "block" && op.role == CollRole::data_grad_reduce) return &b.data_reduce;
  if (op.op == "block" && op.role == CollRole::param_gather) return &b.param_gather;
  return nullptr;
}

CommSlot* head_slot(HeadComm& h, const CollOp& op) {
  if (op.op == "lm_head") return linear_slot(h.lm_head, op);
  if (op.op == "ln_f" && op.role == CollRole::ln_stats) return &h.ln_f;
  if (op.op == "ln_f" && op.role == CollRole::ln_grad_stats) return &h.ln_f_grad;
  if (op.op == "loss" && op.role == CollRole::ce_stats) return &h.ce;
  if (op.op == "head" && op.role == CollRole::param_grad_reduce) return &h.param_reduce;
  if (op.op == "head" && op.role == CollRole::data_grad_reduce) return &h.data_reduce;
  if (op.op == "global" && op.role == CollRole::scalars) return &h.scalars;
  if (op.op == "head" && op.role == CollRole::param_gather) return &h.param_gather;
  return nullptr;
}

void place(CommSlot* s, const CollOp& op) {
  if (!s) no_slot(op);
  if (s->present)
    throw Error("ovb-model found the plan's collective '" + describe(op) +
                "' twice in one block (gpt_plan changed: update analysis/model/src/plan_comm.cpp)");
  s->present = true;
  s->op = op;
}

// One micro-step's ops and the once-per-iteration ones; throws when another micro-step issues
// different ops from the first (the slots would not describe it). The list gives the micro-steps
// one after the other: each op of a later one is compared with the op at its place in the first.
std::vector<CollOp> first_micro_step(const std::vector<CollOp>& ops, const PlanComm& pc) {
  const std::int64_t steps = pc.micro_steps;
  std::vector<CollOp> first;
  std::vector<std::size_t> step0;  // the per-micro-step ops of the first, indices into ops
  std::vector<std::size_t> seen(static_cast<std::size_t>(steps), 0);  // per micro-step
  auto differs = [](std::int64_t k) {
    return Error("ovb-model: micro-step " + std::to_string(k) +
                 " of the plan issues other collectives than the first (gpt_plan changed: "
                 "update analysis/model/src/plan_comm.cpp)");
  };
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const CollOp& op = ops[i];
    if (pc.once(op) || op.micro_step == 0) first.push_back(op);
    if (pc.once(op) || op.micro_step < 0 || op.micro_step >= steps) continue;
    const std::size_t n = seen[static_cast<std::size_t>(op.micro_step)]++;
    if (op.micro_step == 0) {
      step0.push_back(i);
      continue;
    }
    CollOp plain = op;
    plain.micro_step = 0;
    if (n >= step0.size() || !(plain == ops[step0[n]])) throw differs(op.micro_step);
  }
  for (std::int64_t k = 1; k < steps; ++k)
    if (seen[static_cast<std::size_t>(k)] != step0.size()) throw differs(k);
  return first;
}

// Same ops in the same order, whatever their layer index.
bool same_block(const std::vector<CollOp>& a, const std::vector<CollOp>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](CollOp x, CollOp y) {
    x.layer = y.layer = 0;
    return x == y;
  });
}

}  // namespace

void recost(PlanComm& pc, const Machine& mc, const GridShape& shape) {
  const Grid grid(shape, shape.world());
  auto cost = [&](CommSlot& s) {
    if (s.present) s.cost = cost_collective(mc, grid, s.op);
  };
  auto linear = [&](LinearComm& l) {
    for (CommSlot* s : {&l.gather, &l.out_reduce, &l.gather_rc, &l.out_reduce_rc, &l.gather_bwd,
                        &l.in_grad, &l.wgrad})
      cost(*s);
  };
  for (BlockComm& b : pc.blocks) {
    for (LinearComm& l : b.lin) linear(l);
    for (CommSlot* s : {&b.ln1, &b.ln2, &b.ln1_rc, &b.ln2_rc, &b.ln1_grad, &b.ln2_grad,
                        &b.param_reduce, &b.data_reduce, &b.param_gather})
      cost(*s);
  }
  linear(pc.head.lm_head);
  for (CommSlot* s : {&pc.head.ln_f, &pc.head.ln_f_grad, &pc.head.ce, &pc.head.param_reduce,
                      &pc.head.data_reduce, &pc.head.scalars, &pc.head.param_gather})
    cost(*s);
}

PlanComm plan_comm_uncosted(const GptShape& m, const GptPlanOptions& o) {
  PlanComm pc;
  pc.layers = m.layers;
  pc.micro_steps = micro_steps(o);
  pc.reductions_every_micro_step = gradients_sharded(o);
  // The list of a model with two blocks tells whether the blocks issue identical collectives.
  GptShape unit = m;
  unit.layers = std::min<std::int64_t>(m.layers, 2);
  const std::vector<CollOp> ops = first_micro_step(gpt_collectives(unit, o), pc);
  std::vector<CollOp> b0, b1;
  for (const CollOp& op : ops) (op.layer == 0 ? b0 : b1).push_back(op);
  b1.erase(std::remove_if(b1.begin(), b1.end(), [](const CollOp& op) { return op.layer < 0; }),
           b1.end());
  const bool homogeneous = unit.layers == 1 || same_block(b0, b1);

  const std::vector<CollOp> all =
      homogeneous ? ops : first_micro_step(gpt_collectives(m, o), pc);
  pc.blocks.resize(homogeneous ? 1 : static_cast<std::size_t>(m.layers));
  for (const CollOp& op : all) {
    if (op.layer < 0)
      place(head_slot(pc.head, op), op);
    else if (!homogeneous)
      place(block_slot(pc.blocks[static_cast<std::size_t>(op.layer)], op), op);
    else if (op.layer == 0)
      place(block_slot(pc.blocks[0], op), op);
  }
  return pc;
}

PlanComm plan_comm(const GptShape& m, const GptPlanOptions& o, const Machine& mc) {
  PlanComm pc = plan_comm_uncosted(m, o);
  recost(pc, mc, o.grid);
  return pc;
}

std::vector<CollOp> expand(const PlanComm& pc) {
  std::vector<CollOp> out;
  PlanComm one = pc;  // visit the head once and each block once, then replicate the blocks
  const bool agg = pc.blocks.size() == 1;
  one.layers = 1;
  one.micro_steps = 1;
  for_each_slot(one, [&](const CommSlot& s, double) {
    const std::int64_t steps = pc.once(s.op) ? 1 : pc.micro_steps;
    const std::int64_t layers = s.op.layer < 0 || !agg ? 1 : pc.layers;
    for (std::int64_t k = 0; k < steps; ++k)
      for (std::int64_t l = 0; l < layers; ++l) {
        CollOp op = s.op;
        if (layers > 1) op.layer = static_cast<int>(l);
        if (steps > 1) op.micro_step = static_cast<int>(k);
        out.push_back(op);
      }
  });
  return out;
}

std::vector<CostedOp> costed_collectives(const GptShape& m, const GptPlanOptions& o,
                                         const Machine& mc) {
  const Grid grid(o.grid, o.grid.world());
  std::vector<CostedOp> out;
  for (const CollOp& op : gpt_collectives(m, o)) out.push_back({op, cost_collective(mc, grid, op)});
  return out;
}

}  // namespace ovb::model
