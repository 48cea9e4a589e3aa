// The CUPTI tracer: subscription, activity buffers, callbacks, range hooks and writing (see
// cupti_tracer.hpp). The records become events in activity_export.cpp.
#include "cupti_tracer.hpp"

#include <cupti.h>
#include <cxxabi.h>
#include <generated_nvtx_meta.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <set>
#include <vector>

#include "activity_export.hpp"
#include "cupti_call.hpp"
#include "cupti_compat.hpp"
#include "device_props.hpp"
#include "ovb/error.hpp"

namespace ovb::trace::cuda {

namespace {

constexpr std::size_t kAlign = 8;

// Buffers are handed to CUPTI 8-byte aligned inside a larger allocation; the allocation is what
// gets freed, so the aligned pointer maps back to it.
std::mutex g_buffers_mu;
std::map<std::uint8_t*, void*> g_buffers;

void CUPTIAPI buffer_requested(std::uint8_t** buffer, std::size_t* size, std::size_t* max_records) {
  *buffer = CuptiTracer::get().new_buffer(size);
  *max_records = 0;  // as many as fit
}

void CUPTIAPI buffer_completed(CUcontext ctx, std::uint32_t stream, std::uint8_t* buffer,
                               std::size_t /*size*/, std::size_t valid) {
  CuptiTracer::get().on_buffer(ctx, stream, buffer, valid);
  void* original = nullptr;
  {
    std::lock_guard lock(g_buffers_mu);
    if (auto it = g_buffers.find(buffer); it != g_buffers.end()) {
      original = it->second;
      g_buffers.erase(it);
    }
  }
  std::free(original);
}

void CUPTIAPI callback(void* /*userdata*/, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                       const void* data) {
  CuptiTracer::get().on_callback(static_cast<int>(domain), cbid, data);
}

std::uint64_t os_thread_id() {
  return static_cast<std::uint64_t>(::syscall(SYS_gettid));
}

std::string demangle(const char* name) {
  if (!name) return "?";
  int status = 0;
  char* d = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  std::string out = status == 0 && d ? d : name;
  std::free(d);
  return out;
}

// The open ranges of this thread, innermost last: (domain, range id).
thread_local std::vector<std::pair<std::string, std::uint64_t>> t_open;

std::int64_t epoch_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

std::uint32_t ActivityStore::intern(const std::string& s) {
  const auto [it, added] = string_ids.try_emplace(s, static_cast<std::uint32_t>(strings.size()));
  if (added) strings.push_back(s);
  return it->second;
}

CuptiTracer& CuptiTracer::get() {
  // Never destroyed: CUPTI may deliver buffers during exit, after static destructors ran.
  static CuptiTracer* t = new CuptiTracer();
  return *t;
}

std::int64_t CuptiTracer::now() {
  std::uint64_t t = 0;
  cuptiGetTimestamp(&t);
  return static_cast<std::int64_t>(t);
}

std::uint8_t* CuptiTracer::new_buffer(std::size_t* size) {
  void* raw = std::malloc(cfg_.buffer_bytes + kAlign);
  if (!raw) {
    *size = 0;
    return nullptr;  // CUPTI drops records and counts them
  }
  auto* aligned = reinterpret_cast<std::uint8_t*>(
      (reinterpret_cast<std::uintptr_t>(raw) + kAlign - 1) / kAlign * kAlign);
  {
    std::lock_guard lock(g_buffers_mu);
    g_buffers[aligned] = raw;
  }
  *size = cfg_.buffer_bytes;
  return aligned;
}

void CuptiTracer::start(const TracerConfig& cfg) {
  if (running_) throw Error("the CUDA tracer is already running in this process");
  cfg_ = cfg;
  cfg_.buffer_bytes = std::clamp<std::size_t>(cfg_.buffer_bytes, 1u << 20, 8u << 20);
  window_ = std::make_unique<CaptureWindow>(cfg_.window, now());
  epoch_offset_ = epoch_now_ns() - now();

  CUpti_SubscriberHandle sub = nullptr;
  OVB_TRACE_CUPTI(cuptiSubscribe(&sub, callback, nullptr));  // fails when Nsight holds CUPTI
  subscriber_ = sub;
  try {
    OVB_TRACE_CUPTI(
        cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_CREATED));
    OVB_TRACE_CUPTI(cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_RESOURCE,
                                        CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING));
    if (cfg_.window.mode == WindowConfig::Mode::profiler_api) {
      OVB_TRACE_CUPTI(cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_DRIVER_API,
                                          CUPTI_DRIVER_TRACE_CBID_cuProfilerStart));
      OVB_TRACE_CUPTI(cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_DRIVER_API,
                                          CUPTI_DRIVER_TRACE_CBID_cuProfilerStop));
    }
    if (cfg_.nvtx_callbacks) OVB_TRACE_CUPTI(cuptiEnableDomain(1, sub, CUPTI_CB_DOMAIN_NVTX));
    OVB_TRACE_CUPTI(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed));
    // CONCURRENT_KERNEL, never KERNEL: KERNEL serialises kernels and hides the overlap measured.
    for (CUpti_ActivityKind k : {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
                                 CUPTI_ACTIVITY_KIND_MEMCPY2, CUPTI_ACTIVITY_KIND_MEMSET,
                                 CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, CUPTI_ACTIVITY_KIND_MARKER,
                                 CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION})
      OVB_TRACE_CUPTI(cuptiActivityEnable(k));
    // Always on: CUPTI writes an external-correlation record only in front of an API record, so
    // the join of kernels to ranges needs them (NCCL launches through the driver API). They are
    // kept in the trace only with api_records.
    OVB_TRACE_CUPTI(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME));
    OVB_TRACE_CUPTI(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DRIVER));
  } catch (...) {
    cuptiUnsubscribe(sub);
    subscriber_ = nullptr;
    throw;
  }
  running_ = true;
}

