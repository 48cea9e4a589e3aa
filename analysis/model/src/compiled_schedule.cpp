// The compile step of a variant's schedule and the pricing of its collectives per order (see
// compiled_schedule.hpp).
#include "compiled_schedule.hpp"

#include <bit>

#include "kernel_cost.hpp"

namespace ovb::model {

namespace {

struct TooLarge {};  // thrown out of the visit once the schedule passes max_steps

// Indices of distinct keys (open addressing, at most half full).
class KeyIndex {
 public:
  // The slot of a key with this hash whose stored index satisfies `same` (-1 where it would go).
  template <class Same>
  int& find(std::uint64_t hash, Same&& same) {
    for (std::size_t i = (hash * 0x9E3779B97F4A7C15ull) >> 32 & (slots_.size() - 1);;
         i = (i + 1) & (slots_.size() - 1))
      if (slots_[i] < 0 || same(slots_[i])) return slots_[i];
  }
  // Call after filling a slot (which it may move): grows, rehashing each index with rehash(index),
  // past half full.
  template <class Rehash>
  void added(Rehash&& rehash) {
    if (2 * ++count_ <= slots_.size()) return;
    std::vector<int> old(2 * slots_.size(), -1);
    old.swap(slots_);
    for (int v : old)
      if (v >= 0) find(rehash(v), [](int) { return false; }) = v;
  }

 private:
  std::vector<int> slots_ = std::vector<int>(64, -1);
  std::size_t count_ = 0;
};

std::uint64_t key_of(const CollOp& op, StreamId stream) {
  return static_cast<std::uint64_t>(op.count) * 1000003u +
         static_cast<std::uint64_t>(op.group_size) * 131u +
         static_cast<std::uint64_t>(op.group) * 31u + static_cast<std::uint64_t>(op.kind) * 7u +
         static_cast<std::uint64_t>(op.dtype) * 3u + static_cast<std::uint64_t>(stream);
}

bool same_cost(const CompiledSchedule::Collective& c, const CollOp& op, StreamId stream) {
  return c.stream == stream && c.op.count == op.count && c.op.group_size == op.group_size &&
         c.op.group == op.group && c.op.kind == op.kind && c.op.dtype == op.dtype;
}

class Compiler final : public StepVisitor {
 public:
  Compiler(const GptShape& m, const ComputeTerms& ct, const PlanComm& pc, const GptPlanOptions& o,
           const Machine& mc, std::size_t max_steps, CompiledSchedule& out)
      : costs_(m, ct, pc, o, mc), max_steps_(max_steps), out_(out) {}

  void step(const Step& s, const CollOp* issued) override {
    switch (s.kind) {
      case StepKind::compute: {
        const double us = costs_.compute_us(s);
        if (us != 0) push(CompiledSchedule::compute, compute_index(us));  // 0: nothing happens
        return;
      }
      case StepKind::issue:
        for (int d : s.deps) push(CompiledSchedule::dep, static_cast<std::uint32_t>(d));
        return push(CompiledSchedule::issue, collective_index(*issued, s.stream));
      case StepKind::wait: return push(CompiledSchedule::wait, static_cast<std::uint32_t>(s.coll));
      case StepKind::slot_take:
      case StepKind::slot_release: return;  // no time (the replay skips them)
    }
  }

 private:
  void push(CompiledSchedule::Kind kind, std::uint32_t index) {
    if (out_.steps.size() >= max_steps_ || index > CompiledSchedule::kIndexMask) throw TooLarge{};
    out_.steps.push_back(static_cast<std::uint32_t>(kind) << CompiledSchedule::kKindShift | index);
  }

  std::uint32_t compute_index(double us) {
    const auto bits = [](double v) { return std::bit_cast<std::uint64_t>(v); };
    int& slot = computes_.find(bits(us), [&](int i) {
      return bits(out_.compute_us[static_cast<std::size_t>(i)]) == bits(us);
    });
    if (slot >= 0) return static_cast<std::uint32_t>(slot);
    const int index = slot = static_cast<int>(out_.compute_us.size());
    out_.compute_us.push_back(us);
    computes_.added([&](int i) { return bits(out_.compute_us[static_cast<std::size_t>(i)]); });
    return static_cast<std::uint32_t>(index);
  }

  std::uint32_t collective_index(const CollOp& op, StreamId stream) {
    int& slot = collectives_.find(key_of(op, stream), [&](int i) {
      return same_cost(out_.collectives[static_cast<std::size_t>(i)], op, stream);
    });
    if (slot >= 0) return static_cast<std::uint32_t>(slot);
    const int index = slot = static_cast<int>(out_.collectives.size());
    out_.collectives.push_back({op, stream});
    collectives_.added([&](int i) {
      const auto& c = out_.collectives[static_cast<std::size_t>(i)];
      return key_of(c.op, c.stream);
    });
    return static_cast<std::uint32_t>(index);
  }

  KernelCosts costs_;
  std::size_t max_steps_;
  CompiledSchedule& out_;
  KeyIndex computes_, collectives_;
};

}  // namespace

std::optional<CompiledSchedule> compile_schedule(const GptShape& m, const ComputeTerms& ct,
                                                 const PlanComm& pc, const GptPlanOptions& o,
                                                 const Machine& mc, std::size_t max_steps) {
  CompiledSchedule out;
  try {
    Compiler c(m, ct, pc, o, mc, max_steps, out);
    visit_gpt_schedule(m, o, c);
  } catch (const TooLarge&) {
    return std::nullopt;
  }
  return out;
}

std::vector<LinkUse> price_collectives(const CompiledSchedule& cs, const GptShape& m,
                                       const ComputeTerms& ct, const PlanComm& pc,
                                       const GptPlanOptions& o, const Machine& mc) {
  KernelCosts costs(m, ct, pc, o, mc);
  std::vector<LinkUse> use;
  use.reserve(cs.collectives.size());
  for (const CompiledSchedule::Collective& c : cs.collectives)
    use.push_back(costs.collective(c.op));
  return use;
}

}  // namespace ovb::model
