// Host backend: host memory and MPI non-blocking collectives (see host_backend.hpp).
#include "host_backend.hpp"

#include <errno.h>  // program_invocation_short_name
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "copy_range.hpp"
#include "ovb/error.hpp"
#include "ovb/run_main.hpp"
#include "ovb/metrics.hpp"

namespace ovb {

namespace {
HostTimelineSink* g_timeline_sink = nullptr;

// Issue time of a collective: taken before the MPI call, which may already move data.
std::int64_t issue_time() { return g_timeline_sink ? timeline_now_ns() : 0; }
}  // namespace

void set_host_timeline_sink(HostTimelineSink* sink) { g_timeline_sink = sink; }
HostTimelineSink* host_timeline_sink() { return g_timeline_sink; }

std::int64_t timeline_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void HostOp::complete() {
  done = true;
  done_at = MPI_Wtime();
  if (sink && sink == g_timeline_sink) sink->completed(token, timeline_now_ns());
  if (finish) finish();
}

// The watchdog's timeout on the host: MPI_Abort ends the job before any exception could reach
// run_main, so say it here with run_main's line (write_error_line).
[[noreturn]] static void abort_job(const std::string& message, const HostCommRegistry& comms) {
  int rank = 0, world = 1;  // MPI calls unchecked here: the job is being aborted either way
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  write_error_line(program_invocation_short_name, rank, world, message);
  abort_all(comms);
  MPI_Abort(MPI_COMM_WORLD, 1);  // no communicator left alive: end the job all the same
  std::abort();
}

void HostOp::wait() {
  if (done) return;
  HostTimelineSink* const timeline = g_timeline_sink;
  const std::int64_t begin = timeline ? timeline_now_ns() : 0;
  if (timeout_s > 0) {
    poll_until(
        [this] {
          int flag = 0;
          OVB_CHECK_MPI(MPI_Test(&request, &flag, MPI_STATUS_IGNORE));
          return flag != 0;
        },
        what, timeout_s, [this](const std::string& message) { abort_job(message, *comms); });
  } else {
    OVB_CHECK_MPI(MPI_Wait(&request, MPI_STATUS_IGNORE));
  }
  complete();
  if (timeline && timeline == g_timeline_sink) timeline->waited(begin, timeline_now_ns());
}

bool HostOp::test() {
  if (done) return true;
  int flag = 0;
  OVB_CHECK_MPI(MPI_Test(&request, &flag, MPI_STATUS_IGNORE));
  if (flag) complete();
  return done;
}

void HostStream::push(std::shared_ptr<HostOp> op) { ops_.push_back(std::move(op)); }

std::vector<std::shared_ptr<HostOp>> HostStream::pending() {
  std::erase_if(ops_, [](const std::shared_ptr<HostOp>& op) { return op->test(); });
  return ops_;
}

void HostStream::synchronize() {
  for (auto& op : ops_) op->wait();
  ops_.clear();
}

void HostEvent::record(Stream& s) {
  ops_ = static_cast<HostStream&>(s).pending();
  recorded_ = true;
  time_ = MPI_Wtime();  // compute runs synchronously: with nothing in flight, the work is done now
}

void HostEvent::synchronize() {
  if (!recorded_) throw Error("event synchronized before it was recorded");
  for (auto& op : ops_) {
    op->wait();
    time_ = std::max(time_, op->done_at);
  }
  ops_.clear();
}

double HostEvent::elapsed_ms(Event& start) {
  auto& s = static_cast<HostEvent&>(start);
  s.synchronize();
  synchronize();
  return (time_ - s.time_) * 1e3;
}

HostCommunicator::HostCommunicator(MPI_Comm group, const CommConfig& cfg,
                                   std::shared_ptr<HostOpLog> log,
                                   std::shared_ptr<HostCommRegistry> comms, double timeout_s)
    : log_(std::move(log)), comms_(std::move(comms)), timeout_s_(timeout_s), cfg_(cfg) {
  OVB_CHECK_MPI(MPI_Comm_dup(group, &comm_));
  OVB_CHECK_MPI(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN));
  OVB_CHECK_MPI(MPI_Comm_rank(comm_, &rank_));
  OVB_CHECK_MPI(MPI_Comm_size(comm_, &size_));
  comms_->add(this);
}

