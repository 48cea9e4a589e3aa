// CUDA backend: device memory, streams, events, and the collective watchdog's waits (see
// cuda_backend.hpp).
#include "cuda_backend.hpp"

#include <mpi.h>

#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "ovb/cuda/check.hpp"
#include "copy_range.hpp"
#include "ovb/error.hpp"

namespace ovb::cuda {

int visible_device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no device" error
    return 0;
  }
  return n;
}

// For the watchdog's polls: true when `call` (cudaEventQuery, cudaStreamQuery) reports the work
// done, false while it is not ready; an error throws as OVB_CHECK_CUDA does.
static bool cuda_ready(cudaError_t rc, const char* call, int line) {
  if (rc == cudaSuccess) return true;
  if (rc == cudaErrorNotReady) return false;
  raise_call_error("CUDA", call, std::string(cudaGetErrorName(rc)) + ": " + cudaGetErrorString(rc),
                   __FILE__, line);
}
#define OVB_CUDA_READY(call) cuda_ready((call), #call, __LINE__)

void CudaWatch::wait(const std::function<bool()>& done, std::string_view what) {
  const auto checked_done = [&] {
    for (NcclCommunicator* c : comms.snapshot()) {
      const std::string error = c->async_error();
      if (error.empty()) continue;
      const std::string message = "collective watchdog: NCCL asynchronous error on communicator '" +
                                  c->config().name + "' while waiting for " + std::string(what) +
                                  ": " + error + "; communicators aborted";
      abort_all(comms);
      throw Error(message);
    }
    return done();
  };
  poll_until(checked_done, what, timeout_s, [this](const std::string&) { abort_all(comms); });
}

CudaStream::CudaStream(Priority p, int cuda_priority, std::shared_ptr<CudaWatch> watch)
    : priority_(p), watch_(std::move(watch)) {
  OVB_CHECK_CUDA(cudaStreamCreateWithPriority(&stream_, cudaStreamNonBlocking, cuda_priority));
  watch_->streams.add(this);
}
CudaStream::~CudaStream() {
  watch_->streams.remove(this);
  OVB_WARN_CUDA(cudaStreamDestroy(stream_));
}
void CudaStream::synchronize() {
  if (watch_->timeout_s > 0)
    watch_->wait([this] { return OVB_CUDA_READY(cudaStreamQuery(stream_)); },
                 "the work on a CUDA stream");
  else
    OVB_CHECK_CUDA(cudaStreamSynchronize(stream_));
}

CudaEvent::CudaEvent(std::shared_ptr<CudaWatch> watch) : watch_(std::move(watch)) {
  OVB_CHECK_CUDA(cudaEventCreate(&event_));
}
CudaEvent::~CudaEvent() { OVB_WARN_CUDA(cudaEventDestroy(event_)); }
void CudaEvent::record(Stream& s) {
  OVB_CHECK_CUDA(cudaEventRecord(event_, static_cast<CudaStream&>(s).get()));
}
void CudaEvent::synchronize() {
  if (watch_->timeout_s > 0)
    watch_->wait([this] { return OVB_CUDA_READY(cudaEventQuery(event_)); },
                 "the work captured by a CUDA event");
  else
    OVB_CHECK_CUDA(cudaEventSynchronize(event_));
}
double CudaEvent::elapsed_ms(Event& start) {
  auto& s = static_cast<CudaEvent&>(start);
  s.synchronize();
  synchronize();
  float ms = 0;
  OVB_CHECK_CUDA(cudaEventElapsedTime(&ms, s.event_, event_));
  return ms;
}

// The UUID of the GPU each rank of this node would use (index = local rank). Collective over the
// node's ranks; called only when they outnumber the GPUs a rank sees, which every rank of the node
// then sees too (same launch).
static std::vector<std::string> local_device_ids(int device) {
  cudaDeviceProp prop{};
  OVB_CHECK_CUDA(cudaGetDeviceProperties(&prop, device));
  char mine[sizeof(prop.uuid.bytes)];
  std::memcpy(mine, prop.uuid.bytes, sizeof(mine));
  MPI_Comm node = MPI_COMM_NULL;
  int rank = 0, size = 0;
  OVB_CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  OVB_CHECK_MPI(
      MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node));
  OVB_CHECK_MPI(MPI_Comm_size(node, &size));
  std::vector<char> all(sizeof(mine) * static_cast<std::size_t>(size));
  OVB_CHECK_MPI(
      MPI_Allgather(mine, sizeof(mine), MPI_CHAR, all.data(), sizeof(mine), MPI_CHAR, node));
  OVB_CHECK_MPI(MPI_Comm_free(&node));
  std::vector<std::string> ids;
  for (int r = 0; r < size; ++r) ids.emplace_back(all.data() + r * sizeof(mine), sizeof(mine));
  return ids;
}

