// Overlap term of the model: a replay of the iteration's schedule (ovb::visit_gpt_schedule(), the
// steps gpt4d performs, docs/schedule.md) on a compute stream and the schedule's three
// communication streams (tp, gather, grad). Nothing about the order is written here: a new
// overlap scheme in the generator is priced by the same replay.
//  - compute step: its GEMM at the step's own shape (gemm_term(): the machine's GEMM rate, so a
//    GEMM cut into chunks runs each at the chunks' rate), plus for a forward or dX GEMM the
//    layer's memory-bound epilogue (bias, activation, residual, in proportion to the step's
//    rows); a memory-bound kernel by its name from ComputeTerms (layer norms, attention,
//    embedding, cross-entropy, accumulations, AdamW in proportion to each bucket's chunk; the
//    norms' statistics, RoPE, SwiGLU and GELU are inside the terms they belong to and cost 0);
//  - issue: the collective's cost (PlanComm's table on o.grid, else cost_collective() for a
//    (group, kind, count, dtype) the table lacks), starting after the compute stream's work so
//    far, its stream's previous collective and its dependencies;
//  - wait: the compute stream moves to the collective's end; slot takes and releases are both
//    compute-stream steps in order, so a take never precedes the release it needs.
// Interference: a collective waited for right after its issue runs alone (not stretched); any
// other runs while the compute stream works and is stretched by (1 + comm_slowdown); at a wait
// (or a run of consecutive waits, e.g. the end of backward) the compute stream is stretched by
// compute_slowdown times the time each collective ran before the first of those waits.
// Collectives in flight at the same time share the link that bounds them (NVLink inside a node,
// the NICs across nodes; ovb/model/link_share.hpp): their ends come from that fluid replay.
// Blocking wait (host machines with a Machine::blocking_wait table): a collective waited for right
// after its issue, when compute time C has passed since the compute stream last waited, starts no
// earlier than blocking_wait_us(C) after its issue - its partner ranks, on shared cores, are still
// computing or descheduled; the delay is part of its exposed time (a collective after another,
// with no compute between, is not charged: the first one lined the ranks up).
// iteration = compute + interference + exposed communication, exactly.
#pragma once

#include <array>
#include <limits>
#include <string>
#include <vector>

#include "ovb/gpt_plan.hpp"
#include "ovb/gpt_schedule.hpp"
#include "ovb/model/compute_cost.hpp"
#include "ovb/model/plan_comm.hpp"

namespace ovb::model {

struct Timeline {
  double iteration_us = 0;
  double compute_us = 0;
  double interference_us = 0;
  // Indexed [Group][CollKind]: time of the collectives alone, and the part of it the compute
  // stream waited for.
  std::array<std::array<double, 3>, 5> comm_us{};
  std::array<std::array<double, 3>, 5> exposed_us{};
  std::array<std::array<double, 3>, 5> count{};
  // The blocking waits charged (Machine::blocking_wait; included in exposed_us), counted from their
  // issues, and their sum.
  int blocking_waits = 0;
  double blocking_wait_us = 0;

  double exposed_total_us() const;
  double comm_group_us(Group g) const;
  double exposed_group_us(Group g) const;
};

// One interval of the predicted iteration on one stream (what `ovb-model explain --timeline`
// writes as a trace). Compute spans are on StreamId::compute; the interference charged at a wait
// is added to the compute op just before it (the last that ran under the collective; a span named
// "interference" where there is none); a collective's span is its time on its communication
// stream; the compute stream's wait for it, where it was exposed, is a span named "wait <op>" on
// the compute stream. The compute stream's spans tile [0, iteration].
struct Span {
  StreamId stream = StreamId::compute;
  std::string name;  // the step's op: "qkv.fwd", "attention", ...; a collective's CollOp::op
  double start_us = 0, end_us = 0;
  bool comm = false;  // a collective (group and kind below) or the compute stream's wait for one
  Group group = Group::world;
  CollKind kind = CollKind::all_reduce;
  Phase phase = Phase::forward;  // where the compute stream is (for a collective: at its issue,
  int micro_step = 0;            // for a wait: when it waits); 0 in the step
  int layer = -1;  // block index (a wait's: that of its collective's issue); -1 outside the blocks
};

// The replay of gpt_schedule(m, o) with ct's compute costs and pc's collective costs (pc costed on
// o.grid). give_up_at_us: the search's shortcut for a variant that cannot beat one already found.
// The compute stream's clock only moves forward, so once it reaches this time (checked at every
// compute step and at the end) the iteration cannot end earlier: the replay stops and returns
// iteration_us = infinity (the other terms partial). spans: when given, every interval of the
// replay is appended (no cost when null, as in the search). When no collective can overlap under
// o (every one waited for at its issue: blocking_comm_us() is all of pc), no spans are asked for
// and the machine has no blocking wait, the result is computed as what the replay then is, the sum
// of its terms (equal to the replay up to rounding, tested): the search's configurations without
// overlap flags.
Timeline simulate(const GptShape& m, const ComputeTerms& ct, const PlanComm& pc,
                  const GptPlanOptions& o, const Machine& mc,
                  double give_up_at_us = std::numeric_limits<double>::infinity(),
                  std::vector<Span>* spans = nullptr);

// The same replay of a schedule given as a list: gpt_schedule(m, o), or one changed by hand (a
// test's chunked collective). Its collectives are costed on o.grid like simulate()'s.
Timeline replay_schedule(const GptSchedule& sched, const GptShape& m, const ComputeTerms& ct,
                         const PlanComm& pc, const GptPlanOptions& o, const Machine& mc,
                         std::vector<Span>* spans = nullptr);

// The communication the compute stream waits for in full under o's overlap flags: the roles the
// schedule always waits for right after their issue (every collective without flags; with OAG
// the Z all-gathers, with OAR the dX all-reduces, with ORS the gradient reductions and the step's
// all-gathers are waited for later and are left out), each with its multiplicity per iteration.
// Nothing is subtracted from the iteration, so ct.total_us() + this is a lower bound of
// iteration_us; without overlap flags (and so nothing asynchronous) it is the iteration itself, up
// to rounding.
double blocking_comm_us(const PlanComm& pc, const GptPlanOptions& o);

// Whether every collective is waited for at its issue under o's flags (blocking_comm_us() is all
// of pc): nothing runs under anything, so the replay is the sum of its terms, which simulate()
// then returns without replaying.
bool nothing_overlaps(const PlanComm& pc, const GptPlanOptions& o);

}  // namespace ovb::model
