// Collective workloads: the list of kinds, exact inputs, run and check (see collective.hpp).
#include "harness/collective.hpp"

#include <algorithm>

#include "harness/sizes.hpp"
#include "ovb/error.hpp"

namespace ovb::mb {

namespace {
// Never a sum of non-negative inputs: marks receive elements the collective did not write.
constexpr float kSentinel = -3.0f;
constexpr std::size_t kWindow = 1u << 20;
constexpr std::size_t kWindows = 8;

}  // namespace

CollInput CollInput::make(int n, DType t) {
  const int exact = t == DType::bf16 ? 256 : t == DType::f16 ? 2048 : (1 << 24);
  CollInput in;
  in.n = n;
  in.levels = std::min(4, exact / std::max(n, 1) + 1);
  in.one_contributor = in.levels < 2;
  return in;
}

const std::vector<const CollDef*>& coll_defs() {
  static const std::vector<const CollDef*> defs{&all_reduce_def(), &reduce_scatter_def(),
                                                &all_gather_def()};
  return defs;
}

const CollDef& coll_def(CollKind k) {
  for (const CollDef* d : coll_defs())
    if (d->kind == k) return *d;
  throw Error("no collective definition for " + std::string(name_of(k)));
}

Buffer allocate_collective_buffer(Backend& backend, Communicator& comm, std::size_t bytes) {
  Buffer window = comm.allocate_window(bytes);
  return window.data() ? std::move(window) : backend.allocate(bytes);
}

CollWorkload::CollWorkload(Backend& backend, Communicator& comm, const CollDef& def, DType t,
                           std::size_t bytes, bool in_place, std::size_t max_bytes)
    : backend_(backend),
      comm_(comm),
      def_(def),
      type_(t),
      storage_(storage_of(t)),
      bytes_(bytes),
      n_(comm.size()),
      rank_(comm.rank()),
      in_place_(in_place),
      input_(CollInput::make(comm.size(), t)) {
  if (!backend.supports(t))
    throw UsageError("the " + std::string(backend.name()) + " backend has no " +
                     std::string(name_of(t)) + " collectives");
  const std::size_t elem = size_of(t);
  const std::size_t unit = elem * static_cast<std::size_t>(def.parts(n_));
  if (bytes == 0 || bytes % unit != 0)
    throw UsageError("size " + std::to_string(bytes) + " B is not a multiple of " +
                     std::to_string(def.parts(n_)) + " rank(s) x " + std::to_string(elem) + " B (" +
                     std::string(name_of(t)) + ")");
  count_ = bytes / unit;
  const std::size_t send_n = def.send_elems(count_, n_), recv_n = def.recv_elems(count_, n_);
  const std::size_t need = (in_place ? std::max(send_n, recv_n) : send_n + recv_n) * elem;
  if (need > max_bytes)
    throw UsageError(std::string(name_of(def.kind)) + " of " + std::to_string(bytes) + " B needs " +
                     human_bytes(need) + " per rank, more than its share of device memory (" +
                     human_bytes(max_bytes) + ")");

  const std::size_t send_off = in_place ? def.send_offset(count_, rank_) : 0;
  auto input = [&](std::size_t i) {
    return i >= send_off && i < send_off + send_n ? input_(rank_, i - send_off) : kSentinel;
  };
  if (in_place) {
    const std::size_t total = std::max(send_n, recv_n);
    send_buf_ = allocate_collective_buffer(backend, comm, total * elem);
    fill(backend, send_buf_, storage_, 0, total, input);
    recv_owner_ = &send_buf_;
    recv_first_ = def.recv_offset(count_, rank_);
  } else {
    send_buf_ = allocate_collective_buffer(backend, comm, send_n * elem);
    recv_buf_ = allocate_collective_buffer(backend, comm, recv_n * elem);
    fill(backend, send_buf_, storage_, 0, send_n, input);
    fill(backend, recv_buf_, storage_, 0, recv_n, [](std::size_t) { return kSentinel; });
    recv_owner_ = &recv_buf_;
    recv_first_ = 0;
  }
  send_ = static_cast<char*>(send_buf_.data()) + send_off * elem;
  recv_ = static_cast<char*>(recv_owner_->data()) + recv_first_ * elem;
}

void CollWorkload::run(Stream& s) {
  comm_.run(def_.kind, send_, recv_, count_, type_, s);
}

std::int64_t CollWorkload::check(bool inject) {
  const std::size_t recv_n = def_.recv_elems(count_, n_);
  if (inject && rank_ == n_ - 1) poke(backend_, *recv_owner_, storage_, recv_first_, kSentinel);
  std::vector<std::size_t> starts;
  std::size_t window = recv_n;
  if (recv_n <= kWindows * kWindow) {
    starts.push_back(0);
  } else {
    window = kWindow;
    for (std::size_t w = 0; w < kWindows; ++w)
      starts.push_back(w * (recv_n - kWindow) / (kWindows - 1));
  }
  std::int64_t wrong = 0;
  for (std::size_t start : starts) {
    for (std::size_t done = 0; done < window; done += kWindow) {
      const std::size_t len = std::min(kWindow, window - done);
      const std::vector<float> got =
          read(backend_, *recv_owner_, storage_, recv_first_ + start + done, len);
      for (std::size_t j = 0; j < len; ++j)
        if (got[j] != def_.expected(start + done + j, count_, rank_, input_)) ++wrong;
    }
  }
  return wrong;
}

}  // namespace ovb::mb
