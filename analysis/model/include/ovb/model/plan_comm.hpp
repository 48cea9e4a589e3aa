// The collectives of one iteration, costed. They come from ovb::gpt_collectives() - the list
// gpt4d executes - never from a copy of the schedule: every op of that list is put into exactly
// one slot of the tables below (an op the model has no slot for is an error, so the model cannot
// silently drift from the plan). Slots of ops that are not issued (group of size 1) stay empty.
//
// Aggregation: the blocks of a GPT issue the same collectives, so the list of a 2-block model is
// costed (one block's ops once) and multiplied by the number of layers; `plan_comm` checks that the
// two blocks are identical and otherwise costs every block of the real list separately.
// Micro-steps: the slots hold one micro-step's ops (every micro-step issues the same ones, which
// is checked) and the once-per-iteration reductions of the last (with sharded gradients they are
// per micro-step like the rest); the timeline replays them micro_steps times.
#pragma once

#include <array>
#include <vector>

#include "ovb/gpt_plan.hpp"
#include "ovb/grid.hpp"
#include "ovb/model/comm_cost.hpp"

namespace ovb::model {

// A slot: the costed op, or nothing (present == false).
struct CommSlot {
  bool present = false;
  CollOp op;
  CollCost cost;
  double us() const { return present ? cost.time_us : 0.0; }
};

struct LinearComm {
  CommSlot gather;         // forward Z all-gather
  CommSlot out_reduce;     // forward all-reduce over in_dim
  CommSlot gather_rc;      // Z all-gather of the recomputed forward
  CommSlot out_reduce_rc;  // all-reduce of the recomputed forward
  CommSlot gather_bwd;     // Z all-gather before the backward (no caching, no recompute)
  CommSlot in_grad;        // backward all-reduce of dX over out_dim
  CommSlot wgrad;          // Z reduce-scatter of dW
};

struct BlockComm {
  std::array<LinearComm, 4> lin;  // qkv, attn_out, mlp_up, mlp_down
  CommSlot ln1, ln2, ln1_rc, ln2_rc, ln1_grad, ln2_grad;
  CommSlot param_reduce, data_reduce;
  CommSlot param_gather;  // sharded optimizer: the step's data all-gather of the bucket
};

struct HeadComm {
  LinearComm lm_head;
  CommSlot ln_f, ln_f_grad, ce;
  CommSlot param_reduce, data_reduce;
  CommSlot scalars;       // the world all-reduce of the step
  CommSlot param_gather;  // sharded optimizer: the step's data all-gather of the head bucket
};

// Issued once per iteration (in the last micro-step or the step), not once per micro-step: the Z
// small-parameter and data reductions, and the step's collectives (world all-reduce, sharded-optimizer
// all-gathers). With sharded gradients (`reductions_every_micro_step`, ovb::gradients_sharded())
// the Z small-parameter and data reductions run in every micro-step.
inline bool once_per_iteration(const CollOp& op, bool reductions_every_micro_step = false) {
  if (op.phase == Phase::step || op.role == CollRole::scalars) return true;
  return !reductions_every_micro_step &&
         (op.role == CollRole::param_grad_reduce || op.role == CollRole::data_grad_reduce);
}

struct PlanComm {
  std::vector<BlockComm> blocks;  // one entry (every block alike) or one per block
  HeadComm head;
  std::int64_t layers = 0;
  std::int64_t micro_steps = 1;
  bool reductions_every_micro_step = false;  // sharded gradients (see once_per_iteration())
  bool once(const CollOp& op) const { return once_per_iteration(op, reductions_every_micro_step); }
  const BlockComm& block(std::int64_t l) const {
    return blocks.size() == 1 ? blocks[0] : blocks[static_cast<std::size_t>(l)];
  }
  bool aggregated() const { return blocks.size() == 1 && layers > 1; }
};

// Costs the collective list of (m, o) on o.grid (its order gives each group's stride).
PlanComm plan_comm(const GptShape& m, const GptPlanOptions& o, const Machine& mc);
// The same in two steps: the slots (independent of the grid order), then their costs for one
// order of the same grid sizes (the search re-costs one table for every order).
PlanComm plan_comm_uncosted(const GptShape& m, const GptPlanOptions& o);
void recost(PlanComm& pc, const Machine& mc, const GridShape& shape);

// The same ops, costed one by one from the full gpt_collectives() list (the reference the
// aggregated tables must equal; also what `explain --ops` prints).
struct CostedOp {
  CollOp op;
  CollCost cost;
};
std::vector<CostedOp> costed_collectives(const GptShape& m, const GptPlanOptions& o,
                                         const Machine& mc);

// The ops of the tables as a list, blocks expanded to every layer: equal, as a multiset, to
// gpt_collectives() of the same configuration (tested).
std::vector<CollOp> expand(const PlanComm& pc);

// Visits every present slot with its multiplicity per iteration (layers for an aggregated block,
// else 1; times the micro-steps unless issued once per iteration).
template <class F>
void for_each_slot(const PlanComm& pc, F&& f) {
  const double steps = static_cast<double>(pc.micro_steps);
  auto visit = [&](const CommSlot* s, double mult) {
    if (s->present) f(*s, pc.once(s->op) ? mult : mult * steps);
  };
  auto linear = [&](const LinearComm& l, double mult) {
    for (const CommSlot* s : {&l.gather, &l.out_reduce, &l.gather_rc, &l.out_reduce_rc,
                              &l.gather_bwd, &l.in_grad, &l.wgrad})
      visit(s, mult);
  };
  const double mult = pc.blocks.size() == 1 ? static_cast<double>(pc.layers) : 1.0;
  for (const BlockComm& b : pc.blocks) {
    for (const LinearComm& l : b.lin) linear(l, mult);
    for (const CommSlot* s : {&b.ln1, &b.ln2, &b.ln1_rc, &b.ln2_rc, &b.ln1_grad, &b.ln2_grad,
                              &b.param_reduce, &b.data_reduce, &b.param_gather})
      visit(s, mult);
  }
  const HeadComm& h = pc.head;
  linear(h.lm_head, 1.0);
  for (const CommSlot* s :
       {&h.ln_f, &h.ln_f_grad, &h.ce, &h.param_reduce, &h.data_reduce, &h.scalars,
        &h.param_gather})
    visit(s, 1.0);
}

}  // namespace ovb::model
