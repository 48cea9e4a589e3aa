// Tests of ovb-membw's pieces: the bytes each kernel class moves (mem_class_bytes' closed formulas
// against the sum over the class's buffers, and against hand-computed values), class names, and
// every host kernel checked clean against the double-precision reference, with an injected wrong
// element and a kernel run twice (state moved on) both caught. Run: ctest -R mb.unit.
#include <gtest/gtest.h>

#include <memory>

#include "membw/mem_layout.hpp"
#include "membw/mem_workload.hpp"
#include "ovb/error.hpp"
#include "ovb/mem_class.hpp"
#include "test_backend.hpp"

namespace ovb::mb {
namespace {

std::unique_ptr<Backend> host() {
  return test_backend("host");
}

TEST(MemClass, ClosedFormulasEqualTheSumOverTheBuffers) {
  for (MemClass c : kMemClasses)
    for (DType t : {DType::f32, DType::bf16})
      for (const auto& [n, row] :
           {std::pair<std::int64_t, std::int64_t>{4096, 64}, {1 << 20, 4096}, {3 * 50304, 50304}})
        EXPECT_EQ(mem_class_bytes(c, n, row, size_of(t)), layout_bytes(c, t, n, row))
            << name_of(c) << " " << name_of(t) << " n=" << n << " row=" << row;
}

TEST(MemClass, HandComputedBytes) {
  // 2 rows of 4096 fp32: x and y 32 KiB each, gamma and beta 16 KiB each, mean and rstd 16 B.
  EXPECT_EQ(mem_class_bytes(MemClass::layernorm, 8192, 4096, 4), 32768.0 * 2 + 16384 * 2 + 16);
  // AdamW in bf16: p, m, v read and written (24 B), the bf16 gradient read and the bf16 copy
  // of the weights written (4 B): 28 B per parameter.
  EXPECT_EQ(mem_class_bytes(MemClass::adamw, 1000, 10, 2), 28000.0);
  EXPECT_EQ(mem_class_bytes(MemClass::adamw, 1000, 10, 4), 28000.0);   // fp32 grad, no copy
  EXPECT_EQ(mem_class_bytes(MemClass::dropout, 1000, 10, 2), 5000.0);  // 2 + 2 + 1 mask
  EXPECT_EQ(mem_class_bytes(MemClass::swiglu, 1000, 10, 2), 6000.0);   // gate, up; y
  EXPECT_EQ(mem_class_bytes(MemClass::rope, 1000, 10, 4), 8000.0);     // x in place
  EXPECT_EQ(mem_class_bytes(MemClass::cross_entropy, 1000, 100, 2), 2080.0);
}

TEST(MemClass, NamesRoundTripAndUnknownNamesFail) {
  for (MemClass c : kMemClasses) EXPECT_EQ(parse_mem_class(name_of(c)), c);
  EXPECT_FALSE(find_mem_class("layer_norm"));
  try {
    parse_mem_class("layer_norm");
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(),
                 "unknown memory-bound kernel class 'layer_norm' (one of copy, layernorm, "
                 "rmsnorm, bias_gelu, swiglu, rope, dropout, residual, softmax, cross_entropy, adamw, "
                 "grad_accum)");
  }
}

TEST(MemWorkload, HostKernelsMatchTheReference) {
  auto b = host();
  auto s = b->create_stream();
  for (MemClass c : kMemClasses) {
    // 300 rows: more than the 256 checked one by one, so the spread-row path runs too.
    MemWorkload w(*b, c, DType::f32, 300 * 64, 64, std::size_t{1} << 30);
    w.run(*s);
    s->synchronize();
    EXPECT_EQ(w.check(false), 0) << name_of(c);
    EXPECT_GE(w.check(true), 1) << name_of(c) << ": injected error missed";
    EXPECT_EQ(w.bytes(), mem_class_bytes(c, 300 * 64, 64, 4));
  }
}

TEST(MemWorkload, StateThatMovedOnIsCaught) {
  // Updated in place: a second call is a second step, which the one-step reference rejects.
  auto b = host();
  auto s = b->create_stream();
  for (MemClass c : {MemClass::adamw, MemClass::grad_accum}) {
    MemWorkload w(*b, c, DType::f32, 4 * 64, 64, std::size_t{1} << 30);
    w.run(*s);
    w.run(*s);
    s->synchronize();
    EXPECT_GT(w.check(false), 0) << name_of(c);
  }
}

TEST(MemWorkload, RefusesWhatItCannotRun) {
  auto b = host();
  EXPECT_THROW(MemWorkload(*b, MemClass::copy, DType::bf16, 4096, 64, 1 << 30), UsageError);
  EXPECT_THROW(MemWorkload(*b, MemClass::softmax, DType::f32, 100, 64, 1 << 30), UsageError);
  EXPECT_THROW(MemWorkload(*b, MemClass::copy, DType::f32, 1 << 20, 64, 1000), UsageError);
}

}  // namespace
}  // namespace ovb::mb
