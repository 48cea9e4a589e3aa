// The bounds check every backend's upload and download make before copying (inside the backends
// only: callers see the Error it throws).
#pragma once

#include <cstddef>

#include "ovb/backend.hpp"

namespace ovb {

// Throws Error when `bytes` at `offset` would overrun `b`.
void check_copy_range(const Buffer& b, std::size_t bytes, std::size_t offset);

}  // namespace ovb
