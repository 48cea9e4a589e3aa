// Puts the events of one logical track (a stream, a communicator) on lanes - sub-tracks - so that
// events on one lane never overlap, which trace viewers require of a track. Feed events sorted by
// begin time: each goes to the first lane that is free by then (fewest lanes for sorted input).
#pragma once

#include <cstdint>
#include <vector>

namespace ovb::trace {

class LaneAllocator {
 public:
  int place(std::int64_t begin, std::int64_t end) {
    for (std::size_t i = 0; i < lane_end_.size(); ++i)
      if (lane_end_[i] <= begin) {
        lane_end_[i] = end;
        return static_cast<int>(i);
      }
    lane_end_.push_back(end);
    return static_cast<int>(lane_end_.size()) - 1;
  }
  int lanes() const { return static_cast<int>(lane_end_.size()); }

 private:
  std::vector<std::int64_t> lane_end_;
};

}  // namespace ovb::trace
