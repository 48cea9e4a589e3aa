// The words of the iteration schedule (see ovb/gpt_schedule.hpp): names of streams, step kinds
// and slot pools, the stream of each collective, and one line per step.
#include <sstream>

#include "ovb/error.hpp"
#include "ovb/gpt_schedule.hpp"

namespace ovb {

std::string_view name_of(StreamId s) {
  switch (s) {
    case StreamId::compute: return "compute";
    case StreamId::tp: return "tp";
    case StreamId::gather: return "gather";
    case StreamId::grad: return "grad";
  }
  return "?";
}

StreamId stream_of(const CollOp& op) {
  switch (op.role) {
    case CollRole::weight_gather: return StreamId::gather;
    case CollRole::weight_grad_scatter:
    case CollRole::data_grad_reduce:
    case CollRole::param_grad_reduce:
    case CollRole::param_gather: return StreamId::grad;
    default: return StreamId::tp;
  }
}

std::string_view name_of(StepKind k) {
  switch (k) {
    case StepKind::compute: return "compute";
    case StepKind::issue: return "issue";
    case StepKind::wait: return "wait";
    case StepKind::slot_take: return "slot_take";
    case StepKind::slot_release: return "slot_release";
  }
  return "?";
}

std::string_view name_of(SlotPool p) {
  switch (p) {
    case SlotPool::gathered: return "gathered";
    case SlotPool::dw: return "dw";
    case SlotPool::bucket: return "bucket";
  }
  return "?";
}

const Step& GptSchedule::issue_of(int coll) const {
  for (const Step& s : steps)
    if (s.kind == StepKind::issue && s.coll == coll) return s;
  throw Error("gpt_schedule: no collective c" + std::to_string(coll));
}

std::string describe(const Step& s, const GptSchedule& sched) {
  // Where the step happens; an issue or wait then names its collective (with the collective's own
  // micro-step, phase and layer).
  std::ostringstream os;
  if (s.micro_step > 0) os << 'm' << s.micro_step << ' ';
  os << name_of(s.phase) << (s.recompute ? "(recompute)" : "") << ' ';
  const bool coll = s.kind == StepKind::issue || s.kind == StepKind::wait;
  if (s.layer >= 0 && !coll) os << 'L' << s.layer << ' ';
  os << name_of(s.kind);
  if (s.kind == StepKind::compute) {
    os << ' ' << s.op;
    if (s.gemm.m > 0) os << " gemm " << s.gemm.m << 'x' << s.gemm.n << 'x' << s.gemm.k;
  } else if (coll) {
    os << " c" << s.coll;
    if (s.coll >= 0 && s.coll < static_cast<int>(sched.collectives.size()))
      os << ' ' << describe(sched.collectives[static_cast<std::size_t>(s.coll)]);
    if (s.kind == StepKind::issue) {
      os << " on " << name_of(s.stream);
      for (std::size_t i = 0; i < s.deps.size(); ++i)
        os << (i == 0 ? " after c" : ",c") << s.deps[i];
    }
  } else {
    os << ' ' << name_of(s.pool) << '[' << s.slot << ']';
  }
  return os.str();
}

}  // namespace ovb
