// Backend-independent parts of the interface and the backend factory (see ovb/backend.hpp).
#include "ovb/backend.hpp"
#include "ovb/backend_kind.hpp"
#include "ovb/backend_measures.hpp"

#include "copy_range.hpp"
#include "cuda_entry.hpp"
#include "host_backend.hpp"
#include "ovb/error.hpp"
#include "ovb/telemetry.hpp"

namespace ovb {

std::string_view name_of(CollKind k) {
  switch (k) {
    case CollKind::all_reduce: return "all_reduce";
    case CollKind::reduce_scatter: return "reduce_scatter";
    case CollKind::all_gather: return "all_gather";
  }
  return "?";
}

CollKind parse_coll_kind(std::string_view s) {
  if (s == "all_reduce" || s == "allreduce" || s == "ar") return CollKind::all_reduce;
  if (s == "reduce_scatter" || s == "reducescatter" || s == "rs") return CollKind::reduce_scatter;
  if (s == "all_gather" || s == "allgather" || s == "ag") return CollKind::all_gather;
  throw UsageError("unknown collective '" + std::string(s) +
                   "' (expected all_reduce, reduce_scatter or all_gather)");
}

std::string_view name_of(Priority p) { return p == Priority::high ? "high" : "normal"; }

Buffer& Buffer::operator=(Buffer&& o) noexcept {
  if (this != &o) {
    reset();
    data_ = o.data_;
    bytes_ = o.bytes_;
    free_ = std::move(o.free_);
    o.data_ = nullptr;
    o.bytes_ = 0;
  }
  return *this;
}

void check_copy_range(const Buffer& b, std::size_t bytes, std::size_t offset) {
  if (offset + bytes > b.bytes())
    throw Error("copy of " + std::to_string(bytes) + " bytes at offset " + std::to_string(offset) +
                " overruns a buffer of " + std::to_string(b.bytes()) + " bytes");
}

void Buffer::reset() {
  if (data_ && free_) free_(data_);
  data_ = nullptr;
  bytes_ = 0;
}

void Communicator::run(CollKind k, const void* send, void* recv, std::size_t count, DType t,
                       Stream& s) {
  switch (k) {
    case CollKind::all_reduce: all_reduce(send, recv, count, t, s); break;
    case CollKind::reduce_scatter: reduce_scatter(send, recv, count, t, s); break;
    case CollKind::all_gather: all_gather(send, recv, count, t, s); break;
  }
}

bool cuda_backend_built() {
  return cuda_entry::built();
}

std::string backend_kind(const BackendOptions& opts) {
  if (opts.name == "host" || opts.name == "cuda") return opts.name;
  if (opts.name != "auto")
    throw UsageError("unknown backend '" + opts.name + "' (expected auto, cuda or host)");
  return cuda_entry::visible_device_count() > 0 ? "cuda" : "host";
}

std::unique_ptr<Backend> make_backend(const BackendOptions& opts, const LaunchContext& ctx) {
  if (opts.name == "host") return std::make_unique<HostBackend>(ctx);
  if (opts.name != "cuda" && opts.name != "auto")
    throw UsageError("unknown backend '" + opts.name + "' (expected auto, cuda or host)");
  if (opts.name == "cuda" || cuda_entry::visible_device_count() > 0)
    return cuda_entry::make_backend(opts, ctx);
  return std::make_unique<HostBackend>(ctx);
}

// The measures live on the CUDA backend alone; reached here, where the backends are known, rather
// than through the Backend interface that every kernel and benchmark includes.
nlohmann::json backend_telemetry(const Backend& b) {
  if (auto t = cuda_entry::telemetry(b)) return *t;
  return telemetry::not_available(std::string(b.name()) + " backend: no GPU to sample");
}

std::optional<double> device_memory_peak_bytes(const Backend& b) {
  return cuda_entry::device_memory_peak_bytes(b);
}

}  // namespace ovb
