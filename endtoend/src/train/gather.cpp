// Z all-gathers of weight shards (see gather.hpp).
#include "train/gather.hpp"

#include <algorithm>

#include "ovb/error.hpp"
#include "ovb/gpt_schedule.hpp"

namespace ovb::gpt {

namespace {
int linear_index(const LinearParams& lp) {
  switch (lp.geom.spec.id) {
    case LinearId::qkv: return 0;
    case LinearId::attn_out: return 1;
    case LinearId::mlp_up: return 2;
    case LinearId::mlp_down: return 3;
    case LinearId::lm_head: return 4;
  }
  return 4;
}
}  // namespace

WeightGatherer::WeightGatherer(const GptShape& m, const GptPlanOptions& o,
                               const ParamLayout& layout, CommEngine& comm, TrackedMemory& mem,
                               const void* work)
    : o_(o),
      layout_(layout),
      comm_(comm),
      work_(static_cast<const char*>(work)),
      act_size_(size_of(o.act_dtype)),
      active_(o.grid.gz > 1) {
  if (!active_) return;
  const int L = static_cast<int>(m.layers);
  // The requests and their slots are the iteration schedule's weight gathers (every micro-step
  // gathers by the same ones): each issue in order, in the slot taken just before it.
  const GptSchedule sched = gpt_schedule(m, o);
  int slot = -1;
  for (const Step& s : sched.steps) {
    if (s.micro_step != 0) break;
    if (s.kind == StepKind::slot_take && s.pool == SlotPool::gathered) slot = s.slot;
    if (s.kind != StepKind::issue ||
        sched.collectives[static_cast<std::size_t>(s.coll)].role != CollRole::weight_gather)
      continue;
    const int linear = s.layer < 0 ? 4 : s.linear.value - 4 * s.layer;
    schedule_.push_back({s.layer, linear, s.phase, s.recompute});
    ring_index_.push_back(slot);
  }
  handle_.assign(schedule_.size(), -1);
  issued_.assign(schedule_.size(), false);

  const LinearGeom head = layout.head.lm_head.geom;
  if (o.cache_weights) {  // slot 4l+i: block l's linear i; 4L: the LM head
    for (int l = 0; l < L; ++l)
      for (int i = 0; i < 4; ++i)
        slots_.push_back({mem.allocate(
            static_cast<std::size_t>(layout.blocks[l].linear(i).geom.block) * act_size_,
            MemKind::gathered)});
  } else {  // a ring of K slots of the largest block, then the LM head's
    std::int64_t max_block = 0;
    for (int i = 0; i < 4 && L > 0; ++i)
      max_block = std::max(max_block, layout.blocks[0].linear(i).geom.block);
    for (int k = 0; k + 1 < sched.gathered_slots; ++k)
      slots_.push_back(
          {mem.allocate(static_cast<std::size_t>(max_block) * act_size_, MemKind::gathered)});
  }
  slots_.push_back(
      {mem.allocate(static_cast<std::size_t>(head.block) * act_size_, MemKind::gathered)});
  if (static_cast<int>(slots_.size()) != sched.gathered_slots)
    throw Error("gpt4d internal error: " + std::to_string(slots_.size()) +
                " gathered slots, the schedule has " + std::to_string(sched.gathered_slots));
}

const LinearParams& WeightGatherer::params(const Request& r) const {
  return r.layer < 0 ? layout_.head.lm_head
                     : layout_.blocks[static_cast<std::size_t>(r.layer)].linear(r.linear);
}

int WeightGatherer::slot_of(std::size_t k) const {
  return ring_index_[k];
}

void WeightGatherer::issue(std::size_t k) {
  const Request& r = schedule_[k];
  const LinearParams& lp = params(r);
  Slot& slot = slots_[static_cast<std::size_t>(slot_of(k))];
  if (slot.holder >= 0 && !o_.cache_weights)
    throw Error("gpt4d internal error: gather slot still holds schedule entry " +
                std::to_string(slot.holder));
  slot.holder = static_cast<int>(k);
  const TensorDesc& w = layout_[lp.weight];
  CollOp op{r.phase,
            r.layer,
            std::string(name_of(lp.geom.spec.id)),
            CollRole::weight_gather,
            CollKind::all_gather,
            Group::z,
            0,
            lp.geom.shard,
            o_.act_dtype,
            r.recompute,
            micro_step_};
  handle_[k] =
      comm_.issue(op, work_ + static_cast<std::size_t>(w.offset) * act_size_, slot.buffer.data());
  issued_[k] = true;
}

const void* WeightGatherer::acquire(const LinearParams& lp, Phase phase, bool recompute) {
  if (!active_) return work_ + static_cast<std::size_t>(layout_[lp.weight].offset) * act_size_;
  const int li = linear_index(lp);
  if (o_.cache_weights && phase == Phase::backward) {
    const std::size_t k =
        lp.layer < 0 ? 4 * layout_.blocks.size() : 4 * static_cast<std::size_t>(lp.layer) + li;
    return slots_[k].buffer.data();
  }
  if (o_.recompute && phase == Phase::backward && !recompute && lp.layer >= 0) {
    // Not cached, recomputed: the backward uses what the recomputed forward gathered.
    for (const Slot& sl : slots_)
      if (sl.holder >= 0 && static_cast<std::size_t>(sl.holder) < cursor_ &&
          schedule_[static_cast<std::size_t>(sl.holder)] == Request{lp.layer, li, phase, true})
        return sl.buffer.data();
    throw Error("gpt4d internal error: layer " + std::to_string(lp.layer) + " " +
                std::string(name_of(lp.geom.spec.id)) + " was not gathered by its recomputation");
  }
  const Request want{lp.layer, li, phase, recompute};
  if (cursor_ >= schedule_.size() || !(schedule_[cursor_] == want))
    throw Error("gpt4d internal error: weight gather out of schedule (layer " +
                std::to_string(lp.layer) + " " + std::string(name_of(lp.geom.spec.id)) + ")");
  const std::size_t k = cursor_++;
  if (!issued_[k]) issue(k);
  if (o_.oag && k + 1 < schedule_.size() && schedule_[k + 1].phase == phase && !issued_[k + 1])
    issue(k + 1);  // prefetch: starts before this layer's compute is enqueued
  comm_.wait(handle_[k]);
  return slots_[static_cast<std::size_t>(slot_of(k))].buffer.data();
}

void WeightGatherer::release(const LinearParams& lp, bool recompute) {
  if (!active_ || o_.cache_weights || recompute) return;
  const int li = linear_index(lp);
  for (Slot& s : slots_)
    if (s.holder >= 0 && schedule_[static_cast<std::size_t>(s.holder)].layer == lp.layer &&
        schedule_[static_cast<std::size_t>(s.holder)].linear == li &&
        static_cast<std::size_t>(s.holder) < cursor_) {
      s.holder = -1;
      return;
    }
}

void WeightGatherer::begin_micro_step(int k) {
  micro_step_ = k;
  cursor_ = 0;
  std::fill(issued_.begin(), issued_.end(), false);
  std::fill(handle_.begin(), handle_.end(), -1);
  for (Slot& s : slots_) s.holder = -1;
}

}  // namespace ovb::gpt
