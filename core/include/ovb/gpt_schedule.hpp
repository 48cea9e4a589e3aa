// The schedule of one training iteration on one rank, as data: the ordered steps - compute ops
// (GEMMs with their shapes, memory-bound kernels by name), collective issues (with their stream
// and the collectives they depend on), the compute stream's waits for them, and the buffer slots
// taken and released - generated once from the model shape and the plan options
// (docs/schedule.md).
//
// It is the order gpt4d performs: its issues and waits equal this list step by step for every
// grid and option (endtoend/tests/test_collective_log.cpp checks the sequence), and
// gpt_collectives() is this schedule's issues without overlap flags. A new overlap scheme changes
// the generator (gpt_schedule.cpp); the consumers read the steps - as a list (gpt_schedule()) or,
// without storing them, one at a time (visit_gpt_schedule(): what the model's replay does for every
// variant of a search).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ovb/gpt_plan.hpp"

namespace ovb {

// The stream a step runs on. gpt4d (endtoend/src/train/comm.hpp): every kernel on `compute`; the
// X/Y all-reduces, the cross-entropy all-gather and the world all-reduce on `tp`; the Z weight
// all-gathers on `gather`; the Z reduce-scatters and small-parameter all-reduces and every data
// collective on `grad`.
enum class StreamId { compute, tp, gather, grad };
std::string_view name_of(StreamId s);  // "compute", "tp", "gather", "grad"
StreamId stream_of(const CollOp& op);

enum class StepKind { compute, issue, wait, slot_take, slot_release };
std::string_view name_of(StepKind k);  // "compute", "issue", "wait", "slot_take", "slot_release"

// The rings of buffers whose slots the schedule takes and releases.
enum class SlotPool {
  gathered,  // Z-gathered weight blocks (every layer's when cached, else a ring + the LM head's)
  dw,        // fp32 dW blocks awaiting their Z reduce-scatter (dw_slots())
  bucket,    // sharded gradients' bucket buffers: the ring of block buckets, then the head's
};
std::string_view name_of(SlotPool p);  // "gathered", "dw", "bucket"

// GEMM C[m, n] = sum over k of A[m, k] B[k, n] (0 x 0 x 0: not a GEMM).
struct GemmShape {
  std::int64_t m = 0, n = 0, k = 0;
  bool operator==(const GemmShape&) const = default;
};

// Index of a linear layer among all of them: 4 per block in forward order, then the LM head (4L).
struct LinearOrdinal {
  int value = -1;  // -1: not a linear layer
  bool operator==(const LinearOrdinal&) const = default;
};

// One step. `phase` and `micro_step` say where in the iteration it happens; `layer`, `linear`
// and `op` what it belongs to - for a wait, the collective it waits for (a wait that ORS defers to
// the end of backward keeps the layer of its collective).
struct Step {
  StepKind kind = StepKind::compute;
  Phase phase = Phase::forward;
  int micro_step = 0;  // 0 in the step phase
  int layer = -1;  // block index; -1 for embedding / final LN / LM head / buckets' head / global
  LinearOrdinal linear;    // the linear layer a GEMM, gather, reduction or dW slot belongs to
  bool recompute = false;  // inside the recomputed forward of a block's backward
  StreamId stream = StreamId::compute;
  // compute: the kernel ("qkv.fwd", "qkv.dx", "qkv.dw", "ln1.stats", "ln1", "attention", ...);
  // issue / wait: the collective's op (CollOp::op); slot steps: the pool's name. Always a constant
  // of the generator (static storage): a consumer may keep it, or key a table by it.
  std::string_view op;
  GemmShape gemm;  // compute GEMMs
  int coll = -1;   // issue / wait: the collective's id (its index in GptSchedule::collectives)
  std::vector<int> deps;  // issue: ids of the collectives it starts after (besides the compute
                          // stream's work so far)
  SlotPool pool = SlotPool::gathered;  // slot_take / slot_release
  int slot = -1;
};

// The resolved counts of a schedule.
struct ScheduleCounts {
  int micro_steps = 1;
  int gathered_slots = 0;  // Gz > 1: 4L+1 cached, else ring K (1, 4 with recompute, +1 with OAG)
                           // + the LM head's
  int dw_slots = 0;        // dw_slots()
  int bucket_slots = 0;    // sharded gradients: grad_bucket_slots() + the head bucket's, else 0
};

// The counts of gpt_schedule(m, o) without generating it (what gpt_memory() charges for the slots).
ScheduleCounts schedule_counts(const GptShape& m, const GptPlanOptions& o);

struct GptSchedule : ScheduleCounts {
  std::vector<Step> steps;
  std::vector<CollOp> collectives;  // by id = issue order; group_size filled in

  const Step& issue_of(int coll) const;  // the issue step of collective `coll`
};

// The schedule of one iteration on one rank (every rank of a grid has the same one). Validates
// the plan (UsageError naming the failed rule).
GptSchedule gpt_schedule(const GptShape& m, const GptPlanOptions& o);

// The same steps handed to `visitor` one at a time, in order, none stored: `issued` is the
// collective of an issue step (group_size filled in; valid during the call), else null. The step
// is valid during the call only. Returns the counts. gpt_schedule() is this visit collected.
class StepVisitor {
 public:
  virtual void step(const Step& s, const CollOp* issued) = 0;

 protected:
  ~StepVisitor() = default;
};
ScheduleCounts visit_gpt_schedule(const GptShape& m, const GptPlanOptions& o, StepVisitor& visitor);

// One line per step, e.g. "forward L1 compute qkv.fwd gemm 64x96x32", "backward issue c15
// backward L0 qkv weight_grad_scatter reduce_scatter z(2) count=3072 fp32 on grad", "backward
// issue c17 backward L0 block data_grad_reduce all_reduce data(2) count=... fp32 on grad after
// c15,c16", "backward wait c15 ...", "backward L0 slot_take dw[0]".
std::string describe(const Step& s, const GptSchedule& sched);

}  // namespace ovb
