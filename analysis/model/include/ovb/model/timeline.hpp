// Overlap term of the model: one iteration replayed on a compute stream and three communication
// streams (tensor-parallel all-reduces, Z all-gathers, gradient reductions), in the order gpt4d
// runs it (docs/algorithm.md, "Streams and the overlap optimisations"):
//  - without flags every collective blocks the compute stream;
//  - OAR: the backward dX all-reduce runs while the dW GEMM computes;
//  - ORS: Z reduce-scatters, block/head small-parameter and data-parallel bucket all-reduces are
//    queued on the gradient stream and waited for once, before the step (when a layer's dX
//    all-reduce is not issued - its group has size 1 - the dW GEMM and its reduce-scatter come
//    before the dX GEMM);
//  - sharded optimizer: the data reduce-scatters take the place of the bucket all-reduces (and
//    are queued like them under ORS); in the step each bucket's data all-gather of updated
//    weights follows its share of AdamW: blocking without ORS, with ORS on the gradient stream
//    behind the next buckets' updates, all waited for at the end of the step;
//  - OAG: each Z all-gather is issued when the previous one of its phase was consumed (one layer
//    ahead), so it hides behind the previous layer's work.
// Micro-steps: forward and backward run once per micro-step, the Z small-parameter and data
// reductions in the last one only; the gradient stream carries over from one micro-step to the
// next (the ORS ring included), and a micro-step after the first waits, before adding a layer's
// accumulated shard, for that layer's reduce-scatter of the micro-step before (as gpt4d does).
// A collective running asynchronously is stretched by (1 + comm_slowdown); the compute stream is
// stretched by compute_slowdown times the time the collective ran under it (interference).
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

  double exposed_total_us() const;
  double comm_group_us(Group g) const;
  double exposed_group_us(Group g) const;
};

// One interval of the predicted iteration on one stream (what `ovb-model explain --timeline`
// writes as a trace). Compute spans are on StreamId::compute (interference included in the op that
// ran stretched: the compute stream's last op, else a span "interference"); a collective's span is
// its time on its communication stream (stream_of(op)); the compute stream's wait for it, where it
// was exposed, is a span named "wait <op>" on the compute stream. Spans of one stream never
// overlap, and the compute stream's add up to iteration_us (compute + interference + exposed).
// Empty intervals are left out.
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

// give_up_at_us: the search's shortcut for a variant that cannot beat one already found. The
// compute stream's clock only moves forward, so once it reaches this time (checked after every
// block) the iteration cannot end earlier: the replay stops and returns iteration_us =
// infinity (the other terms partial). spans: when given, every interval of the replay is
// appended (no cost when null, as in the search).
Timeline simulate(const ComputeTerms& ct, const PlanComm& pc, const GptPlanOptions& o,
                  const Machine& mc,
                  double give_up_at_us = std::numeric_limits<double>::infinity(),
                  std::vector<Span>* spans = nullptr);

// The communication the compute stream waits for in full under o's overlap flags: the blocking
// calls of simulate() (every collective without flags; with OAG the Z all-gathers, with OAR the
// dX all-reduces, with ORS the gradient reductions and the step's all-gathers run
// asynchronously and are left out), each with its multiplicity per iteration. Nothing is
// subtracted from the iteration, so ct.total_us() + this is a lower bound of iteration_us; without
// overlap flags (and so nothing asynchronous) it is the iteration itself, up to rounding.
double blocking_comm_us(const PlanComm& pc, const GptPlanOptions& o);

}  // namespace ovb::model
