// The transport of an ovb-overlap point: how its communication moves data, requested (from the
// point's settings) and observed (from what ran). One word per transport:
//   mpi      host backend: MPI (collectives or point-to-point)
//   nccl-sm  NCCL kernels on SMs (collectives, ncclSend/ncclRecv)
//   nccl-ce  NCCL copy-engine collectives: no kernel (CTA policy zero on symmetric windows)
//   ce-ipc   cudaMemcpyAsync between peer buffers mapped with CUDA IPC (ring --exchange
//            copy_engine): by construction
//   unknown  the communication could not be observed (its CUDA graph capture failed)
// Observed from one run of the communication captured into a CUDA graph (Backend::observe_engines):
// a kernel node means SMs, copy nodes alone a copy engine; the ranks must agree, else unknown.
#pragma once

#include <string>

#include <string_view>

#include "harness/env.hpp"
#include "overlap/scenario.hpp"

namespace ovb::mb {

// How a ring step moves its shard to the neighbour: send_recv (Communicator::send_recv: MPI on
// host, ncclSend/ncclRecv kernels on CUDA), copy_engine (CUDA IPC and cudaMemcpyAsync, no SM).
enum class Exchange { send_recv, copy_engine };
std::string_view name_of(Exchange e);

// Why the point's axes have no meaning on this backend ("" when they do): on host a GEMM SM
// budget (--gemm-sms) and a copy-engine ring (--exchange copy_engine) are rejected with one line
// naming the option (the older NCCL CTA knobs stay accepted and ignored there).
std::string backend_problem(const Backend& b, int gemm_sms, bool ring, Exchange e);

// What a point asks for: mpi on host; ce-ipc for a copy-engine ring; nccl-ce with CTA policy
// zero (kCtaPolicyZero); else nccl-sm.
std::string requested_transport(const Backend& b, bool ring, Exchange e, int cta_policy);

// Runs `ops`' communication once on `s` (alone, untimed) and says which transport it used, agreed
// over the ranks of the world. A collective call.
std::string observe_transport(BenchEnv& env, OverlapOps& ops, Stream& s);

// observed != requested: with `require` an Error naming both, else (rank 0) a one-line warning;
// the result file records both either way.
void settle_transport(const std::string& benchmark, bool require, const std::string& requested,
                      const std::string& observed);

}  // namespace ovb::mb
