// The decomposition scenario's AG+GEMM pipeline (--colls all_gather), as tensor parallelism's
// column-parallel layers with sequence parallelism: each rank holds M/n rows of A; the rows are
// all-gathered in --chunks pieces (split along M only: a split along N would need all of A
// first), and chunk i's GEMM, on the compute stream, waits for chunk i's gather.
//
// Layout: chunk i gathers piece i of every rank's shard (M/(n*chunks) rows each, rank after rank)
// into rows [i*M/chunks, (i+1)*M/chunks) of the gathered A, and its GEMM writes the same rows of
// C; so C's rows are a fixed permutation of the unchunked result's, undone by the check.
#include <algorithm>
#include <cmath>
#include <vector>

#include "harness/collective.hpp"
#include "harness/gemm_workload.hpp"
#include "harness/pattern.hpp"
#include "ovb/annotate.hpp"
#include "ovb/error.hpp"
#include "overlap/decomposition.hpp"

namespace ovb::mb {
namespace {

class AgGemm : public PipelineOps {
 public:
  AgGemm(BenchEnv& env, Communicator& comm, const OverlapPoint& p)
      : backend_(env.backend()),
        comm_(comm),
        type_(p.gemm_type),
        dtype_(gathered_dtype(p.gemm_type)),
        whole_(p.gcase.shape),
        chunks_(p.chunks),
        range_{overlap_benchmark_name(p), "collective", std::string(name_of(p.kind)),
               p.group.name(), static_cast<std::int64_t>(p.bytes)} {
    // A sweep over --split m,n meets this point: skipped, with the reason, not an error.
    if (p.split != SplitAxis::m)
      throw UsageError("all_gather (AG+GEMM) splits along m only: its GEMM needs all of A");
    const auto m = static_cast<std::size_t>(whole_.m), n = static_cast<std::size_t>(whole_.n),
               k = static_cast<std::size_t>(whole_.k);
    const auto ranks = static_cast<std::size_t>(comm.size());
    rows_piece_ = m / (ranks * static_cast<std::size_t>(chunks_));
    chunk_ = whole_;
    chunk_.m /= chunks_;
    const Storage in = input_storage(type_), out = output_storage(type_);
    // A's shard, the gathered A, B, C and the whole GEMM's C.
    const std::size_t need =
        (m / ranks * k + m * k + k * n) * size_of(in) + 2 * m * n * size_of(out);
    check_pipeline_fits(env, type_, dtype_, whole_, need);
    chunk_plan_ = env.gemm().plan(chunk_, type_, 1, sm_target(p));
    whole_plan_ = env.gemm().plan(whole_, type_, 1, sm_target(p));
    const std::size_t shard_rows = m / ranks,
                      first = static_cast<std::size_t>(comm.rank()) * shard_rows;
    shard_ = allocate_collective_buffer(backend_, comm_, shard_rows * k * size_of(in));
    gathered_ = allocate_collective_buffer(backend_, comm_, m * k * size_of(in));
    b_ = backend_.allocate(k * n * size_of(in));
    fill(backend_, shard_, in, 0, shard_rows * k,
         [&](std::size_t idx) { return gemm_a_value(first * k + idx); });
    fill(backend_, b_, in, 0, k * n, gemm_b_value);
    c_ = backend_.allocate(m * n * size_of(out));
    c_whole_ = backend_.allocate(m * n * size_of(out));
    backend_.memset_zero(gathered_);
    backend_.memset_zero(c_);
  }

  bool comm_feeds_compute() const override { return true; }
  int chunks() const override { return chunks_; }
  void compute_chunk(Stream& s, int i) override {
    const auto q = static_cast<std::size_t>(i) * static_cast<std::size_t>(chunk_.m);
    chunk_plan_->run(
        s, gathered_.as<const char>() + q * static_cast<std::size_t>(whole_.k) * in_size(),
        b_.data(), c_.as<char>() + q * static_cast<std::size_t>(whole_.n) * out_size());
  }
  // Every launch inside a "collective" range, as gemm_coll's.
  void comm_chunk(Stream& s, int i) override {
    ScopedRange r(range_);
    const auto q = static_cast<std::size_t>(i), k = static_cast<std::size_t>(whole_.k);
    comm_.all_gather(shard_.as<const char>() + q * rows_piece_ * k * in_size(),
                     gathered_.as<char>() + q * static_cast<std::size_t>(chunk_.m) * k * in_size(),
                     rows_piece_ * k, dtype_, s);
  }
  void compute_whole(Stream& s) override {
    whole_plan_->run(s, gathered_.data(), b_.data(), c_whole_.data());
  }
  void comm_whole(Stream& s) override {
    ScopedRange r(range_);
    comm_.all_gather(shard_.data(), gathered_.data(),
                     rows_piece_ * static_cast<std::size_t>(chunks_ * whole_.k), dtype_, s);
  }
  int ranks() const override { return comm_.size(); }
  const RangeInfo& comm_range() const override { return range_; }

  // C against the exact unchunked result GemmWorkload::reference: the gather moves A's values
  // (-1, 0, 1, exact in every type) unchanged, and cutting along M does not change any element's
  // sum over k, so the only allowed difference is the GEMM's output rounding.
  std::int64_t check(bool inject) override {
    const Storage out = output_storage(type_);
    const std::vector<std::int64_t> at = check_points(whole_.m * whole_.n, 4096, 1024, 109);
    if (inject) {
      const double ref = static_cast<double>(exact(0));
      poke(backend_, c_, out, 0, static_cast<float>(ref + std::max(8.0, std::fabs(ref))));
    }
    const double tol = gemm_output_tolerance(out);
    std::int64_t wrong = 0;
    for (const std::int64_t e : at) {
      const double ref = static_cast<double>(exact(e));
      const double got = read(backend_, c_, out, static_cast<std::size_t>(e), 1)[0];
      if (!(std::fabs(got - ref) <= tol * std::fabs(ref))) ++wrong;
    }
    return wrong;
  }

 private:
  std::size_t in_size() const { return size_of(input_storage(type_)); }
  std::size_t out_size() const { return size_of(output_storage(type_)); }
  // The exact C value behind element e of C: row t of chunk q came from rank t / rows_piece_'s
  // piece q.
  std::int64_t exact(std::int64_t e) const {
    const std::int64_t row = e / whole_.n, j = e % whole_.n;
    const std::int64_t q = row / chunk_.m, t = row % chunk_.m;
    const auto piece = static_cast<std::int64_t>(rows_piece_);
    const std::int64_t shard_rows = whole_.m / comm_.size();
    return GemmWorkload::reference(whole_, (t / piece) * shard_rows + q * piece + t % piece, j);
  }

  Backend& backend_;
  Communicator& comm_;
  GemmType type_;
  DType dtype_;
  GemmShape whole_, chunk_;
  int chunks_;
  std::size_t rows_piece_ = 0;  // rows of one rank's piece of one chunk
  std::unique_ptr<GemmPlan> chunk_plan_, whole_plan_;
  Buffer shard_, gathered_, b_, c_, c_whole_;
  RangeInfo range_;
};

}  // namespace

DType gathered_dtype(GemmType t) {
  switch (t) {
    case GemmType::fp16: return DType::f16;
    case GemmType::bf16: return DType::bf16;
    case GemmType::fp8: throw UsageError("--colls all_gather: fp8 inputs have no collective type");
    default: return DType::f32;
  }
}

std::unique_ptr<OverlapOps> make_ag_gemm(BenchEnv& env, Communicator& comm, const OverlapPoint& p) {
  return std::make_unique<AgGemm>(env, comm, p);
}

}  // namespace ovb::mb