void CuptiTracer::flush() noexcept {
  if (running_) cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
}

void CuptiTracer::stop() noexcept {
  if (!running_) return;
  flush();
  for (CUpti_ActivityKind k : {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
                               CUPTI_ACTIVITY_KIND_MEMCPY2, CUPTI_ACTIVITY_KIND_MEMSET,
                               CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, CUPTI_ACTIVITY_KIND_MARKER,
                               CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION,
                               CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_DRIVER})
    cuptiActivityDisable(k);
  if (subscriber_) cuptiUnsubscribe(static_cast<CUpti_SubscriberHandle>(subscriber_));
  subscriber_ = nullptr;
  running_ = false;
}

void CuptiTracer::range_begin(const RangeInfo& info, const std::string& domain) {
  if (!running_) return;
  const std::uint64_t id = next_range_++;
  RangeRec r;
  r.info = info;
  r.domain = domain;
  r.begin = now();
  r.parent = t_open.empty() ? 0 : t_open.back().second;
  r.thread = os_thread_id();
  window_->range_push(info.name, r.begin);
  {
    std::lock_guard lock(mu_);
    store_.ranges.emplace(id, std::move(r));
  }
  t_open.emplace_back(domain, id);
  cuptiActivityPushExternalCorrelationId(kRangeCorrelationKind, id);
}

void CuptiTracer::range_end(const std::string& domain) {
  if (!running_) return;
  // The innermost open range of this domain (NVTX keeps one stack per domain and thread).
  auto it = std::find_if(t_open.rbegin(), t_open.rend(),
                         [&](const auto& e) { return e.first == domain; });
  if (it == t_open.rend()) return;  // opened before the tracer started
  const std::uint64_t id = it->second;
  t_open.erase(std::next(it).base());
  std::uint64_t popped = 0;
  cuptiActivityPopExternalCorrelationId(kRangeCorrelationKind, &popped);
  const std::int64_t t = now();
  std::string name;
  {
    std::lock_guard lock(mu_);
    auto r = store_.ranges.find(id);
    if (r == store_.ranges.end()) return;
    r->second.end = t;
    name = r->second.info.name;
    // A range wholly outside every window cannot matter: forget it (long injected runs).
    if (!window_->keeps(r->second.begin, t)) {
      store_.ranges.erase(r);
      ++store_.outside_window;
    }
  }
  window_->range_pop(name, t);
}

void CuptiTracer::on_callback(int domain, std::uint32_t cbid, const void* data) {
  switch (domain) {
    case CUPTI_CB_DOMAIN_RESOURCE: {
      const auto* rd = static_cast<const CUpti_ResourceData*>(data);
      if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_CREATED) {
        std::uint32_t device = 0;
        if (cuptiGetDeviceId(rd->context, &device) == CUPTI_SUCCESS) {
          nlohmann::ordered_json props = device_properties(static_cast<int>(device));
          std::lock_guard lock(mu_);
          const bool seen = std::any_of(device_props_.begin(), device_props_.end(),
                                        [&](const auto& p) { return p["id"] == device; });
          if (!seen) device_props_.push_back(std::move(props));
        }
      } else if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING) {
        flush();  // its records would otherwise be lost with the context
      }
      break;
    }
    case CUPTI_CB_DOMAIN_DRIVER_API: {
      const auto* cd = static_cast<const CUpti_CallbackData*>(data);
      if (cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStart && cd->callbackSite == CUPTI_API_EXIT)
        window_->profiler_start(now());
      if (cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStop && cd->callbackSite == CUPTI_API_ENTER)
        window_->profiler_stop(now());
      break;
    }
    case CUPTI_CB_DOMAIN_NVTX: on_nvtx(cbid, data); break;
    default: break;
  }
}

