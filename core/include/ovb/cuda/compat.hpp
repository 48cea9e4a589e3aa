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

}  // namespace ovb::cuda
