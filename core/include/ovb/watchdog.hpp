// The collective watchdog: a host-side wait that can block on a collective (an event, a stream,
// the device, an MPI request) polls instead of blocking, and gives up after OVB_COMM_TIMEOUT_S
// seconds, the way PyTorch's NCCL watchdog (the process group's timeout) does, so that a hung
// collective ends the job with one line instead of burning its allocation silently.
//
//   OVB_COMM_TIMEOUT_S=300 mpirun -np 8 gpt4d ...   # seconds, fractions allowed
//
// Unset or 0: off (the default), and every wait blocks in the library as before, so timed paths do
// not change. On a timeout the backend aborts every live communicator it created (ncclCommAbort;
// on the host backend MPI_Abort, which ends the job, so it first prints the line itself) and throws
// ovb::Error("collective watchdog: <what> did not complete within N s (OVB_COMM_TIMEOUT_S);
// communicators aborted"), which ovb::run_main prints as one line before exiting non-zero. The CUDA
// backend's polls also check ncclCommGetAsyncError of its communicators: an asynchronous NCCL
// error aborts them and throws at once. The timeout runs from the start of each wait. Not covered:
// a call that blocks inside NCCL itself (e.g. ncclAllReduce connecting to peers at its first use
// with a peer missing); the Slurm driver's stall limit still ends those. Used by
// core/src/host_backend.cpp and core/src/cuda/cuda_backend.cpp; tested by
// core/tests/test_watchdog.cpp and, under mpirun, watchdog_hang.cpp via expect_fail_within.sh.
#pragma once

#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace ovb {

inline constexpr const char* kCommTimeoutVar = "OVB_COMM_TIMEOUT_S";

// Seconds from a value of OVB_COMM_TIMEOUT_S; nullptr (unset), "" and "0" give 0 (off). Anything
// but a finite number >= 0 throws UsageError naming the variable.
double parse_comm_timeout(const char* value);

// The process's OVB_COMM_TIMEOUT_S, read and parsed on the first call (backends call it when
// created, so a malformed value is reported before any work).
double comm_timeout_s();

// "collective watchdog: <what> did not complete within <timeout> s (OVB_COMM_TIMEOUT_S);
// communicators aborted".
std::string watchdog_message(std::string_view what, double timeout_s);

// Calls done() until it returns true (yielding, then sleeping briefly between calls; done() may
// throw, e.g. on an asynchronous communicator error). When timeout_s passes first: calls
// on_timeout(watchdog_message(what, timeout_s)) and, if that returns, throws Error with it.
void poll_until(const std::function<bool()>& done, std::string_view what, double timeout_s,
                const std::function<void(const std::string&)>& on_timeout);

// The live objects of one backend (communicators, CUDA streams): they add themselves when created
// and remove themselves when destroyed, so the watchdog reaches all of them. Thread-safe.
template <class T>
class LiveSet {
 public:
  void add(T* p) {
    std::lock_guard lock(mutex_);
    items_.push_back(p);
  }
  void remove(T* p) {
    std::lock_guard lock(mutex_);
    std::erase(items_, p);
  }
  std::vector<T*> snapshot() const {
    std::lock_guard lock(mutex_);
    return items_;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<T*> items_;
};

// abort() on every live communicator of `comms` (the host backend's MPI_Abort does not return).
template <class Comm>
void abort_all(const LiveSet<Comm>& comms) {
  for (Comm* c : comms.snapshot()) c->abort();
}

}  // namespace ovb
