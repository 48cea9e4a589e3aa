// The communication engine (see comm.hpp).
#include "train/comm.hpp"

#include <algorithm>
#include <map>
#include <string>

#include "ovb/annotate.hpp"
#include "ovb/error.hpp"

namespace ovb::gpt {

CommEngine::CommEngine(Backend& backend, const ProcessGrid& grid, const Config& cfg)
    : backend_(backend), coords_(grid.coords()), shape_(grid.grid().shape()) {
  compute_ = backend.create_stream(cfg.compute_priority);
  tp_ = backend.create_stream(cfg.comm_priority);
  gather_ = backend.create_stream(cfg.comm_priority);
  grad_ = backend.create_stream(cfg.comm_priority);
  auto make = [&](MPI_Comm c, int size, const std::string& name) -> std::unique_ptr<Communicator> {
    if (size <= 1) return nullptr;  // collectives over one rank are never issued
    CommConfig cc = cfg.nccl;
    cc.name = name;  // a string, not a char*: GCC 12 warns (-Wrestrict) on that assign, falsely
    return backend.create_communicator(c, cc);
  };
  x_ = make(grid.comm(Dim::x), shape_.gx, "x");
  y_ = make(grid.comm(Dim::y), shape_.gy, "y");
  z_ = make(grid.comm(Dim::z), shape_.gz, "z");
  z_gather_ = make(grid.comm(Dim::z), shape_.gz, "z-allgather");
  data_ = make(grid.comm(Dim::data), shape_.gdata, "data");
  world_ = make(grid.world(), shape_.world(), "world");
  events_.push_back(backend.create_event());  // events_[0]: "compute reached here" marker
}

CommEngine::~CommEngine() = default;

int CommEngine::group_size(Group g) const {
  return g == Group::world ? shape_.world() : shape_.size(static_cast<Dim>(g));
}

Event* CommEngine::next_event() {
  if (next_event_ == events_.size()) events_.push_back(backend_.create_event());
  return events_[next_event_++].get();
}

CommEngine::Route CommEngine::route(const CollOp& op) {
  Stream* stream = nullptr;
  switch (stream_of(op)) {
    case StreamId::tp: stream = tp_.get(); break;
    case StreamId::gather: stream = gather_.get(); break;
    case StreamId::grad: stream = grad_.get(); break;
    case StreamId::compute: break;
  }
  Communicator* comm = nullptr;
  switch (op.group) {
    case Group::x: comm = x_.get(); break;
    case Group::y: comm = y_.get(); break;
    case Group::z: comm = op.role == CollRole::weight_gather ? z_gather_.get() : z_.get(); break;
    case Group::data: comm = data_.get(); break;
    case Group::world: comm = world_.get(); break;
  }
  if (!stream) throw Error("gpt4d: no route for collective " + describe(op));
  return {comm, stream};
}

CollHandle CommEngine::issue(CollOp op, const void* send, void* recv,
                             const std::vector<CollHandle>& deps) {
  op.group_size = group_size(op.group);
  if (op.group_size <= 1) return -1;
  const Route r = route(op);
  if (!r.comm) throw Error("gpt4d: communicator missing for " + describe(op));
  // Start after the compute stream's work so far (events_[0] is re-recorded each time: a stream
  // wait captures the event's state at the call) and after the dependencies.
  Event& mark = *events_[0];
  mark.record(*compute_);
  backend_.wait_event(*r.stream, mark);
  for (CollHandle d : deps)
    if (d >= 0) backend_.wait_event(*r.stream, *records_[static_cast<std::size_t>(d)].end);
  Record rec;
  rec.op = op;
  rec.start = next_event();
  rec.end = next_event();
  const std::string kind(name_of(op.kind)), group(name_of(op.group));
  {
    ScopedRange range(RangeInfo{kind + " " + group + " " + op.op, "collective", kind, group,
                                static_cast<std::int64_t>(op.bytes())});
    rec.start->record(*r.stream);
    r.comm->run(op.kind, send, recv, static_cast<std::size_t>(op.count), op.dtype, *r.stream);
    rec.end->record(*r.stream);
  }
  records_.push_back(rec);
  log_.push_back(op);
  const CollHandle id = static_cast<CollHandle>(records_.size()) - 1;
  CommEvent ev{false, id, {}};
  for (CollHandle d : deps)
    if (d >= 0) ev.deps.push_back(d);
  sequence_.push_back(std::move(ev));
  return id;
}

void CommEngine::wait(const std::vector<CollHandle>& hs) {
  WaitPoint w{nullptr, {}};
  for (CollHandle h : hs) {
    if (h < 0) continue;
    Record& rec = records_.at(static_cast<std::size_t>(h));
    if (rec.waited) continue;
    rec.waited = true;
    w.handles.push_back(h);
    sequence_.push_back({true, h, {}});
  }
  if (w.handles.empty()) return;
  w.ready = next_event();
  w.ready->record(*compute_);
  for (CollHandle h : w.handles)
    backend_.wait_event(*compute_, *records_[static_cast<std::size_t>(h)].end);
  waits_.push_back(std::move(w));
}

void CommEngine::wait_all() {
  std::vector<CollHandle> hs;
  for (std::size_t i = 0; i < records_.size(); ++i)
    if (!records_[i].waited) hs.push_back(static_cast<CollHandle>(i));
  wait(hs);
}

void CommEngine::begin_iteration() {
  next_event_ = 1;
  records_.clear();
  waits_.clear();
  log_.clear();
  sequence_.clear();
  t0_ = next_event();
  t0_->record(*compute_);
}

std::vector<CollStat> CommEngine::end_iteration() {
  // Times relative to t0; exposure per wait point, split in the order the collectives ended.
  std::vector<double> end_ms(records_.size());
  for (std::size_t i = 0; i < records_.size(); ++i) end_ms[i] = records_[i].end->elapsed_ms(*t0_);
  for (const WaitPoint& w : waits_) {
    double cursor = w.ready->elapsed_ms(*t0_);
    std::vector<CollHandle> hs = w.handles;
    std::sort(hs.begin(), hs.end(), [&](CollHandle a, CollHandle b) {
      return end_ms[static_cast<std::size_t>(a)] < end_ms[static_cast<std::size_t>(b)];
    });
    for (CollHandle h : hs) {
      const double e = end_ms[static_cast<std::size_t>(h)];
      records_[static_cast<std::size_t>(h)].exposed_ms = std::max(0.0, e - cursor);
      cursor = std::max(cursor, e);
    }
  }
  std::map<std::pair<int, int>, CollStat> by;
  for (const Record& rec : records_) {
    CollStat& s = by[{static_cast<int>(rec.op.kind), static_cast<int>(rec.op.group)}];
    s.kind = rec.op.kind;
    s.group = rec.op.group;
    s.count += 1;
    s.bytes += rec.op.bytes();
    s.time_ms += rec.end->elapsed_ms(*rec.start);
    s.exposed_ms += rec.exposed_ms;
  }
  std::vector<CollStat> out;
  for (auto& [k, s] : by) out.push_back(s);
  return out;
}

}  // namespace ovb::gpt
