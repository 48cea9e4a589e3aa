// GEMM on a backend, in row-major terms: C[m,n] = alpha * op(A)[m,k] * op(B)[k,n] + beta * C,
// A, B, C dense row-major of element type t, fp32 accumulation. Host: OpenBLAS (fp32). CUDA:
// cuBLASLt (bf16, fp16, fp32/tf32), which is column-major, so it computes C^T = op(B)^T op(A)^T.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "ovb/backend.hpp"

namespace ovb {

enum class Trans { n, t };

struct GemmShape {
  std::int64_t m = 0, n = 0, k = 0;
  Trans ta = Trans::n;  // op(A) = A ([m,k]) or A^T (A stored [k,m])
  Trans tb = Trans::n;  // op(B) = B ([k,n]) or B^T (B stored [n,k])
};

class Gemm {
 public:
  virtual ~Gemm() = default;
  virtual bool supports(DType t) const = 0;
  // Enqueues the GEMM on s. Throws UsageError for an unsupported dtype.
  virtual void run(Stream& s, const GemmShape& shape, DType t, const void* a, const void* b,
                   void* c, float alpha = 1.0f, float beta = 0.0f) = 0;
  // What ran last (e.g. "openblas sgemm", "cublasLt heuristic 0"), for result files.
  virtual std::string description() const = 0;
};

// The backend's GEMM: OpenBLAS for "host", cuBLASLt for "cuda".
std::unique_ptr<Gemm> make_gemm(Backend& backend);

}  // namespace ovb
