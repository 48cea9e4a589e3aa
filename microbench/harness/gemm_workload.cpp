// GEMM workload: buffers, exact inputs, plan and check (see gemm_workload.hpp).
#include "harness/gemm_workload.hpp"

#include <cmath>
#include <string>
#include <vector>

#include "harness/sizes.hpp"
#include "ovb/error.hpp"

namespace ovb::mb {

float gemm_a_value(std::uint64_t idx) {
  return static_cast<float>(small_int(idx, 11, 3) - 1);
}
float gemm_b_value(std::uint64_t idx) {
  return static_cast<float>(small_int(idx, 23, 3) - 1);
}

std::string_view name_of(GemmInputs i) {
  return kGemmInputNames.at(static_cast<std::size_t>(i));
}

GemmInputs parse_gemm_inputs(std::string_view s) {
  std::string all;
  for (std::size_t i = 0; i < kGemmInputNames.size(); ++i) {
    if (s == kGemmInputNames[i]) return static_cast<GemmInputs>(i);
    all += (i ? ", " : "") + kGemmInputNames[i];
  }
  throw UsageError("GEMM inputs '" + std::string(s) + "' is not one of " + all);
}

float gemm_random_value(std::uint64_t idx, std::uint64_t seed, Storage s) {
  if (s == Storage::e4m3) return static_cast<float>(small_int(idx, seed, 15) - 7) / 4;
  return static_cast<float>(small_int(idx, seed, 255) - 127) / 64;
}

double gemm_output_tolerance(Storage out) {
  switch (out) {
    case Storage::f16: return std::ldexp(1.0, -9);
    case Storage::bf16: return std::ldexp(1.0, -6);
    default: return 0;
  }
}

namespace {

// Storage index of logical A(i, kk) and B(kk, j) (row-major, transposes as in GemmShape).
std::uint64_t a_index(const GemmShape& s, std::int64_t i, std::int64_t kk) {
  return static_cast<std::uint64_t>(s.ta == Trans::n ? i * s.k + kk : kk * s.m + i);
}
std::uint64_t b_index(const GemmShape& s, std::int64_t kk, std::int64_t j) {
  return static_cast<std::uint64_t>(s.tb == Trans::n ? kk * s.n + j : j * s.k + kk);
}

}  // namespace

std::int64_t GemmWorkload::reference(const GemmShape& s, std::int64_t i, std::int64_t j) {
  std::int64_t sum = 0;
  for (std::int64_t kk = 0; kk < s.k; ++kk)
    sum += static_cast<std::int64_t>(gemm_a_value(a_index(s, i, kk))) *
           static_cast<std::int64_t>(gemm_b_value(b_index(s, kk, j)));
  return sum;
}

GemmReference gemm_reference(const GemmShape& s, std::int64_t i, std::int64_t j, GemmInputs in,
                             Storage storage) {
  GemmReference r;
  if (in == GemmInputs::exact) {
    r.value = static_cast<double>(GemmWorkload::reference(s, i, j));
    return r;
  }
  for (std::int64_t kk = 0; kk < s.k; ++kk) {
    const double p = static_cast<double>(gemm_random_value(a_index(s, i, kk), 11, storage)) *
                     static_cast<double>(gemm_random_value(b_index(s, kk, j), 23, storage));
    r.value += p;  // multiples of 2^-12 below 2^40: every partial sum exact in double
    r.abs_sum += std::fabs(p);
  }
  return r;
}

double gemm_check_tolerance(const GemmReference& r, std::int64_t k, GemmInputs in, Storage out) {
  const double ku = static_cast<double>(k) * std::ldexp(1.0, -24);
  const double accumulation = in == GemmInputs::exact ? 0 : ku / (1 - ku) * r.abs_sum;
  return accumulation + gemm_output_tolerance(out) * (std::fabs(r.value) + accumulation);
}

GemmWorkload::GemmWorkload(Backend& backend, Gemm& gemm, const GemmShape& shape, GemmType t,
                           int max_algos, std::size_t max_bytes, int sm_target, GemmInputs inputs)
    : backend_(backend), shape_(shape), type_(t), inputs_(inputs) {
  if (shape.m < 1 || shape.n < 1 || shape.k < 1)
    throw UsageError("GEMM sizes must be positive, got " + std::to_string(shape.m) + "x" +
                     std::to_string(shape.n) + "x" + std::to_string(shape.k));
  if (const std::string why = gemm.unsupported(t); !why.empty()) throw UsageError(why);
  const auto m = static_cast<std::size_t>(shape.m), n = static_cast<std::size_t>(shape.n),
             k = static_cast<std::size_t>(shape.k);
  const Storage in = input_storage(t), out = output_storage(t);
  const std::size_t need = (m * k + k * n) * size_of(in) + m * n * size_of(out);
  if (need > max_bytes)
    throw UsageError("GEMM " + std::to_string(m) + "x" + std::to_string(n) + "x" +
                     std::to_string(k) + " " + std::string(name_of(t)) + " needs " +
                     human_bytes(need) + ", more than this rank's share of memory (" +
                     human_bytes(max_bytes) + ")");
  plan_ = gemm.plan(shape, t, max_algos, sm_target);
  a_ = backend.allocate(m * k * size_of(in));
  b_ = backend.allocate(k * n * size_of(in));
  c_ = backend.allocate(m * n * size_of(out));
  if (inputs == GemmInputs::random) {
    fill(backend, a_, in, 0, m * k, [in](std::uint64_t i) { return gemm_random_value(i, 11, in); });
    fill(backend, b_, in, 0, k * n, [in](std::uint64_t i) { return gemm_random_value(i, 23, in); });
  } else {
    fill(backend, a_, in, 0, m * k, gemm_a_value);
    fill(backend, b_, in, 0, k * n, gemm_b_value);
  }
  backend.memset_zero(c_);
}

std::int64_t GemmWorkload::check(bool inject) {
  const Storage out = output_storage(type_);
  const std::int64_t m = shape_.m, n = shape_.n;
  std::vector<std::pair<std::int64_t, std::int64_t>> at;
  if (m * n <= 4096) {
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j) at.emplace_back(i, j);
  } else {
    at = {{0, 0}, {m - 1, n - 1}};
    for (std::uint64_t p = 0; p < 1024; ++p)
      at.emplace_back(small_int(p, 101, static_cast<int>(std::min<std::int64_t>(m, 1 << 30))),
                      small_int(p, 103, static_cast<int>(std::min<std::int64_t>(n, 1 << 30))));
  }
  const Storage in = input_storage(type_);
  if (inject) {
    const GemmReference r = gemm_reference(shape_, 0, 0, inputs_, in);
    const double tol = gemm_check_tolerance(r, shape_.k, inputs_, out);
    poke(backend_, c_, out, 0,
         static_cast<float>(r.value + std::max(8.0, std::fabs(r.value)) + 2 * tol));
  }
  std::int64_t wrong = 0;
  for (const auto& [i, j] : at) {
    const GemmReference r = gemm_reference(shape_, i, j, inputs_, in);
    const double got = read(backend_, c_, out, static_cast<std::size_t>(i * n + j), 1)[0];
    if (!(std::fabs(got - r.value) <= gemm_check_tolerance(r, shape_.k, inputs_, out))) ++wrong;
  }
  return wrong;
}

}  // namespace ovb::mb
