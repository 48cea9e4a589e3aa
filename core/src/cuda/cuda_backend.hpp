// The CUDA backend: cudaMalloc, CUDA streams with priorities, CUDA events, NCCL communicators
// created per group from an MPI-broadcast unique id, with ncclConfig_t knobs. With
// OVB_COMM_TIMEOUT_S set (ovb/watchdog.hpp) event, stream and device waits poll, checking the
// communicators' asynchronous errors, and abort the communicators on a timeout or an error.
#pragma once

#include <cuda_runtime.h>
#include <nccl.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "ovb/backend.hpp"
#include "ovb/device_plan.hpp"
#include "ovb/gemm.hpp"
#include "ovb/telemetry.hpp"
#include "ovb/watchdog.hpp"

namespace ovb::cuda {

// Number of CUDA devices this process can use (0 when none or no driver).
int visible_device_count();
ncclDataType_t nccl_type(DType t);
// The cuBLASLt GEMM on a CUDA backend (gemm_cublaslt.cpp).
std::unique_ptr<Gemm> make_cublaslt_gemm(Backend& backend);

class CudaStream;
class NcclCommunicator;

// What the streams, events and communicators of one backend share for the collective watchdog.
struct CudaWatch {
  double timeout_s = comm_timeout_s();  // 0: off, waits block in the runtime
  LiveSet<NcclCommunicator> comms;      // aborted on a timeout or an asynchronous error
  LiveSet<CudaStream> streams;          // what a device-wide wait polls
  // Polls done() until true; every poll also checks ncclCommGetAsyncError of the communicators.
  // An asynchronous error or a timeout aborts every communicator and throws Error.
  void wait(const std::function<bool()>& done, std::string_view what);
};

class CudaStream final : public Stream {
 public:
  // Registers itself in watch->streams until destroyed.
  CudaStream(Priority p, int cuda_priority, std::shared_ptr<CudaWatch> watch);
  ~CudaStream() override;
  void synchronize() override;
  Priority priority() const override { return priority_; }
  void* native() override { return stream_; }
  cudaStream_t get() const { return stream_; }

 private:
  Priority priority_;
  cudaStream_t stream_ = nullptr;
  std::shared_ptr<CudaWatch> watch_;
};

class CudaEvent final : public Event {
 public:
  explicit CudaEvent(std::shared_ptr<CudaWatch> watch);
  ~CudaEvent() override;
  void record(Stream& s) override;
  void synchronize() override;
  double elapsed_ms(Event& start) override;
  cudaEvent_t get() const { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
  std::shared_ptr<CudaWatch> watch_;
};

class NcclCommunicator final : public Communicator {
 public:
  // Registers itself in watch->comms until destroyed.
  NcclCommunicator(MPI_Comm group, const CommConfig& cfg, std::shared_ptr<CudaWatch> watch);
  ~NcclCommunicator() override;
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
  Buffer allocate_window(std::size_t bytes) override;
  void abort() override;
  // ncclCommGetAsyncError's error with NCCL's message; empty when none (or aborted).
  std::string async_error();

 private:
  ncclComm_t comm_ = nullptr;
  std::shared_ptr<CudaWatch> watch_;
  CommConfig cfg_;
  int rank_ = 0, size_ = 1;
};

class CudaBackend final : public Backend {
 public:
  CudaBackend(const BackendOptions& opts, const LaunchContext& ctx);
  std::string_view name() const override { return "cuda"; }
  bool supports(DType) const override { return true; }
  DeviceInfo device_info() const override;
  int ranks_per_gpu() const override { return plan_.ranks_per_gpu; }
  bool oversubscribed() const override { return plan_.oversubscribed; }
  Buffer allocate(std::size_t bytes) override;
  void upload(Buffer& dst, const void* src, std::size_t bytes, std::size_t offset) override;
  void download(void* dst, const Buffer& src, std::size_t bytes, std::size_t offset) override;
  void memset_zero(Buffer& b) override;
  std::unique_ptr<Stream> create_stream(Priority p) override;
  std::unique_ptr<Event> create_event() override;
  void wait_event(Stream& s, Event& e) override;
  void synchronize() override;
  std::unique_ptr<Communicator> create_communicator(MPI_Comm group, const CommConfig& cfg) override;
  Engines observe_engines(Stream& s, const std::function<void()>& enqueue) override;
  std::unique_ptr<PeerBuffers> map_peers(MPI_Comm group, Buffer& buf, int steps) override;
  // ovb/backend_measures.hpp.
  nlohmann::json telemetry() const;
  std::optional<double> device_memory_peak_bytes() const;

 private:
  void note_memory_in_use() const;

  LaunchContext ctx_;
  DevicePlan plan_;
  int least_priority_ = 0, greatest_priority_ = 0;
  std::shared_ptr<CudaWatch> watch_ = std::make_shared<CudaWatch>();
  std::unique_ptr<telemetry::Sampler> sampler_;
  double used_at_start_ = 0;      // bytes in use on the device once the context exists
  mutable double peak_used_ = 0;  // the most seen in use since
};

}  // namespace ovb::cuda
