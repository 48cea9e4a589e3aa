// A checked memory-bound kernel (see mem_workload.hpp).
#include "membw/mem_workload.hpp"

#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "harness/pattern.hpp"
#include "harness/sizes.hpp"
#include "membw/mem_reference.hpp"
#include "ovb/error.hpp"

namespace ovb::mb {

namespace {
// Element i of a host array in the buffer's format, as double.
double decode_elem(Elem e, DType t, const unsigned char* p, std::size_t i) {
  switch (e) {
    case Elem::act: return load_host(p, t, i);
    case Elem::f32: return load_host(p, DType::f32, i);
    case Elem::u8: return p[i];
    case Elem::i32: {
      std::int32_t v;
      std::memcpy(&v, p + 4 * i, 4);
      return v;
    }
  }
  return 0;
}

void encode_elem(Elem e, DType t, unsigned char* p, std::size_t i, double v) {
  switch (e) {
    case Elem::act: return store_host(p, t, i, static_cast<float>(v));
    case Elem::f32: return store_host(p, DType::f32, i, static_cast<float>(v));
    case Elem::u8: p[i] = static_cast<unsigned char>(v); return;
    case Elem::i32: {
      const auto x = static_cast<std::int32_t>(v);
      std::memcpy(p + 4 * i, &x, 4);
      return;
    }
  }
}

// First element of row r's slice of a buffer, and the slice's length.
std::pair<std::int64_t, std::int64_t> row_slice(Extent x, std::int64_t r, std::int64_t row) {
  switch (x) {
    case Extent::elements: return {r * row, row};
    case Extent::rows: return {r, 1};
    case Extent::rows2: return {2 * r, 2};
    case Extent::row: return {0, row};
  }
  return {0, 0};
}
}  // namespace

MemWorkload::MemWorkload(Backend& backend, MemClass c, DType t, std::int64_t n, std::int64_t row,
                         std::size_t max_bytes)
    : backend_(backend), cuda_(backend.name() == "cuda"), layout_(mem_layout(c, t)) {
  const std::string what = std::string(name_of(c)) + " " + std::string(name_of(t));
  if (!cuda_ && t != DType::f32)
    throw UsageError("the host backend runs fp32 memory-bound kernels only, not " +
                     std::string(name_of(t)));
  if (n < row || n % row != 0)
    throw UsageError(what + ": " + std::to_string(n) + " elements are not whole rows of " +
                     std::to_string(row));
  if (c == MemClass::rope && row % 2 != 0)
    throw UsageError(what + ": rope turns pairs of elements: --row must be even, got " +
                     std::to_string(row));
  std::size_t need = 0;
  for (const MemBuf& b : layout_)
    need += static_cast<std::size_t>(extent_elements(b.extent, n, row)) * elem_bytes(b.elem, t);
  if (need > max_bytes)
    throw UsageError(what + " of " + std::to_string(n) + " elements needs " + human_bytes(need) +
                     ", more than this rank's share of memory (" + human_bytes(max_bytes) + ")");
  args_ = MemArgs{c, t, n, row, {}};
  for (std::size_t b = 0; b < layout_.size(); ++b) {
    const MemBuf& mb = layout_[b];
    const std::int64_t count = extent_elements(mb.extent, n, row);
    const std::size_t eb = elem_bytes(mb.elem, t);
    bufs_.push_back(backend.allocate(static_cast<std::size_t>(count) * eb));
    args_.buf[b] = bufs_.back().data();
    // Outputs start as NaN (the mask as 0xFF): a kernel that skips an element is caught.
    const bool input = mb.access != Access::out;
    const std::int64_t chunk = std::min<std::int64_t>(count, 1 << 20);
    std::vector<unsigned char> host(static_cast<std::size_t>(chunk) * eb);
    for (std::int64_t done = 0; done < count; done += chunk) {
      const std::int64_t k = std::min(chunk, count - done);
      for (std::int64_t j = 0; j < k; ++j) {
        const double v =
            input ? mem_input(c, static_cast<int>(b), static_cast<std::uint64_t>(done + j), row)
            : mb.elem == Elem::u8 ? 255.0
                                  : std::numeric_limits<double>::quiet_NaN();
        encode_elem(mb.elem, t, host.data(), static_cast<std::size_t>(j), v);
      }
      backend.upload(bufs_.back(), host.data(), static_cast<std::size_t>(k) * eb,
                     static_cast<std::size_t>(done) * eb);
    }
  }
}

void MemWorkload::run(Stream& s) {
  if (cuda_)
    run_cuda_mem_kernel(args_, s.native());
  else
    run_host_mem_kernel(args_);
}

double MemWorkload::bytes() const {
  return mem_class_bytes(args_.c, args_.n, args_.row, size_of(args_.t));
}

std::int64_t MemWorkload::check(bool inject) {
  const std::int64_t rows = args_.n / args_.row;
  const std::vector<std::int64_t> at = check_points(rows, 256, 254, 41);
  std::int64_t wrong = 0;
  bool injected = !inject;
  for (const std::int64_t r : at) {
    const auto ref = mem_reference_row(args_.c, args_.t, r, args_.row);
    for (std::size_t b = 0; b < layout_.size(); ++b) {
      const MemBuf& mb = layout_[b];
      if (mb.access == Access::in) continue;
      const auto [first, count] = row_slice(mb.extent, r, args_.row);
      const std::size_t eb = elem_bytes(mb.elem, args_.t);
      std::vector<unsigned char> host(static_cast<std::size_t>(count) * eb);
      backend_.download(host.data(), bufs_[b], host.size(), static_cast<std::size_t>(first) * eb);
      if (!injected) {  // the first output element checked, moved by 1 + its size
        const double v = decode_elem(mb.elem, args_.t, host.data(), 0);
        encode_elem(mb.elem, args_.t, host.data(), 0,
                    mb.elem == Elem::u8 ? 7 : v + 1 + std::fabs(v));
        injected = true;
      }
      const double tol = mem_tolerance(args_.c, mb.elem, args_.t, args_.row);
      for (std::int64_t j = 0; j < count; ++j) {
        const double got = decode_elem(mb.elem, args_.t, host.data(), static_cast<std::size_t>(j));
        const double want = ref[b][static_cast<std::size_t>(j)];
        if (!(std::fabs(got - want) <= tol * std::max(std::fabs(want), 0.125))) ++wrong;
      }
    }
  }
  return wrong;
}

}  // namespace ovb::mb
