// The collective watchdog's timeout and poll loop (see ovb/watchdog.hpp).
#include "ovb/watchdog.hpp"

#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <thread>

#include "ovb/error.hpp"

namespace ovb {

double parse_comm_timeout(const char* value) {
  if (!value || !*value) return 0;
  const char* end = value + std::strlen(value);
  double s = 0;
  const auto [ptr, ec] = std::from_chars(value, end, s);  // no locale, no leading blanks or '+'
  if (ec != std::errc() || ptr != end || !std::isfinite(s) || s < 0)
    throw UsageError(std::string(kCommTimeoutVar) + "='" + value +
                     "' is not a number of seconds >= 0 (0 or unset: no collective watchdog)");
  return s;
}

double comm_timeout_s() {
  // A throw leaves it uninitialised, so every backend created reports the bad value again.
  static const double timeout = parse_comm_timeout(std::getenv(kCommTimeoutVar));
  return timeout;
}

std::string watchdog_message(std::string_view what, double timeout_s) {
  std::ostringstream os;
  os << "collective watchdog: " << what << " did not complete within " << timeout_s << " s ("
     << kCommTimeoutVar << "); communicators aborted";
  return os.str();
}

void poll_until(const std::function<bool()>& done, std::string_view what, double timeout_s,
                const std::function<void(const std::string&)>& on_timeout) {
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  const auto limit =
      start + std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(timeout_s));
  while (!done()) {
    const auto now = clock::now();
    if (now >= limit) {
      const std::string message = watchdog_message(what, timeout_s);
      on_timeout(message);
      throw Error(message);
    }
    // Spin (as MPI_Wait and cudaEventSynchronize do) while the wait is short, so completion is seen
    // at once; then sleep, so that a long wait leaves the core to ranks sharing it.
    if (now - start < std::chrono::milliseconds(10))
      std::this_thread::yield();
    else
      std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

}  // namespace ovb
