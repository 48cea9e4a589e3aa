// The process's CUPTI tracer (CUPTI allows one subscriber per process, so there is one).
//
// Collection: CUPTI Activity API with CONCURRENT_KERNEL (never KERNEL, which serialises kernels),
// MEMCPY, MEMSET, SYNCHRONIZATION, MARKER (NVTX), EXTERNAL_CORRELATION, RUNTIME and DRIVER (the
// API records are what external-correlation records precede; kept in the trace only when asked).
// Buffers of 1-8 MB (default 4), 8-byte aligned inside a larger allocation that is the one freed.
// Ranges: the caller's hooks (linked: ovb::ScopedRange; injected: CUPTI's NVTX callbacks) record
// them and push an external correlation id while they are open, so every kernel launched inside one
// is joined to it through its correlation id - that is how NCCL kernels get the collective kind,
// group and bytes of the suite's collective ranges. Flushing: flush() after a device synchronize,
// on context destruction, and before writing.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "../capture_window.hpp"
#include "activity_store.hpp"
#include "ovb/trace_writer.hpp"

namespace ovb::trace::cuda {

struct TracerConfig {
  std::size_t buffer_bytes = 4u << 20;  // clamped to 1..8 MB
  bool api_records = false;             // write the runtime/driver API calls into the trace
  bool nvtx_callbacks = false;          // injected mode: ranges from CUPTI's NVTX callbacks
  WindowConfig window;
  std::string mode = "linked";  // "linked" or "injected", written into the trace
};

class CuptiTracer {
 public:
  static CuptiTracer& get();

  // Subscribes and enables the activity kinds. Throws ovb::Error (e.g. another CUPTI subscriber).
  // A second call with the tracer running throws too.
  void start(const TracerConfig& cfg);
  bool running() const { return running_; }
  CaptureWindow& window() { return *window_; }

  // CUPTI timestamp now (ns) and its offset to the Unix epoch (epoch = cupti + offset).
  static std::int64_t now();
  std::int64_t epoch_offset() const { return epoch_offset_; }

  // Range hooks, on the thread that opens/closes the range.
  void range_begin(const RangeInfo& info, const std::string& domain = "OverlapBench");
  void range_end(const std::string& domain = "OverlapBench");

  // cuptiActivityFlushAll(FORCED): completed records reach the store. Never throws.
  void flush() noexcept;
  // Flushes, then writes the trace of what was kept. Throws ovb::Error on I/O failure.
  void write(const std::string& path, TraceHeader header);
  // After a flush: whether any kernel, copy or memset was recorded, or any record fell outside the
  // capture window.
  bool has_device_activity();
  // Disables the activity kinds and unsubscribes (after the last write). Never throws.
  void stop() noexcept;

  // Called by CUPTI.
  void on_buffer(void* context, std::uint32_t stream, std::uint8_t* buffer, std::size_t valid);
  void on_callback(int domain, std::uint32_t cbid, const void* data);
  std::uint8_t* new_buffer(std::size_t* size);
  std::size_t buffer_size() const { return cfg_.buffer_bytes; }

 private:
  CuptiTracer() = default;
  void keep_record(const void* record);  // with mu_ held
  void on_nvtx(std::uint32_t cbid, const void* data);

  TracerConfig cfg_;
  std::atomic<bool> running_{false};
  std::unique_ptr<CaptureWindow> window_;
  std::int64_t epoch_offset_ = 0;
  void* subscriber_ = nullptr;  // CUpti_SubscriberHandle
  std::mutex mu_;               // guards store_ and device_props_
  ActivityStore store_;
  nlohmann::ordered_json device_props_ = nlohmann::ordered_json::array();
  std::atomic<std::uint64_t> next_range_{1};
};

}  // namespace ovb::trace::cuda
