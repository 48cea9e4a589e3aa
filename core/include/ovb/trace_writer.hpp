// Streaming writer of Chrome trace JSON in Kineto's dialect (docs/trace-format.md), the suite's
// trace format, written by the tracers (profiling/) and by the model's predicted iteration:
// a header (schemaVersion, distributedInfo, deviceProperties, baseTimeNanoseconds, ...), then one
// event at a time, so a trace of millions of events never sits in memory as a JSON document.
// Written by ovb::OutputFile's rules (ovb/output_file.hpp): to a temporary file in the target
// folder renamed on finish(), so a crash never leaves a half-written trace under the final name;
// "-", a device or a FIFO is written through. Used by the host timeline, the CUDA tracer and
// `ovb-model explain --timeline` alike.
//
//   TraceWriter w(path, header_json, base_ns);
//   w.process_name(pid, "rank 0 host", 0); w.thread_name(pid, tid, "stream 7", 7);
//   w.complete({...});  // ph "X"
//   w.finish();
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "ovb/output_file.hpp"

namespace ovb::trace {

// Trace event categories (the "cat" values of Kineto and PyTorch's profiler).
namespace cat {
inline constexpr std::string_view kernel = "kernel";
inline constexpr std::string_view memcpy = "gpu_memcpy";
inline constexpr std::string_view memset = "gpu_memset";
inline constexpr std::string_view runtime = "cuda_runtime";
inline constexpr std::string_view driver = "cuda_driver";
inline constexpr std::string_view annotation = "user_annotation";
inline constexpr std::string_view gpu_annotation = "gpu_user_annotation";
}  // namespace cat

// ovbTracer.mode of a predicted trace (`ovb-model explain --timeline`) as opposed to a measured
// one ("linked", "injected"): `ovb-trace merge` keeps the two sources apart by it.
inline constexpr std::string_view kPredictedMode = "predicted";

// A complete ("X") event. Times are absolute nanoseconds on the trace's clock; the writer makes
// them relative to baseTimeNanoseconds.
struct CompleteEvent {
  std::string_view name;
  std::string_view cat;
  std::int64_t pid = 0;
  std::int64_t tid = 0;
  std::int64_t begin_ns = 0;
  std::int64_t end_ns = 0;
  const nlohmann::ordered_json* args = nullptr;  // a flat object, or null for none
};

// The fixed top-level keys. `extra` (an object) is merged in after them (e.g. "context").
struct TraceHeader {
  int rank = 0;
  int world_size = 1;
  std::string backend;  // distributedInfo.backend: "nccl" on CUDA, "mpi" on the host backend
  nlohmann::ordered_json device_properties = nlohmann::ordered_json::array();
  std::int64_t base_ns = 0;  // baseTimeNanoseconds
  nlohmann::ordered_json extra = nlohmann::ordered_json::object();
};

// "12.345": nanoseconds as microseconds with 3 decimals (exact, no floating point).
std::string format_us(std::int64_t ns);

// `"key": value` pairs with a space after each colon and comma, on one line.
std::string format_flat(const nlohmann::ordered_json& obj);

class TraceWriter {
 public:
  // Creates missing folders and opens the output for `path` (OutputFile). Throws ovb::Error.
  TraceWriter(std::string path, const TraceHeader& header);
  ~TraceWriter() = default;  // without finish(), the temporary file is removed (OutputFile)
  TraceWriter(const TraceWriter&) = delete;
  TraceWriter& operator=(const TraceWriter&) = delete;

  void complete(const CompleteEvent& e);
  // Metadata ("M") events naming and ordering processes and threads (tracks).
  void process_name(std::int64_t pid, std::string_view name, std::int64_t sort_index);
  void thread_name(std::int64_t pid, std::int64_t tid, std::string_view name,
                   std::int64_t sort_index);
  // Any other event given as JSON (e.g. copied by `ovb-trace merge`), written with the same
  // layout; `ts_ns`, when given, replaces its "ts" (absolute ns, made relative like the others).
  void raw(const nlohmann::json& event, std::optional<std::int64_t> ts_ns = std::nullopt);

  // Closes the JSON and commits the output (flushed to disk, renamed into place). Throws
  // ovb::Error.
  void finish();
  std::size_t events() const { return events_; }
  std::int64_t base_ns() const { return base_ns_; }

 private:
  void begin_event();
  void put(std::string_view s);
  OutputFile out_;
  std::int64_t base_ns_ = 0;
  std::size_t events_ = 0;
  bool finished_ = false;
};

}  // namespace ovb::trace
