// Version differences between CUDA / NCCL releases, in one place, not as #if spread through the code.
#pragma once

#include <nccl.h>

#include "ovb/backend.hpp"

namespace ovb::cuda {

// Copies the CommConfig knobs that this NCCL supports into an ncclConfig_t.
inline void apply_comm_config(const CommConfig& cfg, ncclConfig_t& nc) {
  if (cfg.min_ctas > 0) nc.minCTAs = cfg.min_ctas;
  if (cfg.max_ctas > 0) nc.maxCTAs = cfg.max_ctas;
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 27, 0)
  if (cfg.cta_policy >= 0) nc.CTAPolicy = cfg.cta_policy;
#endif
}

inline constexpr bool kNcclHasCtaPolicy = NCCL_VERSION_CODE >= NCCL_VERSION(2, 27, 0);
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 27, 0)
static_assert(kCtaPolicyZero == NCCL_CTA_POLICY_ZERO);
#endif

// Copy-engine collectives need the zero-SM CTA policy and buffers registered as symmetric windows
// (NCCL 2.28: ncclMemAlloc'd, ncclCommWindowRegister with NCCL_WIN_COLL_SYMMETRIC).
inline constexpr bool kNcclHasSymmetricWindows = NCCL_VERSION_CODE >= NCCL_VERSION(2, 28, 0);

// An ncclMemAlloc'd buffer registered as a symmetric window of `comm`, deregistered and freed by
// the Buffer's deleter; an empty Buffer on an NCCL without windows, or (after a warning line) when
// allocation or registration fails: the caller then allocates as usual and the transport it
// observes says what NCCL did. Collective over the communicator.
Buffer allocate_symmetric_window(ncclComm_t comm, std::size_t bytes);

}  // namespace ovb::cuda
