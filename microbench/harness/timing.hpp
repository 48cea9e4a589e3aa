// Timing of enqueued work with backend events (CUDA events on GPU, MPI_Wtime on host): the time
// from a start event to a stop event on one stream, as Google Benchmark's manual time needs.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "ovb/backend.hpp"

namespace ovb::mb {

class StreamTimer {
 public:
  explicit StreamTimer(Backend& b) : start_(b.create_event()), stop_(b.create_event()) {}
  // Seconds per op of `inner` back-to-back calls of op() enqueued on s (waits for them).
  template <class F>
  double seconds(Stream& s, int inner, F&& op) {
    start_->record(s);
    for (int i = 0; i < inner; ++i) op();
    stop_->record(s);
    return stop_->elapsed_ms(*start_) / 1e3 / inner;
  }

 private:
  std::unique_ptr<Event> start_, stop_;
};

// Median of v (v is reordered).
inline double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

// Running mean.
struct Mean {
  double sum = 0;
  std::int64_t n = 0;
  void add(double v) {
    sum += v;
    ++n;
  }
  double value() const { return n ? sum / static_cast<double>(n) : 0.0; }
};

}  // namespace ovb::mb
