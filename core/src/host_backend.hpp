// The host backend: host memory, MPI non-blocking collectives (MPI_Iallreduce,
// MPI_Ireduce_scatter_block, MPI_Iallgather) and point-to-point (MPI_Isend, MPI_Irecv), fp32 only.
// CPU compute runs synchronously on the calling thread, so a "stream" only holds the collectives
// still in flight on it; recording an event captures them, and waiting on the event completes them
// (MPI_Wait). With a host-timeline sink installed (ovb/host_timeline_sink.hpp) every collective and
// every blocking wait is reported. With OVB_COMM_TIMEOUT_S set (ovb/watchdog.hpp) the waits poll
// MPI_Test instead, and a collective that does not complete in time prints one line and MPI_Aborts
// the job.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ovb/backend.hpp"
#include "ovb/host_timeline_sink.hpp"
#include "ovb/watchdog.hpp"

namespace ovb {

class HostCommunicator;
using HostCommRegistry = LiveSet<HostCommunicator>;

// One collective in flight. Shared by the stream that issued it and the events that captured it.
struct HostOp {
  MPI_Request request = MPI_REQUEST_NULL;
  bool done = false;
  double done_at = 0;             // MPI_Wtime when its completion was observed
  std::function<void()> finish;   // run once on completion (e.g. copy out of a staging buffer)
  HostTimelineSink* sink = nullptr;  // the timeline sink it was reported to at issue, if any
  std::uint64_t token = 0;           // its token there
  // Set only with the watchdog on: wait() polls, and after timeout_s prints a line naming `what`
  // and aborts the communicators of `comms` (which ends the job).
  double timeout_s = 0;
  std::string what;
  std::shared_ptr<HostCommRegistry> comms;
  void wait();
  bool test();

 private:
  void complete();
};

class HostStream final : public Stream {
 public:
  explicit HostStream(Priority p) : priority_(p) {}
  void synchronize() override;
  Priority priority() const override { return priority_; }
  void* native() override { return nullptr; }
  void push(std::shared_ptr<HostOp> op);
  // Ops not yet known to be complete (completed ones are dropped).
  std::vector<std::shared_ptr<HostOp>> pending();

 private:
  Priority priority_;
  std::vector<std::shared_ptr<HostOp>> ops_;
};

class HostEvent final : public Event {
 public:
  void record(Stream& s) override;
  void synchronize() override;
  double elapsed_ms(Event& start) override;

 private:
  bool recorded_ = false;
  double time_ = 0;  // completion time of the captured work (valid once synchronized)
  std::vector<std::shared_ptr<HostOp>> ops_;
};

// Every op issued through a backend, so that Backend::synchronize() can complete them all.
using HostOpLog = std::vector<std::weak_ptr<HostOp>>;

class HostCommunicator final : public Communicator {
 public:
  // Registers itself in `comms` until destroyed; timeout_s > 0 turns the watchdog on for its ops.
  HostCommunicator(MPI_Comm group, const CommConfig& cfg, std::shared_ptr<HostOpLog> log,
                   std::shared_ptr<HostCommRegistry> comms, double timeout_s);
  ~HostCommunicator() override;
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  const CommConfig& config() const override { return cfg_; }
  void all_reduce(const void* send, void* recv, std::size_t count, DType t, Stream& s) override;
  void reduce_scatter(const void* send, void* recv, std::size_t recv_count, DType t,
                      Stream& s) override;
  void all_gather(const void* send, void* recv, std::size_t send_count, DType t,
                  Stream& s) override;
  void send_recv(const void* send, int to, void* recv, int from, std::size_t count, DType t,
                 Stream& s) override;
  Buffer allocate_window(std::size_t) override { return {}; }  // MPI has no windows to register
  void abort() override;

 private:
  void check(DType t, std::size_t count) const;
  // Records the op on the stream and the backend's log, with the watchdog's description `what`.
  void track(Stream& s, std::shared_ptr<HostOp> op, std::string what);
  // Records the op on the stream and the backend's log, and reports it to the timeline sink.
  void issue(Stream& s, std::shared_ptr<HostOp> op, CollKind kind, std::size_t count, DType t,
             std::int64_t issued_ns);
  std::shared_ptr<HostOpLog> log_;
  std::shared_ptr<HostCommRegistry> comms_;
  double timeout_s_ = 0;
  MPI_Comm comm_ = MPI_COMM_NULL;  // a duplicate: its own ordering, like a separate NCCL comm
  CommConfig cfg_;
  int rank_ = 0, size_ = 1;
};

class HostBackend final : public Backend {
 public:
  explicit HostBackend(const LaunchContext& ctx);
  std::string_view name() const override { return "host"; }
  bool supports(DType t) const override { return t == DType::f32; }
  DeviceInfo device_info() const override;
  Buffer allocate(std::size_t bytes) override;
  void upload(Buffer& dst, const void* src, std::size_t bytes, std::size_t offset) override;
  void download(void* dst, const Buffer& src, std::size_t bytes, std::size_t offset) override;
  void memset_zero(Buffer& b) override;
  std::unique_ptr<Stream> create_stream(Priority p) override;
  std::unique_ptr<Event> create_event() override;
  void wait_event(Stream& s, Event& e) override;
  void synchronize() override;
  std::unique_ptr<Communicator> create_communicator(MPI_Comm group, const CommConfig& cfg) override;
  Engines observe_engines(Stream&, const std::function<void()>& enqueue) override {
    enqueue();
    return Engines::cpu;
  }
  std::unique_ptr<PeerBuffers> map_peers(MPI_Comm, Buffer&, int) override;

 private:
  LaunchContext ctx_;
  double timeout_s_ = 0;  // OVB_COMM_TIMEOUT_S; 0: the watchdog is off
  std::shared_ptr<HostOpLog> log_ = std::make_shared<HostOpLog>();
  std::shared_ptr<HostCommRegistry> comms_ = std::make_shared<HostCommRegistry>();
};

}  // namespace ovb
