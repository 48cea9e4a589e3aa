// A small cuBLASLt front end for gpt4d's GEMMs: mixed input/output types (bf16 inputs with an
// fp32 weight gradient), fused epilogues (bias; GELU with the pre-activation kept as the aux
// output; the GELU gradient from that aux; the bias gradient of B), a cache of descriptors and
// heuristic choices per shape, and pointer alignment passed
// to the heuristic so an algorithm never assumes more alignment than the buffers have.
// Autotuning (--gemm-autotune N > 1): a shape's first call times the heuristic's first N
// algorithms on the caller's stream (one untimed call each, then kAutotuneReps timed together
// between two events; the stream is synchronised) and keeps the fastest for the rest of the run;
// every candidate computes the same GEMM (beta = 0, outputs overwritten), so the last call's
// results are the ones the caller asked for. The choice depends on timing, so two runs may pick
// different algorithms (results equal within the GEMM's rounding, not bit for bit).
// Column-major terms, as cuBLASLt: D[m,n] = op(A)[m,k] op(B)[k,n] (+ bias[m]).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "ovb/backend.hpp"
#include "ovb/tracked_memory.hpp"

namespace ovb::gpt::cuda {

struct LtOp {
  std::int64_t m = 0, n = 0, k = 0;
  bool ta = false, tb = false;  // op(A) = A^T, op(B) = B^T
  std::int64_t lda = 0, ldb = 0, ldd = 0;
  DType a = DType::bf16, b = DType::bf16, d = DType::bf16;
  const void* bias = nullptr;     // [m] in type d (BIAS epilogue)
  void* aux = nullptr;            // GELU epilogue: aux[m,n] (ld ldd) receives the pre-activation
  const void* gelu_in = nullptr;  // DGELU epilogue: D = gelu'(gelu_in) * op(A) op(B); [m,n], ld ldd
  void* bias_grad = nullptr;      // BGRADB epilogue: bias_grad[j] = sum over k of op(B)[:, j],
                                  // [n] in type d (overwritten)
};

class LtMatmul {
 public:
  // autotune: candidates timed per shape (0 or 1: the heuristic's first, untimed).
  LtMatmul(Backend& backend, TrackedMemory* mem, int autotune = 0);
  ~LtMatmul();
  // Enqueues the GEMM; throws Error when cuBLASLt has no algorithm for it.
  void run(Stream& s, const LtOp& op, const void* A, const void* B, void* D);
  // The same, returning false (and enqueuing nothing) when there is no algorithm, e.g. for an
  // epilogue this cuBLASLt does not offer with these types.
  bool try_run(Stream& s, const LtOp& op, const void* A, const void* B, void* D);
  std::string description() const;

 private:
  struct Plan;
  struct Key {
    std::int64_t m, n, k, lda, ldb, ldd;
    int ta, tb, a, b, d, epilogue, align;
    auto operator<=>(const Key&) const = default;
  };
  Plan* plan(const Key& key);  // nullptr when cuBLASLt has no algorithm (remembered)
  // Enqueues the GEMM with the plan's chosen algorithm (its pointers already set).
  void launch(Stream& s, const Plan& p, const void* A, const void* B, void* D);
  // Times the plan's candidates on s and keeps the fastest (autotuning, first call of a shape).
  void tune(Stream& s, Plan& p, const void* A, const void* B, void* D);

  void* handle_ = nullptr;  // cublasLtHandle_t
  Buffer workspace_;
  std::map<Key, std::unique_ptr<Plan>> plans_;
  int autotune_ = 0;
  int retuned_ = 0;  // shapes where autotuning kept another algorithm than the heuristic's first
};

inline constexpr int kAutotuneReps = 3;  // timed calls per candidate (--gemm-autotune)

}  // namespace ovb::gpt::cuda
