// Requested and observed transports of ovb-overlap points (see transport.hpp).
#include "overlap/transport.hpp"

#include <mpi.h>

#include <algorithm>
#include <iostream>
#include <iterator>

#include "harness/ranks.hpp"
#include "ovb/annotate.hpp"
#include "ovb/error.hpp"

namespace ovb::mb {

namespace {
const std::string kWords[] = {"mpi", "nccl-sm", "nccl-ce", "ce-ipc", "unknown"};

std::string word_of(Backend::Engines e) {
  switch (e) {
    case Backend::Engines::cpu: return "mpi";
    case Backend::Engines::kernels: return "nccl-sm";
    case Backend::Engines::copies: return "nccl-ce";
    case Backend::Engines::unknown: return "unknown";
  }
  return "unknown";
}
}  // namespace

std::string_view name_of(Exchange e) {
  return e == Exchange::send_recv ? "send_recv" : "copy_engine";
}

std::string backend_problem(const Backend& b, int gemm_sms, bool ring, Exchange e) {
  if (b.name() != "host") return "";
  if (gemm_sms > 0)
    return "--gemm-sms " + std::to_string(gemm_sms) +
           ": the host backend's GEMM (OpenBLAS) has no SMs to budget; use --gemm-sms default";
  if (ring && e == Exchange::copy_engine)
    return "--exchange copy_engine: the host backend has no copy engine (CUDA only); use "
           "--exchange send_recv";
  return "";
}

std::string requested_transport(const Backend& b, bool ring, Exchange e, int cta_policy) {
  if (b.name() == "host") return "mpi";
  if (ring) return e == Exchange::copy_engine ? "ce-ipc" : "nccl-sm";
  return cta_policy == kCtaPolicyZero ? "nccl-ce" : "nccl-sm";
}

std::string observe_transport(BenchEnv& env, OverlapOps& ops, Stream& s) {
  std::string seen = ops.transport_by_construction();
  if (seen.empty()) {
    // The observation captures comm() and launches the graph after comm()'s own range has closed:
    // the launch gets the same range, so that its kernels too carry the collective's kind and
    // group.
    ScopedRange r(ops.comm_range());
    seen = word_of(env.backend().observe_engines(s, [&] { ops.comm(s); }));
  }
  env.backend().synchronize();
  // Agreed: every rank saw the same word, else unknown.
  const auto at = std::find(std::begin(kWords), std::end(kWords), seen);
  double mine = static_cast<double>(at - std::begin(kWords));
  double range[2] = {mine, -mine};
  max_over_ranks(range, 2);
  return range[0] == -range[1] ? seen : "unknown";
}

void settle_transport(const std::string& benchmark, bool require, const std::string& requested,
                      const std::string& observed) {
  if (observed == requested) return;
  const std::string what =
      benchmark + ": transport " + requested + " requested, " + observed +
      (observed == "unknown" ? " (it could not be observed)" : " observed (the library fell back)");
  if (require) throw Error(what + " (--require-transport)");
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) std::cerr << "warning: " << what << std::endl;
}

}  // namespace ovb::mb
