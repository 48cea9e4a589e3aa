// The communication engine of gpt4d: the compute stream, the communication streams and
// communicators, and every collective of an iteration issued, timed and logged in one place.
//
// Streams (ovb::stream_of() picks one per collective; priorities from --compute-priority /
// --comm-priority):
//   compute  - every kernel;
//   tp       - tensor-parallel all-reduces over X and Y (communicators "x", "y"), the CE
//              all-gather over Y and the world all-reduce ("world");
//   gather   - Z all-gathers of weight shards, on their own communicator "z-allgather" so that
//              they never queue behind reduce-scatters;
//   grad     - Z reduce-scatters of dW and Z all-reduces of small-parameter gradients ("z"),
//              data-parallel bucket all-reduces or reduce-scatters and, with the sharded
//              optimizer, the step's all-gathers of updated weights ("data").
// A collective starts after the work enqueued so far on the compute stream (an event) and after
// the collectives it depends on; the compute stream waits for it only where the result is used
// (wait()). On the host backend the same code runs with MPI non-blocking collectives: an event
// wait is an MPI_Wait on the captured requests. No host synchronisation on the hot path.
//
// Timing: events around each collective on its stream give its duration; an event on the compute
// stream where it waits gives the exposed part: the time the compute stream sat waiting for it
// (split over the collectives of one wait in the order they finished).
#pragma once

#include <memory>
#include <vector>

#include "config.hpp"
#include "ovb/backend.hpp"
#include "ovb/gpt_plan.hpp"
#include "ovb/gpt_schedule.hpp"
#include "ovb/process_grid.hpp"

namespace ovb::gpt {

using CollHandle = int;  // -1: nothing was issued (a group of size 1)

// Time in collectives of one iteration, per (kind, group).
struct CollStat {
  CollKind kind;
  Group group;
  int count = 0;
  double bytes = 0;       // sum of S (docs/metrics.md)
  double time_ms = 0;     // sum of durations on the communication streams
  double exposed_ms = 0;  // sum of the compute stream's waits for them
};

// One issue or wait as the engine performed it. The sequence of an iteration is what
// gpt_schedule() lists as its issue and wait steps (a test compares the two step by step).
struct CommEvent {
  bool wait = false;
  CollHandle id = -1;            // the collective's handle: its index in log()
  std::vector<CollHandle> deps;  // issue: the collectives it starts after
};

class CommEngine {
 public:
  static constexpr int kStreams = 4;  // compute, tp, gather, grad (CUDA_DEVICE_MAX_CONNECTIONS)

  CommEngine(Backend& backend, const ProcessGrid& grid, const Config& cfg);
  ~CommEngine();

  Stream& compute() { return *compute_; }
  int group_size(Group g) const;
  int coord(Dim d) const { return coords_[d]; }

  // Issues `op` (group_size is filled in) unless its group has size 1. `send`/`recv` and `count`
  // follow ovb::Communicator. Starts after the compute stream's work so far and after `deps`.
  CollHandle issue(CollOp op, const void* send, void* recv,
                   const std::vector<CollHandle>& deps = {});
  // The compute stream waits for the collectives (once each; -1 and repeats are ignored).
  void wait(const std::vector<CollHandle>& hs);
  void wait(CollHandle h) { wait(std::vector<CollHandle>{h}); }
  // Waits for every collective issued this iteration and not yet waited for.
  void wait_all();

  void begin_iteration();
  // Per (kind, group) statistics of the iteration; call after the device is synchronised.
  std::vector<CollStat> end_iteration();
  // The collectives issued since begin_iteration(), in issue order.
  const std::vector<CollOp>& log() const { return log_; }
  // Every issue and every wait since begin_iteration(), in order; a wait lists each collective
  // it waits for (once each, in the order given to wait()).
  const std::vector<CommEvent>& sequence() const { return sequence_; }

 private:
  struct Route {
    Communicator* comm;
    Stream* stream;
  };
  struct Record {
    CollOp op;
    Event* start = nullptr;
    Event* end = nullptr;
    bool waited = false;
    double exposed_ms = 0;
  };
  struct WaitPoint {
    Event* ready;
    std::vector<CollHandle> handles;
  };
  Route route(const CollOp& op);
  Event* next_event();

  Backend& backend_;
  Coords coords_;
  GridShape shape_;
  std::unique_ptr<Stream> compute_, tp_, gather_, grad_;
  std::unique_ptr<Communicator> x_, y_, z_, z_gather_, data_, world_;
  std::vector<std::unique_ptr<Event>> events_;  // pool, reused every iteration
  std::size_t next_event_ = 0;
  Event* t0_ = nullptr;
  std::vector<Record> records_;
  std::vector<WaitPoint> waits_;
  std::vector<CollOp> log_;
  std::vector<CommEvent> sequence_;
};

}  // namespace ovb::gpt