void CuptiTracer::on_nvtx(std::uint32_t cbid, const void* data) {
  // Domain handles -> names, from nvtxDomainCreateA (NVTX calls are rare: a map under a lock).
  static std::mutex domains_mu;
  static std::map<const void*, std::string> domains;
  const auto* nd = static_cast<const CUpti_NvtxData*>(data);
  auto domain_name = [&](nvtxDomainHandle_t h) {
    std::lock_guard lock(domains_mu);
    auto it = domains.find(h);
    return it == domains.end() ? std::string("NVTX") : it->second;
  };
  auto from_attributes = [](const nvtxEventAttributes_t* a, RangeInfo& info) {
    if (!a) return;
    if (a->messageType == NVTX_MESSAGE_TYPE_ASCII && a->message.ascii)
      parse_nvtx_message(a->message.ascii, info);
    if (info.bytes < 0 && a->payloadType == NVTX_PAYLOAD_TYPE_INT64)
      info.bytes = a->payload.llValue;
  };
  switch (cbid) {
    case CUPTI_CBID_NVTX_nvtxDomainCreateA: {
      const auto* p = static_cast<const nvtxDomainCreateA_params*>(nd->functionParams);
      const auto* ret = static_cast<const nvtxDomainHandle_t*>(nd->functionReturnValue);
      if (p && p->name && ret) {
        std::lock_guard lock(domains_mu);
        domains[*ret] = p->name;
      }
      break;
    }
    case CUPTI_CBID_NVTX_nvtxRangePushA: {
      const auto* p = static_cast<const nvtxRangePushA_params*>(nd->functionParams);
      RangeInfo info;
      if (p && p->message) parse_nvtx_message(p->message, info);
      range_begin(info, "NVTX");
      break;
    }
    case CUPTI_CBID_NVTX_nvtxRangePushEx: {
      const auto* p = static_cast<const nvtxRangePushEx_params*>(nd->functionParams);
      RangeInfo info;
      if (p) from_attributes(p->eventAttrib, info);
      range_begin(info, "NVTX");
      break;
    }
    case CUPTI_CBID_NVTX_nvtxDomainRangePushEx: {
      const auto* p = static_cast<const nvtxDomainRangePushEx_params*>(nd->functionParams);
      if (!p) break;
      RangeInfo info;
      from_attributes(p->core.eventAttrib, info);
      range_begin(info, domain_name(p->domain));
      break;
    }
    case CUPTI_CBID_NVTX_nvtxRangePop: range_end("NVTX"); break;
    case CUPTI_CBID_NVTX_nvtxDomainRangePop: {
      const auto* p = static_cast<const nvtxDomainRangePop_params*>(nd->functionParams);
      if (p) range_end(domain_name(p->domain));
      break;
    }
    default: break;
  }
}

void CuptiTracer::on_buffer(void* context, std::uint32_t stream, std::uint8_t* buffer,
                            std::size_t valid) {
  if (buffer && valid > 0) {
    std::lock_guard lock(mu_);
    CUpti_Activity* record = nullptr;
    while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) keep_record(record);
  }
  std::size_t dropped = 0;
  if (cuptiActivityGetNumDroppedRecords(static_cast<CUcontext>(context), stream, &dropped) ==
          CUPTI_SUCCESS &&
      dropped > 0) {
    std::lock_guard lock(mu_);
    store_.dropped += dropped;
  }
}

