// GEMM on a backend, in row-major terms: C[m,n] = alpha * op(A)[m,k] * op(B)[k,n] + beta * C,
// A, B, C dense row-major, fp32 accumulation. Host: OpenBLAS (fp32). CUDA: cuBLASLt (fp32, tf32,
// fp16, bf16, fp8 e4m3 on sm_89+), which is column-major, so it computes C^T = op(B)^T op(A)^T.
//
// Two ways to call it:
//  - plan(shape, type) once, then GemmPlan::run() per call: descriptors, layouts and the algorithm
//    are prepared once, so a timed call is one library call (cublasLtMatmul). Plans can keep the
//    top-k heuristic algorithms and switch between them (autotuning; see microbench/).
//  - run(stream, shape, dtype, ...): convenience; plans are cached per (shape, dtype) inside the
//    Gemm, so repeated calls cost one map lookup plus the library call.
// Plans of one Gemm share its workspace: run them on one stream at a time (one Gemm per stream
// for concurrent GEMMs).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "ovb/backend.hpp"
#include "ovb/error.hpp"

namespace ovb {

enum class Trans { n, t };

struct GemmShape {
  std::int64_t m = 0, n = 0, k = 0;
  Trans ta = Trans::n;  // op(A) = A ([m,k]) or A^T (A stored [k,m])
  Trans tb = Trans::n;  // op(B) = B ([k,n]) or B^T (B stored [n,k])
  bool operator==(const GemmShape&) const = default;
};

// "4096x4096x4096" or "4096x1024x512:nt" (transposes of A and B: n or t, default nn); a one-line
// UsageError otherwise.
GemmShape parse_gemm_shape(std::string_view s);
// "4096x1024x512:nt".
std::string shape_text(const GemmShape& s);

// Precision of a GEMM: storage of A/B/C and the math. The names equal the precision names of
// metrics::peak_tflops, so a type's peak is peak_tflops(device, name_of(type)).
//  fp32: fp32 storage, fp32 math      tf32: fp32 storage, TF32 tensor-core math
//  fp16, bf16: 16-bit storage, fp32 accumulation
//  fp8: A, B in fp8 e4m3, C in bf16, fp32 accumulation (cuBLASLt on sm_89+ only)
enum class GemmType { fp32, tf32, fp16, bf16, fp8 };

inline std::string_view name_of(GemmType t) {
  switch (t) {
    case GemmType::fp32: return "fp32";
    case GemmType::tf32: return "tf32";
    case GemmType::fp16: return "fp16";
    case GemmType::bf16: return "bf16";
    case GemmType::fp8: return "fp8";
  }
  return "?";
}

// "fp32", "tf32", "fp16", "bf16", "fp8" (also "f32", "f16", "e4m3"); throws UsageError otherwise.
inline GemmType parse_gemm_type(std::string_view s) {
  if (s == "fp32" || s == "f32") return GemmType::fp32;
  if (s == "tf32") return GemmType::tf32;
  if (s == "fp16" || s == "f16") return GemmType::fp16;
  if (s == "bf16") return GemmType::bf16;
  if (s == "fp8" || s == "e4m3") return GemmType::fp8;
  throw UsageError("unknown GEMM type '" + std::string(s) +
                   "' (expected fp32, tf32, fp16, bf16 or fp8)");
}

// Bytes of one element of A and B, and of C.
inline std::size_t input_bytes(GemmType t) {
  return t == GemmType::fp8 ? 1 : (t == GemmType::fp16 || t == GemmType::bf16) ? 2 : 4;
}
inline std::size_t output_bytes(GemmType t) {
  return (t == GemmType::fp32 || t == GemmType::tf32) ? 4 : 2;
}
// Element type of C as a DType (fp8 GEMMs write bf16).
inline DType output_dtype(GemmType t) {
  switch (t) {
    case GemmType::fp32:
    case GemmType::tf32: return DType::f32;
    case GemmType::fp16: return DType::f16;
    case GemmType::bf16:
    case GemmType::fp8: return DType::bf16;
  }
  return DType::f32;
}

// One GEMM prepared for repeated calls with any buffers of its shape and type.
class GemmPlan {
 public:
  virtual ~GemmPlan() = default;
  // Enqueues the GEMM on s.
  virtual void run(Stream& s, const void* a, const void* b, void* c, float alpha = 1.0f,
                   float beta = 0.0f) = 0;
  // Algorithms kept for this GEMM (cuBLASLt heuristic order, best guess first); 1 on host.
  virtual int algo_count() const = 0;
  // Index in that order that run() uses: 0 (the heuristic's choice) until set_algo; -1 on host.
  virtual int algo() const = 0;
  // Throws Error for an index outside [0, algo_count()).
  virtual void set_algo(int index) = 0;
  // E.g. "openblas sgemm", "cublasLt bf16 algo 2 of 8 (id 66, tile 20, stages 16, split-k 1)".
  virtual std::string description() const = 0;
};

class Gemm {
 public:
  virtual ~Gemm() = default;
  virtual bool supports(DType t) const = 0;
  // Why `t` cannot run here (dtype support, GPU architecture), or "" when it can.
  virtual std::string unsupported(GemmType t) const = 0;
  // Prepares a GEMM, keeping up to max_algos heuristic candidates. Throws UsageError when the type
  // is unsupported or the library has no algorithm for this shape (e.g. fp8 needs ta=n, tb=t).
  // sm_target > 0: the GEMM's SM budget (cuBLASLt's CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET, which
  // picks algorithms and grids for that many SMs, leaving the rest to a concurrent stream); 0: the
  // device's count. The host GEMM has no SMs: UsageError for sm_target > 0.
  virtual std::unique_ptr<GemmPlan> plan(const GemmShape& shape, GemmType t, int max_algos = 1,
                                         int sm_target = 0) = 0;
  // Enqueues the GEMM on s through a cached plan (fp32 dtype runs as tf32 on CUDA, fp32 on host).
  // Throws UsageError for an unsupported dtype.
  virtual void run(Stream& s, const GemmShape& shape, DType t, const void* a, const void* b,
                   void* c, float alpha = 1.0f, float beta = 0.0f) = 0;
  // What ran last (e.g. "openblas sgemm", "cublasLt ... algo 0 ..."), for result files.
  virtual std::string description() const = 0;
};

// The backend's GEMM: OpenBLAS for "host", cuBLASLt for "cuda".
std::unique_ptr<Gemm> make_gemm(Backend& backend);

}  // namespace ovb
