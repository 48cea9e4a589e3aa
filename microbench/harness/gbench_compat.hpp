// Google Benchmark's run record across its versions: a benchmark skipped with SkipWithError is
// error_occurred/error_message before 1.8 and skipped/skip_message from 1.8 on (Debian 12 ships
// 1.7.1, the GPU machine 1.8). Overload resolution picks the member the installed version has.
#pragma once

#include <string>

namespace ovb::mb {

namespace gbench_detail {
template <class R>
auto skipped(const R& run, int) -> decltype(run.error_occurred, bool()) {
  return run.error_occurred;
}
template <class R>
bool skipped(const R& run, long) {
  return static_cast<int>(run.skipped) != 0;
}
template <class R>
auto skip_message(const R& run, int) -> decltype(run.error_message, std::string()) {
  return run.error_message;
}
template <class R>
std::string skip_message(const R& run, long) {
  return run.skip_message;
}
}  // namespace gbench_detail

// Whether the run was skipped (with an error or a message), and why.
template <class R>
bool run_skipped(const R& run) {
  return gbench_detail::skipped(run, 0);
}
template <class R>
std::string run_skip_message(const R& run) {
  return gbench_detail::skip_message(run, 0);
}

}  // namespace ovb::mb
