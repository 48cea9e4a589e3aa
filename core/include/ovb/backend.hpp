// The backend interface: device memory, streams, events and collectives. Two implementations with
// the same semantics: "cuda" (cudaMalloc, CUDA streams with priorities, CUDA events, NCCL) and
// "host" (host memory, MPI non-blocking collectives; CPU kernels run synchronously on the caller).
// Every algorithm in the suite is written once against this interface.
//
// Ordering rules (as with CUDA streams and NCCL): work on one stream runs in order; work on
// different streams is ordered only through events (record on one, wait on the other); collectives
// on one communicator must be issued in the same order on every rank of it.
//
// Host-side waits (Stream/Event/Backend::synchronize, and the copies that fence the device) block
// until done; with OVB_COMM_TIMEOUT_S set they poll instead and give up on a hung collective,
// aborting the backend's communicators (the collective watchdog, ovb/watchdog.hpp).
#pragma once

#include <mpi.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ovb/dtype.hpp"
#include "ovb/launch.hpp"

namespace ovb {

enum class CollKind { all_reduce, reduce_scatter, all_gather };
std::string_view name_of(CollKind k);  // "all_reduce", "reduce_scatter", "all_gather"
CollKind parse_coll_kind(std::string_view s);

// Owning handle to backend memory (device memory on CUDA, host memory on host). Move-only.
class Buffer {
 public:
  using Deleter = std::function<void(void*)>;
  Buffer() = default;
  Buffer(void* data, std::size_t bytes, Deleter free_fn)
      : data_(data), bytes_(bytes), free_(std::move(free_fn)) {}
  ~Buffer() { reset(); }
  Buffer(Buffer&& o) noexcept { *this = std::move(o); }
  Buffer& operator=(Buffer&& o) noexcept;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  void* data() const { return data_; }
  template <class T>
  T* as() const { return static_cast<T*>(data_); }
  std::size_t bytes() const { return bytes_; }
  void reset();

 private:
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
  Deleter free_;
};

// Stream priority in portable terms; CUDA maps high to the greatest priority of the device.
enum class Priority { normal, high };
std::string_view name_of(Priority p);

class Stream {
 public:
  virtual ~Stream() = default;
  virtual void synchronize() = 0;
  virtual Priority priority() const = 0;
  virtual void* native() = 0;  // cudaStream_t on CUDA, nullptr on host
};

class Event {
 public:
  virtual ~Event() = default;
  // Captures the work enqueued on `s` so far.
  virtual void record(Stream& s) = 0;
  // Blocks the host until that work is done.
  virtual void synchronize() = 0;
  // Milliseconds from `start` to this event (both recorded and complete; synchronizes them).
  virtual double elapsed_ms(Event& start) = 0;
};

// NCCL_CTA_POLICY_ZERO: collectives without SMs, on copy engines, where NCCL can (symmetric
// windows: Communicator::allocate_window).
inline constexpr int kCtaPolicyZero = 2;

// NCCL communicator knobs (ncclConfig_t); -1 = library default. Ignored by the host backend.
struct CommConfig {
  int min_ctas = -1;
  int max_ctas = -1;
  int cta_policy = -1;  // NCCL_CTA_POLICY_*: 0 default, 1 efficiency, 2 zero (kCtaPolicyZero)
  std::string name;     // for error messages and traces, e.g. "x", "z-allgather"
};

// Collectives over one group. Counts are in elements; sum is the only reduction.
//  all_reduce:     count elements in send and recv (send == recv is in place)
//  reduce_scatter: recv_count elements per rank; send holds recv_count * size()
//                  (in place: recv == send + rank() * recv_count)
//  all_gather:     send_count elements per rank; recv holds send_count * size()
//                  (in place: send == recv + rank() * send_count)
class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual const CommConfig& config() const = 0;
  virtual void all_reduce(const void* send, void* recv, std::size_t count, DType t, Stream& s) = 0;
  virtual void reduce_scatter(const void* send, void* recv, std::size_t recv_count, DType t,
                              Stream& s) = 0;
  virtual void all_gather(const void* send, void* recv, std::size_t send_count, DType t,
                          Stream& s) = 0;
  // Dispatch by kind; `count` is the per-call count argument of the kind above.
  void run(CollKind k, const void* send, void* recv, std::size_t count, DType t, Stream& s);
  // Point to point, one step of a ring: sends `count` elements of `send` to rank `to` and receives
  // `count` elements from rank `from` into `recv` (not overlapping `send`), as one operation on
  // `s` (NCCL: ncclSend and ncclRecv in one group, kernels on SMs; host: MPI_Isend and MPI_Irecv).
  // Every rank of the group calls it with matching partners and counts.
  virtual void send_recv(const void* send, int to, void* recv, int from, std::size_t count, DType t,
                         Stream& s) = 0;
  // Memory for this communicator's collectives, registered as a symmetric window when its
  // configuration asks for copy-engine collectives (CTA policy zero, NCCL >= 2.28: ncclMemAlloc
  // and ncclCommWindowRegister with NCCL_WIN_COLL_SYMMETRIC; without a window NCCL falls back to
  // SM kernels). An empty Buffer when no window applies (host; another policy): allocate from the
  // backend then. A collective call: every rank of the group, the same bytes.
  virtual Buffer allocate_window(std::size_t bytes) = 0;
  // Ends outstanding operations so that a hung collective cannot block the process forever
  // (ncclCommAbort; MPI_Abort on host, which ends the job). Called by the collective watchdog.
  virtual void abort() = 0;
};