void CuptiTracer::keep_record(const void* rec) {
  auto keep = [&](std::int64_t b, std::int64_t e) {
    if (window_->keeps(b, e)) return true;
    ++store_.outside_window;
    return false;
  };
  ActivityStore& s = store_;
  switch (static_cast<const CUpti_Activity*>(rec)->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
      const auto* k = static_cast<const KernelRecord*>(rec);
      const auto b = static_cast<std::int64_t>(k->start), e = static_cast<std::int64_t>(k->end);
      if (!keep(b, e)) break;
      auto [it, added] = s.kernel_name_ids.try_emplace(k->name, 0);
      if (added) it->second = s.intern(demangle(k->name));
      s.kernels.push_back({b,
                           e,
                           k->deviceId,
                           k->streamId,
                           k->correlationId,
                           it->second,
                           {k->gridX, k->gridY, k->gridZ},
                           {k->blockX, k->blockY, k->blockZ}});
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      const auto* m = static_cast<const MemcpyRecord*>(rec);
      const auto b = static_cast<std::int64_t>(m->start), e = static_cast<std::int64_t>(m->end);
      if (keep(b, e))
        s.copies.push_back(
            {b, e, m->bytes, m->deviceId, m->streamId, m->correlationId, m->copyKind, false});
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY2: {  // peer-to-peer: copy-engine collectives, peer exchanges
      const auto* m = static_cast<const PeerCopyRecord*>(rec);
      const auto b = static_cast<std::int64_t>(m->start), e = static_cast<std::int64_t>(m->end);
      if (keep(b, e))
        s.copies.push_back({b, e, m->bytes, m->deviceId, m->streamId, m->correlationId, m->copyKind,
                            false, m->srcDeviceId, m->dstDeviceId});
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      const auto* m = static_cast<const MemsetRecord*>(rec);
      const auto b = static_cast<std::int64_t>(m->start), e = static_cast<std::int64_t>(m->end);
      if (keep(b, e))
        s.copies.push_back({b, e, m->bytes, m->deviceId, m->streamId, m->correlationId, 0, true});
      break;
    }
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
      const auto* y = static_cast<const SyncRecord*>(rec);
      const auto b = static_cast<std::int64_t>(y->start), e = static_cast<std::int64_t>(y->end);
      if (keep(b, e))
        s.syncs.push_back(
            {b, e, static_cast<std::uint32_t>(y->type), y->streamId, y->correlationId});
      break;
    }
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: {
      if (!cfg_.api_records) break;
      const auto* a = static_cast<const ApiRecord*>(rec);
      const auto b = static_cast<std::int64_t>(a->start), e = static_cast<std::int64_t>(a->end);
      if (keep(b, e))
        s.apis.push_back(
            {b, e, a->threadId, a->correlationId, a->cbid, a->kind == CUPTI_ACTIVITY_KIND_DRIVER});
      break;
    }
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
      const auto* x = static_cast<const ExternalCorrelationRecord*>(rec);
      // Only launches inside a range still known (ranges outside every window were forgotten).
      if (x->externalKind == kRangeCorrelationKind && s.ranges.count(x->externalId))
        s.range_of_launch[x->correlationId] = x->externalId;
      break;
    }
    case CUPTI_ACTIVITY_KIND_MARKER: {
      const auto* m = static_cast<const MarkerRecord*>(rec);
      const std::string domain = m->domain ? m->domain : "NVTX";
      if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_START) {
        // The hooks already record their ranges with full attributes: keep only the others (in
        // linked mode, NVTX domains other than the suite's; none when the NVTX callbacks run).
        if (cfg_.nvtx_callbacks || domain == "OverlapBench") break;
        s.open_markers[m->id] = {static_cast<std::int64_t>(m->timestamp), -1,
                                 m->objectId.pt.threadId, s.intern(m->name ? m->name : ""),
                                 s.intern(domain)};
      } else if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_END) {
        auto it = s.open_markers.find(m->id);
        if (it == s.open_markers.end()) break;
        MarkerRec r = it->second;
        s.open_markers.erase(it);
        r.end = static_cast<std::int64_t>(m->timestamp);
        if (keep(r.start, r.end)) s.markers.push_back(r);
      }
      break;
    }
    default: break;
  }
}

bool CuptiTracer::has_device_activity() {
  flush();
  std::lock_guard lock(mu_);
  return !store_.kernels.empty() || !store_.copies.empty() || store_.outside_window > 0;
}

void CuptiTracer::write(const std::string& path, TraceHeader header) {
  flush();
  const std::int64_t now_cupti = now();
  std::lock_guard lock(mu_);
  if (device_props_.empty()) {
    std::set<std::uint32_t> devices;
    for (const KernelRec& k : store_.kernels) devices.insert(k.device);
    for (std::uint32_t d : devices) device_props_.push_back(device_properties(static_cast<int>(d)));
  }
  header.device_properties = device_props_;
  const auto windows = window_->windows();
  // The base is the earliest time written, so every ts is non-negative.
  const std::int64_t base =
      earliest_record(store_, windows.empty() ? now_cupti : windows.front().first);
  header.base_ns = base + epoch_offset_;
  nlohmann::ordered_json w_json = nlohmann::ordered_json::array();
  for (const auto& [b, e] : windows)
    w_json.push_back({(b - base) / 1e3, e == CaptureWindow::kOpenEnd
                                            ? nlohmann::ordered_json()
                                            : nlohmann::ordered_json((e - base) / 1e3)});
  header.extra["ovbTracer"] = {{"tracer", "cupti"},
                               {"mode", cfg_.mode},
                               {"capture", cfg_.window.describe()},
                               {"windows_us", w_json},
                               {"dropped_records", store_.dropped},
                               {"records_outside_window", store_.outside_window}};
  TraceWriter w(path, header);
  write_activity(store_, epoch_offset_, now_cupti, w);
  w.finish();
}

}  // namespace ovb::trace::cuda
