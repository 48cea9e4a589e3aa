// Capture windows of the tracer (see capture_window.hpp).
#include "capture_window.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include "ovb/error.hpp"

namespace ovb::trace {

namespace {

double env_double(const char* name, const char* text, double fallback) {
  if (!text || !*text) return fallback;
  char* end = nullptr;
  const double v = std::strtod(text, &end);
  if (*end != '\0' || v < 0)
    throw Error(std::string(name) + "='" + text + "' is not a non-negative number of seconds");
  return v;
}

int env_int(const char* name, const char* text, int fallback) {
  if (!text || !*text) return fallback;
  char* end = nullptr;
  const long v = std::strtol(text, &end, 10);
  if (*end != '\0' || v < 0 || v > 1'000'000'000)
    throw Error(std::string(name) + "='" + text + "' is not a non-negative integer");
  return static_cast<int>(v);
}

std::int64_t seconds_ns(double s) {
  return static_cast<std::int64_t>(std::llround(s * 1e9));
}

}  // namespace

WindowConfig WindowConfig::from_env(const std::function<const char*(const char*)>& getenv_fn) {
  auto get = [&](const char* n) { return getenv_fn ? getenv_fn(n) : std::getenv(n); };
  WindowConfig c;
  c.start_s = env_double("OVB_TRACE_START_S", get("OVB_TRACE_START_S"), 0);
  c.duration_s = env_double("OVB_TRACE_DURATION_S", get("OVB_TRACE_DURATION_S"), 0);
  if (const char* r = get("OVB_TRACE_RANGE"); r && *r) {
    c.range = r;
    c.mode = Mode::range;
  }
  c.start_iter = env_int("OVB_TRACE_START_ITER", get("OVB_TRACE_START_ITER"), 0);
  c.iters = env_int("OVB_TRACE_ITERS", get("OVB_TRACE_ITERS"), 0);
  if (const char* m = get("OVB_TRACE_CAPTURE"); m && *m) {
    const std::string mode = m;
    if (mode == "time")
      c.mode = Mode::time;
    else if (mode == "range")
      c.mode = Mode::range;
    else if (mode == "profiler_api")
      c.mode = Mode::profiler_api;
    else
      throw Error("OVB_TRACE_CAPTURE='" + mode + "' is not one of time, range, profiler_api");
  }
  if (c.mode == Mode::range && c.range.empty())
    throw Error("OVB_TRACE_CAPTURE=range needs OVB_TRACE_RANGE (the NVTX range of one iteration)");
  return c;
}

std::string WindowConfig::describe() const {
  std::ostringstream os;
  switch (mode) {
    case Mode::explicit_calls: os << "between start() and stop()"; break;
    case Mode::profiler_api: os << "between cudaProfilerStart and cudaProfilerStop"; break;
    case Mode::range:
      os << "NVTX range '" << range << "' occurrences " << start_iter << " .. ";
      if (iters > 0)
        os << start_iter + iters - 1;
      else
        os << "exit";
      break;
    case Mode::time:
      os << "from " << start_s << " s after start ";
      if (duration_s > 0)
        os << "for " << duration_s << " s";
      else
        os << "to exit";
      break;
  }
  return os.str();
}

CaptureWindow::CaptureWindow(const WindowConfig& cfg, std::int64_t init_ns) : cfg_(cfg) {
  if (cfg_.mode == WindowConfig::Mode::time) {
    const std::int64_t b = init_ns + seconds_ns(cfg_.start_s);
    windows_.push_back({b, cfg_.duration_s > 0 ? b + seconds_ns(cfg_.duration_s) : kOpenEnd});
  }
}

void CaptureWindow::open_locked(std::int64_t t) {
  if (!windows_.empty() && windows_.back().second == kOpenEnd) return;  // already open
  windows_.push_back({t, kOpenEnd});
}

void CaptureWindow::close_locked(std::int64_t t) {
  if (!windows_.empty() && windows_.back().second == kOpenEnd) windows_.back().second = t;
}

void CaptureWindow::open(std::int64_t t) {
  std::lock_guard lock(mu_);
  if (cfg_.mode == WindowConfig::Mode::explicit_calls) open_locked(t);
}

void CaptureWindow::close(std::int64_t t) {
  std::lock_guard lock(mu_);
  if (cfg_.mode == WindowConfig::Mode::explicit_calls) close_locked(t);
}

void CaptureWindow::profiler_start(std::int64_t t) {
  std::lock_guard lock(mu_);
  if (cfg_.mode == WindowConfig::Mode::profiler_api) open_locked(t);
}

void CaptureWindow::profiler_stop(std::int64_t t) {
  std::lock_guard lock(mu_);
  if (cfg_.mode == WindowConfig::Mode::profiler_api) close_locked(t);
}

void CaptureWindow::range_push(std::string_view name, std::int64_t t) {
  if (cfg_.mode != WindowConfig::Mode::range || name != cfg_.range) return;
  std::lock_guard lock(mu_);
  if (occurrences_++ == cfg_.start_iter) open_locked(t);
}

void CaptureWindow::range_pop(std::string_view name, std::int64_t t) {
  if (cfg_.mode != WindowConfig::Mode::range || name != cfg_.range) return;
  std::lock_guard lock(mu_);
  if (++completed_ == cfg_.start_iter + cfg_.iters && cfg_.iters > 0) close_locked(t);
}

bool CaptureWindow::keeps(std::int64_t begin, std::int64_t end) const {
  std::lock_guard lock(mu_);
  // Few windows (usually one): a linear scan from the newest is the cheapest.
  for (auto it = windows_.rbegin(); it != windows_.rend(); ++it)
    if (begin <= it->second && end >= it->first) return true;
  return false;
}

std::vector<std::pair<std::int64_t, std::int64_t>> CaptureWindow::windows() const {
  std::lock_guard lock(mu_);
  return windows_;
}

}  // namespace ovb::trace