struct DeviceInfo {
  std::string name;          // GPU name, or CPU model on host
  int count = 0;             // devices visible to this process
  int index = 0;             // device this rank uses
  std::size_t memory_bytes = 0;
  int sm_clock_mhz = 0;      // 0 when unknown
  int memory_clock_mhz = 0;  // 0 when unknown
  std::string driver_version, runtime_version, comm_library, comm_version;
};

struct BackendOptions {
  std::string name = "auto";  // "auto" (cuda when built with it and a GPU is visible), "cuda", "host"
  int ranks_per_gpu = 0;      // opt-in for several ranks per GPU (0: not given; see device_plan.hpp)
};

// A buffer mapped on every rank of a group (Backend::map_peers). publish: this rank's buffer is
// ready for step `step` after the work enqueued on `s` so far, and rank `to` is told so. pull:
// copies `bytes` at `offset` of rank `from`'s buffer to `dst` (this rank's device memory), on `s`,
// after `from`'s publish of `step` (a CUDA IPC event, whose record an MPI message orders before
// the wait). The copy is cudaMemcpyAsync between devices: a copy engine, no SM.
class PeerBuffers {
 public:
  virtual ~PeerBuffers() = default;
  virtual void publish(Stream& s, int step, int to) = 0;
  virtual void pull(Stream& s, int from, int step, std::size_t offset, void* dst,
                    std::size_t bytes) = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string_view name() const = 0;
  virtual bool supports(DType t) const = 0;
  virtual DeviceInfo device_info() const = 0;
  virtual int ranks_per_gpu() const { return 1; }
  virtual bool oversubscribed() const { return false; }

  virtual Buffer allocate(std::size_t bytes) = 0;
  // Copies between host memory and a backend buffer (offsets and sizes in bytes), and zeroing.
  // Synchronous with respect to the whole device, like cudaDeviceSynchronize on both sides: they
  // see the results of all earlier work on every stream, and all later work sees theirs. For set-up
  // and checks, not for hot paths.
  virtual void upload(Buffer& dst, const void* src, std::size_t bytes, std::size_t offset = 0) = 0;
  virtual void download(void* dst, const Buffer& src, std::size_t bytes,
                        std::size_t offset = 0) = 0;
  virtual void memset_zero(Buffer& b) = 0;

  virtual std::unique_ptr<Stream> create_stream(Priority p = Priority::normal) = 0;
  virtual std::unique_ptr<Event> create_event() = 0;
  // Work enqueued on `s` after this call waits for the work captured by `e`.
  virtual void wait_event(Stream& s, Event& e) = 0;
  virtual void synchronize() = 0;  // the whole device

  // Collective over the ranks of `group` (an MPI communicator; collective call over it).
  virtual std::unique_ptr<Communicator> create_communicator(MPI_Comm group,
                                                            const CommConfig& cfg) = 0;

  // Which engines `enqueue` (work it issues on `s`) moves data with, observed, not assumed:
  // Engines::cpu on host; on CUDA from the CUDA graph of one call captured from `s` (then
  // launched, so the work runs once as usual): kernels (SMs) when the graph has a kernel node,
  // copies (copy engines) when it has copy or memory nodes and no kernel, unknown when the work
  // cannot be captured. Every rank of a collective inside `enqueue` must call it alike.
  enum class Engines { cpu, kernels, copies, unknown };
  virtual Engines observe_engines(Stream& s, const std::function<void()>& enqueue) = 0;

  // Copy-engine access to `buf` on every rank of `group` (CUDA IPC: cudaIpcGetMemHandle, handles
  // exchanged over MPI, cudaIpcOpenMemHandle), for ring exchanges that use no SM. The host backend
  // has none: UsageError. A collective call over `group`; `buf` the same size on every rank.
  virtual std::unique_ptr<PeerBuffers> map_peers(MPI_Comm group, Buffer& buf, int steps) = 0;
};

// Creates the backend named in opts ("auto", "cuda", "host"). "cuda" in a build without CUDA, or
// with no usable GPU, throws a UsageError saying so.
std::unique_ptr<Backend> make_backend(const BackendOptions& opts, const LaunchContext& ctx);
bool cuda_backend_built();

}  // namespace ovb