CudaBackend::CudaBackend(const BackendOptions& opts, const LaunchContext& ctx) : ctx_(ctx) {
  const int n = visible_device_count();
  std::vector<std::string> ids;
  if (n >= 1 && ctx.local_size > n) ids = local_device_ids(ctx.local_rank % n);
  plan_ = plan_device(ctx, n, opts.ranks_per_gpu, process_env(), ids);
  for (const auto& [k, v] : plan_.env_to_set) setenv(k.c_str(), v.c_str(), 0);
  if (!plan_.warning.empty() && ctx.rank == 0) std::cerr << "warning: " << plan_.warning << std::endl;
  OVB_CHECK_CUDA(cudaSetDevice(plan_.device));
  OVB_CHECK_CUDA(cudaDeviceGetStreamPriorityRange(&least_priority_, &greatest_priority_));
}

DeviceInfo CudaBackend::device_info() const {
  DeviceInfo d;
  cudaDeviceProp prop{};
  OVB_CHECK_CUDA(cudaGetDeviceProperties(&prop, plan_.device));
  d.name = prop.name;
  d.count = visible_device_count();
  d.index = plan_.device;
  d.memory_bytes = prop.totalGlobalMem;
  int khz = 0;
  if (cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, plan_.device) == cudaSuccess)
    d.sm_clock_mhz = khz / 1000;
  if (cudaDeviceGetAttribute(&khz, cudaDevAttrMemoryClockRate, plan_.device) == cudaSuccess)
    d.memory_clock_mhz = khz / 1000;
  auto version = [](int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); };
  int v = 0;
  OVB_CHECK_CUDA(cudaDriverGetVersion(&v));
  d.driver_version = version(v);
  OVB_CHECK_CUDA(cudaRuntimeGetVersion(&v));
  d.runtime_version = version(v);
  OVB_CHECK_NCCL(ncclGetVersion(&v), nullptr);
  d.comm_library = "NCCL";
  d.comm_version = std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." +
                   std::to_string(v % 100);
  return d;
}

Buffer CudaBackend::allocate(std::size_t bytes) {
  void* p = nullptr;
  OVB_CHECK_CUDA(cudaMalloc(&p, std::max<std::size_t>(bytes, 1)));
  return Buffer(p, bytes, [](void* q) { OVB_WARN_CUDA(cudaFree(q)); });
}

void CudaBackend::upload(Buffer& dst, const void* src, std::size_t bytes, std::size_t offset) {
  check_copy_range(dst, bytes, offset);
  // The suite's streams are non-blocking, so they do not order against cudaMemcpy's legacy stream,
  // and a pageable copy may still be in flight when cudaMemcpy returns: fence the whole device.
  synchronize();
  OVB_CHECK_CUDA(cudaMemcpy(static_cast<char*>(dst.data()) + offset, src, bytes, cudaMemcpyHostToDevice));
  OVB_CHECK_CUDA(cudaDeviceSynchronize());
}

void CudaBackend::download(void* dst, const Buffer& src, std::size_t bytes, std::size_t offset) {
  check_copy_range(src, bytes, offset);
  synchronize();  // see upload(): earlier work on every stream first
  OVB_CHECK_CUDA(cudaMemcpy(dst, static_cast<const char*>(src.data()) + offset, bytes,
                            cudaMemcpyDeviceToHost));
}

void CudaBackend::memset_zero(Buffer& b) {
  synchronize();
  OVB_CHECK_CUDA(cudaMemset(b.data(), 0, b.bytes()));  // asynchronous on the legacy stream
  OVB_CHECK_CUDA(cudaDeviceSynchronize());
}

std::unique_ptr<Stream> CudaBackend::create_stream(Priority p) {
  return std::make_unique<CudaStream>(p, p == Priority::high ? greatest_priority_ : least_priority_,
                                      watch_);
}

std::unique_ptr<Event> CudaBackend::create_event() { return std::make_unique<CudaEvent>(watch_); }

void CudaBackend::wait_event(Stream& s, Event& e) {
  OVB_CHECK_CUDA(cudaStreamWaitEvent(static_cast<CudaStream&>(s).get(),
                                     static_cast<CudaEvent&>(e).get(), 0));
}

void CudaBackend::synchronize() {
  if (watch_->timeout_s > 0)
    watch_->wait(
        [this] {
          for (CudaStream* s : watch_->streams.snapshot())
            if (!OVB_CUDA_READY(cudaStreamQuery(s->get()))) return false;
          return true;
        },
        "the work on the backend's CUDA streams");
  // Then (or, with the watchdog off, only) the rest: the legacy stream, streams made elsewhere.
  OVB_CHECK_CUDA(cudaDeviceSynchronize());
}

std::unique_ptr<Communicator> CudaBackend::create_communicator(MPI_Comm group,
                                                               const CommConfig& cfg) {
  return std::make_unique<NcclCommunicator>(group, cfg, watch_);
}

}  // namespace ovb::cuda