HostCommunicator::~HostCommunicator() {
  comms_->remove(this);
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (comm_ != MPI_COMM_NULL && !finalized) MPI_Comm_free(&comm_);
}

void HostCommunicator::check(DType t, std::size_t count) const {
  if (t != DType::f32)
    throw UsageError("the host backend supports fp32 collectives only, not " +
                     std::string(name_of(t)));
  if (count > static_cast<std::size_t>(INT32_MAX))
    throw UsageError("collective of " + std::to_string(count) +
                     " elements exceeds MPI's int count on the host backend");
}

void HostCommunicator::issue(Stream& s, std::shared_ptr<HostOp> op, CollKind kind,
                             std::size_t count, DType t, std::int64_t issued_ns) {
  if (HostTimelineSink* sink = g_timeline_sink) {
    HostCollective c;
    c.kind = kind;
    c.comm = cfg_.name;
    c.comm_id = this;
    c.stream_id = &s;
    c.ranks = size_;
    c.count = count;
    c.dtype = t;
    c.bytes = metrics::collective_bytes(kind, count, size_, size_of(t));
    c.issued_ns = issued_ns;
    op->sink = sink;
    op->token = sink->issued(c);
  }
  track(s, std::move(op),
        std::string(name_of(kind)) + " of " + std::to_string(count) + " " +
            std::string(name_of(t)) + " elements");
}

void HostCommunicator::track(Stream& s, std::shared_ptr<HostOp> op, std::string what) {
  if (timeout_s_ > 0) {
    op->timeout_s = timeout_s_;
    op->what = what + " on communicator '" + cfg_.name + "' (rank " + std::to_string(rank_) +
               " of " + std::to_string(size_) + ")";
    op->comms = comms_;
  }
  std::erase_if(*log_, [](const std::weak_ptr<HostOp>& w) { return w.expired(); });
  log_->push_back(op);
  static_cast<HostStream&>(s).push(std::move(op));
}

void HostCommunicator::all_reduce(const void* send, void* recv, std::size_t count, DType t,
                                  Stream& s) {
  check(t, count);
  const std::int64_t t0 = issue_time();
  auto op = std::make_shared<HostOp>();
  const void* src = send == recv ? MPI_IN_PLACE : send;
  OVB_CHECK_MPI(MPI_Iallreduce(src, recv, static_cast<int>(count), MPI_FLOAT, MPI_SUM, comm_,
                               &op->request));
  issue(s, std::move(op), CollKind::all_reduce, count, t, t0);
}

void HostCommunicator::reduce_scatter(const void* send, void* recv, std::size_t recv_count,
                                      DType t, Stream& s) {
  check(t, recv_count * static_cast<std::size_t>(size_));
  const std::int64_t t0 = issue_time();
  auto op = std::make_shared<HostOp>();
  const float* in = static_cast<const float*>(send);
  float* out = static_cast<float*>(recv);
  if (out >= in && out < in + recv_count * static_cast<std::size_t>(size_)) {
    // In place (NCCL convention recv == send + rank*recv_count): MPI's in-place form puts the
    // result at the start of the buffer, so receive into a staging buffer and copy on completion.
    auto staging = std::make_shared<std::vector<float>>(recv_count);
    OVB_CHECK_MPI(MPI_Ireduce_scatter_block(send, staging->data(), static_cast<int>(recv_count),
                                            MPI_FLOAT, MPI_SUM, comm_, &op->request));
    op->finish = [staging, out] { std::memcpy(out, staging->data(), staging->size() * sizeof(float)); };
  } else {
    OVB_CHECK_MPI(MPI_Ireduce_scatter_block(send, recv, static_cast<int>(recv_count), MPI_FLOAT,
                                            MPI_SUM, comm_, &op->request));
  }
  issue(s, std::move(op), CollKind::reduce_scatter, recv_count, t, t0);
}

void HostCommunicator::all_gather(const void* send, void* recv, std::size_t send_count, DType t,
                                  Stream& s) {
  check(t, send_count * static_cast<std::size_t>(size_));
  const std::int64_t t0 = issue_time();
  auto op = std::make_shared<HostOp>();
  const float* mine = static_cast<const float*>(recv) + send_count * static_cast<std::size_t>(rank_);
  // In place when send is this rank's slot of recv: MPI_IN_PLACE means exactly that.
  const void* src = send == mine ? MPI_IN_PLACE : send;
  OVB_CHECK_MPI(MPI_Iallgather(src, static_cast<int>(send_count), MPI_FLOAT, recv,
                               static_cast<int>(send_count), MPI_FLOAT, comm_, &op->request));
  issue(s, std::move(op), CollKind::all_gather, send_count, t, t0);
}

