// Collective workloads behind one fixed interface, like nccl-tests: each kind (all_reduce.cpp,
// reduce_scatter.cpp, all_gather.cpp) fills a CollDef with its buffer sizes, in-place layout and
// expected result; CollWorkload allocates, fills exact inputs, runs and checks any of them.
// Adding a collective is one file plus one line in coll_defs().
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "harness/pattern.hpp"
#include "ovb/backend.hpp"

namespace ovb::mb {

// Send element j of rank q: a small non-negative integer, chosen so that the sum over n ranks is
// exact in dtype (bf16 holds integers up to 256, fp16 up to 2048, fp32 up to 2^24): values in
// [0, levels); with too many ranks for even 0/1 values, only rank j % n contributes (a 1).
struct CollInput {
  int n = 1;
  int levels = 4;
  bool one_contributor = false;
  static CollInput make(int n, DType t);
  float operator()(int q, std::size_t j) const {
    if (one_contributor) return static_cast<std::size_t>(q) == j % static_cast<std::size_t>(n);
    return static_cast<float>(small_int(j, static_cast<std::uint64_t>(q), levels));
  }
};

struct CollDef {
  CollKind kind;
  // S (bytes of the full buffer, docs/metrics.md) must be a multiple of elem * parts(n); the call's
  // count argument is then S / (elem * parts(n)).
  int (*parts)(int n);
  std::size_t (*send_elems)(std::size_t count, int n);
  std::size_t (*recv_elems)(std::size_t count, int n);
  // In place, one buffer of max(send, recv) elements: where send and recv start in it.
  std::size_t (*send_offset)(std::size_t count, int rank);
  std::size_t (*recv_offset)(std::size_t count, int rank);
  // Element i of rank's receive buffer after the call.
  float (*expected)(std::size_t i, std::size_t count, int rank, const CollInput& in);
};

const CollDef& all_reduce_def();
const CollDef& reduce_scatter_def();
const CollDef& all_gather_def();
// Every collective, and the one of a kind.
const std::vector<const CollDef*>& coll_defs();
const CollDef& coll_def(CollKind k);

// Memory for `comm`'s collectives: its symmetric window when its configuration asks for one
// (Communicator::allocate_window: CTA policy zero on NCCL >= 2.28), else the backend's. A
// collective call over `comm`.
Buffer allocate_collective_buffer(Backend& backend, Communicator& comm, std::size_t bytes);

class CollWorkload {
 public:
  // Throws UsageError when the backend lacks dtype t, S does not split into whole elements per
  // rank (the reason names both numbers), or the buffers would exceed max_bytes.
  CollWorkload(Backend& backend, Communicator& comm, const CollDef& def, DType t, std::size_t bytes,
               bool in_place, std::size_t max_bytes);
  // Enqueues one collective on s.
  void run(Stream& s);
  // After run() has completed: elements of the receive buffer that differ from the expected sums
  // (all of them up to 8M elements, else 8 evenly spread windows of 1M). With inject, the last
  // rank first overwrites one element. Returns this rank's count.
  std::int64_t check(bool inject);
  std::size_t bytes() const { return bytes_; }
  std::size_t count() const { return count_; }
  int ranks() const { return n_; }
  CollKind kind() const { return def_.kind; }

 private:
  Backend& backend_;
  Communicator& comm_;
  const CollDef& def_;
  DType type_;
  Storage storage_;
  std::size_t bytes_, count_;
  int n_, rank_;
  bool in_place_;
  CollInput input_;
  Buffer send_buf_, recv_buf_;  // in place: send_buf_ only
  void* send_ = nullptr;
  void* recv_ = nullptr;
  Buffer* recv_owner_ = nullptr;
  std::size_t recv_first_ = 0;  // element offset of the receive region in *recv_owner_
};

}  // namespace ovb::mb
