// CUDA backend: device memory, streams, events (see cuda_backend.hpp).
#include "cuda_backend.hpp"

#include <cstdlib>
#include <iostream>

#include "ovb/cuda/check.hpp"
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

CudaStream::CudaStream(Priority p, int cuda_priority) : priority_(p) {
  OVB_CHECK_CUDA(cudaStreamCreateWithPriority(&stream_, cudaStreamNonBlocking, cuda_priority));
}
CudaStream::~CudaStream() { OVB_WARN_CUDA(cudaStreamDestroy(stream_)); }
void CudaStream::synchronize() { OVB_CHECK_CUDA(cudaStreamSynchronize(stream_)); }

CudaEvent::CudaEvent() { OVB_CHECK_CUDA(cudaEventCreate(&event_)); }
CudaEvent::~CudaEvent() { OVB_WARN_CUDA(cudaEventDestroy(event_)); }
void CudaEvent::record(Stream& s) {
  OVB_CHECK_CUDA(cudaEventRecord(event_, static_cast<CudaStream&>(s).get()));
}
void CudaEvent::synchronize() { OVB_CHECK_CUDA(cudaEventSynchronize(event_)); }
double CudaEvent::elapsed_ms(Event& start) {
  auto& s = static_cast<CudaEvent&>(start);
  s.synchronize();
  synchronize();
  float ms = 0;
  OVB_CHECK_CUDA(cudaEventElapsedTime(&ms, s.event_, event_));
  return ms;
}

CudaBackend::CudaBackend(const BackendOptions& opts, const LaunchContext& ctx) : ctx_(ctx) {
  const int n = visible_device_count();
  plan_ = plan_device(ctx, n, opts.ranks_per_gpu, process_env());
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

static void check_range(const Buffer& b, std::size_t bytes, std::size_t offset) {
  if (offset + bytes > b.bytes())
    throw Error("copy of " + std::to_string(bytes) + " bytes at offset " + std::to_string(offset) +
                " overruns a buffer of " + std::to_string(b.bytes()) + " bytes");
}

void CudaBackend::upload(Buffer& dst, const void* src, std::size_t bytes, std::size_t offset) {
  check_range(dst, bytes, offset);
  // The suite's streams are non-blocking, so they do not order against cudaMemcpy's legacy stream,
  // and a pageable copy may still be in flight when cudaMemcpy returns: fence the whole device.
  OVB_CHECK_CUDA(cudaDeviceSynchronize());
  OVB_CHECK_CUDA(cudaMemcpy(static_cast<char*>(dst.data()) + offset, src, bytes, cudaMemcpyHostToDevice));
  OVB_CHECK_CUDA(cudaDeviceSynchronize());
}

void CudaBackend::download(void* dst, const Buffer& src, std::size_t bytes, std::size_t offset) {
  check_range(src, bytes, offset);
  OVB_CHECK_CUDA(cudaDeviceSynchronize());  // see upload(): earlier work on every stream first
  OVB_CHECK_CUDA(cudaMemcpy(dst, static_cast<const char*>(src.data()) + offset, bytes,
                            cudaMemcpyDeviceToHost));
}

void CudaBackend::memset_zero(Buffer& b) {
  OVB_CHECK_CUDA(cudaDeviceSynchronize());
  OVB_CHECK_CUDA(cudaMemset(b.data(), 0, b.bytes()));  // asynchronous on the legacy stream
  OVB_CHECK_CUDA(cudaDeviceSynchronize());
}

std::unique_ptr<Stream> CudaBackend::create_stream(Priority p) {
  return std::make_unique<CudaStream>(p, p == Priority::high ? greatest_priority_ : least_priority_);
}

std::unique_ptr<Event> CudaBackend::create_event() { return std::make_unique<CudaEvent>(); }

void CudaBackend::wait_event(Stream& s, Event& e) {
  OVB_CHECK_CUDA(cudaStreamWaitEvent(static_cast<CudaStream&>(s).get(),
                                     static_cast<CudaEvent&>(e).get(), 0));
}

void CudaBackend::synchronize() { OVB_CHECK_CUDA(cudaDeviceSynchronize()); }

std::unique_ptr<Communicator> CudaBackend::create_communicator(MPI_Comm group,
                                                               const CommConfig& cfg) {
  return std::make_unique<NcclCommunicator>(group, cfg);
}

}  // namespace ovb::cuda