// Not reported to the host-timeline sink, whose records are collectives.
void HostCommunicator::send_recv(const void* send, int to, void* recv, int from, std::size_t count,
                                 DType t, Stream& s) {
  check(t, count);
  if (to < 0 || to >= size_ || from < 0 || from >= size_)
    throw Error("send_recv: peer " + std::to_string(to < 0 || to >= size_ ? to : from) +
                " is not a rank of a group of " + std::to_string(size_));
  auto in = std::make_shared<HostOp>(), out = std::make_shared<HostOp>();
  const int n = static_cast<int>(count);
  OVB_CHECK_MPI(MPI_Irecv(recv, n, MPI_FLOAT, from, 0, comm_, &in->request));
  OVB_CHECK_MPI(MPI_Isend(send, n, MPI_FLOAT, to, 0, comm_, &out->request));
  const std::string elems = std::to_string(count) + " " + std::string(name_of(t)) + " elements";
  track(s, std::move(in), "receive of " + elems + " from rank " + std::to_string(from));
  track(s, std::move(out), "send of " + elems + " to rank " + std::to_string(to));
}

void HostCommunicator::abort() { MPI_Abort(comm_, 1); }

HostBackend::HostBackend(const LaunchContext& ctx) : ctx_(ctx), timeout_s_(comm_timeout_s()) {}

static std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(' ', colon + 1));
    }
  return "unknown CPU";
}

DeviceInfo HostBackend::device_info() const {
  DeviceInfo d;
  d.name = cpu_model();
  d.count = 1;
  d.index = 0;
  d.memory_bytes = static_cast<std::size_t>(sysconf(_SC_PHYS_PAGES)) *
                   static_cast<std::size_t>(sysconf(_SC_PAGE_SIZE));
  d.comm_library = "MPI";
  return d;
}

Buffer HostBackend::allocate(std::size_t bytes) {
  const std::size_t rounded = (std::max<std::size_t>(bytes, 1) + 63) / 64 * 64;
  void* p = std::aligned_alloc(64, rounded);
  if (!p) throw Error("host allocation of " + std::to_string(bytes) + " bytes failed");
  return Buffer(p, bytes, [](void* q) { std::free(q); });
}

void HostBackend::upload(Buffer& dst, const void* src, std::size_t bytes, std::size_t offset) {
  check_copy_range(dst, bytes, offset);
  synchronize();  // a collective in flight may still write into dst (see backend.hpp)
  std::memcpy(static_cast<char*>(dst.data()) + offset, src, bytes);
}

void HostBackend::download(void* dst, const Buffer& src, std::size_t bytes, std::size_t offset) {
  check_copy_range(src, bytes, offset);
  synchronize();
  std::memcpy(dst, static_cast<const char*>(src.data()) + offset, bytes);
}

void HostBackend::memset_zero(Buffer& b) {
  synchronize();
  std::memset(b.data(), 0, b.bytes());
}

std::unique_ptr<Stream> HostBackend::create_stream(Priority p) {
  return std::make_unique<HostStream>(p);
}

std::unique_ptr<Event> HostBackend::create_event() { return std::make_unique<HostEvent>(); }

void HostBackend::wait_event(Stream&, Event& e) {
  // Work enqueued later runs on the caller right away, so it must see the event's work complete.
  e.synchronize();
}

void HostBackend::synchronize() {
  for (auto& w : *log_)
    if (auto op = w.lock()) op->wait();
  log_->clear();
}

std::unique_ptr<PeerBuffers> HostBackend::map_peers(MPI_Comm, Buffer&, int) {
  throw UsageError(
      "the host backend has no copy engine: copy-engine transports need the CUDA "
      "backend");
}

std::unique_ptr<Communicator> HostBackend::create_communicator(MPI_Comm group,
                                                               const CommConfig& cfg) {
  return std::make_unique<HostCommunicator>(group, cfg, log_, comms_, timeout_s_);
}

}  // namespace ovb
