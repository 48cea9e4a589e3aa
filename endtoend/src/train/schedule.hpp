// Learning-rate schedule: linear warm-up over --warmup-iters (lr * (i+1) / warmup), then cosine
// decay from lr to --min-lr at --lr-decay-iters, min-lr after.
#pragma once

#include <algorithm>
#include <cmath>

#include "config.hpp"

namespace ovb::gpt {

inline double learning_rate(const OptimConfig& o, int iter) {
  if (iter < o.lr_warmup_iters) return o.lr * (iter + 1) / o.lr_warmup_iters;
  if (iter >= o.lr_decay_iters) return o.min_lr;
  const double span = std::max(1, o.lr_decay_iters - o.lr_warmup_iters);
  const double progress = (iter - o.lr_warmup_iters) / span;
  return o.min_lr + 0.5 * (o.lr - o.min_lr) * (1.0 + std::cos(3.141592653589793 * progress));
}

}  // namespace ovb::gpt
