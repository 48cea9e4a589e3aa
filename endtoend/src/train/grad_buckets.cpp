// Bucket buffers of sharded gradients (see grad_buckets.hpp).
#include "train/grad_buckets.hpp"

#include <algorithm>

#include "ovb/error.hpp"

namespace ovb::gpt {

GradBuckets::GradBuckets(const GptPlanOptions& o, const ParamLayout& layout,
                         const std::vector<std::pair<std::int64_t, std::int64_t>>& added,
                         CommEngine& comm, Kernels& k, TrackedMemory& mem, float* shard)
    : buckets_(layout.buckets), comm_(comm), k_(k), shard_(shard), ors_(o.ors) {
  if (!gradients_sharded(o)) return;
  for (const Bucket& b : buckets_) {
    std::vector<std::pair<std::int64_t, std::int64_t>> rel;
    for (const auto& [off, n] : added) {
      const std::int64_t lo = std::max(off, b.offset), hi = std::min(off + n, b.offset + b.count);
      if (hi > lo) rel.emplace_back(lo - b.offset, hi - lo);
    }
    added_.push_back(std::move(rel));
  }
  const Bucket& hb = buckets_.back();
  head_.buffer = mem.allocate(static_cast<std::size_t>(hb.extent) * 4, MemKind::grads);
  std::int64_t block = 0;
  for (std::size_t i = 0; i + 1 < buckets_.size(); ++i) block = std::max(block, buckets_[i].extent);
  for (int s = 0; s < grad_bucket_slots(o); ++s)
    ring_.push_back({mem.allocate(static_cast<std::size_t>(block) * 4, MemKind::grads)});
  current_.assign(buckets_.size(), nullptr);
  first_.assign(buckets_.size(), -1);
  clear();
}

void GradBuckets::clear() {
  Stream& s = comm_.compute();
  if (head_.buffer.data()) k_.zero(s, head_.buffer.data(), head_.buffer.bytes());
  for (Slot& r : ring_) k_.zero(s, r.buffer.data(), r.buffer.bytes());
}

float* GradBuckets::scratch(int b) const {
  if (head_.buffer.data() == nullptr)
    throw Error("gpt4d internal error: bucket buffer requested without sharded gradients");
  return head(b) ? head_.buffer.as<float>() : ring_.front().buffer.as<float>();
}

void GradBuckets::settle(Slot& s) {
  comm_.wait(s.reader);  // a no-op for -1 and for a reduce-scatter already waited for
  s.reader = -1;
  if (s.pending < 0) return;
  const Bucket& b = buckets_[static_cast<std::size_t>(s.pending)];
  comm_.wait(first_[static_cast<std::size_t>(s.pending)]);  // it wrote the shard added into
  k_.accumulate(comm_.compute(), s.buffer.as<float>() + (b.own_offset - b.offset),
                shard_ + b.shard_offset, b.own_count);
  s.pending = -1;
}

float* GradBuckets::take(int b) {
  if (ring_.empty()) throw Error("gpt4d internal error: bucket buffer without sharded gradients");
  Slot& s = head(b) ? head_ : ring_[next_++ % ring_.size()];
  settle(s);
  float* base = s.buffer.as<float>();
  for (const auto& [off, n] : added_[static_cast<std::size_t>(b)])
    k_.zero(comm_.compute(), base + off, static_cast<std::size_t>(n) * 4);
  current_[static_cast<std::size_t>(b)] = &s;
  return base;
}

float* GradBuckets::reduce_target(int b, int k) const {
  const Bucket& bk = buckets_[static_cast<std::size_t>(b)];
  if (k == 0) return shard_ + bk.shard_offset;
  return current_[static_cast<std::size_t>(b)]->buffer.as<float>() + (bk.own_offset - bk.offset);
}

void GradBuckets::hold(int b, CollHandle reduce_scatter, int k) {
  Slot* s = current_[static_cast<std::size_t>(b)];
  if (!s) throw Error("gpt4d internal error: bucket reduce-scatter without a buffer");
  s->reader = reduce_scatter;
  if (k == 0) first_[static_cast<std::size_t>(b)] = reduce_scatter;
  s->pending = k > 0 ? b : -1;
  if (!ors_) settle(*s);
}

void GradBuckets::finish() {
  if (ring_.empty()) return;
  settle(head_);
  for (Slot& s : ring_) settle(s);
}

void GradBuckets::begin_iteration() {
  next_ = 0;
  head_.reader = -1;
  for (Slot& s : ring_) s.reader = -1;
  std::fill(current_.begin(), current_.end(), nullptr);
  std::fill(first_.begin(), first_.end(), -1);
}

}  // namespace ovb::gpt
