// The decomposition overlap scenario (dependent form): a GEMM and the collective of its output
// (all_reduce: GEMM+AR; reduce_scatter: GEMM+RS, as tensor parallelism's row-parallel layers) cut
// into --chunks pieces along M or N (--split); chunk i's collective, on the communication stream,
// waits for chunk i's GEMM, so one chunk's collective runs under the next chunk's GEMM (the
// pipelined overlap of Transformer Engine's userbuffers and PyTorch async-TP). chunks = 1 is the
// unchunked baseline. Every rank computes the same GEMM; the collective sums it over the group.
// --colls all_gather is the reverse pipeline, AG+GEMM (ag_gemm.cpp).
//   mpirun -np 4 ovb-overlap --backend host --scenarios decomposition --shapes 64x64x32
//          --colls all_reduce,reduce_scatter --chunks 1,2,4 --split m,n
//
// Layout: C holds the chunks one after another, each dense row-major (a split along M is then
// plain row-major C; along N, chunk q is the columns [q*n/c, (q+1)*n/c) of C, computed from its
// own packed copy of B's columns), so each chunk's collective is one contiguous call.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "harness/collective.hpp"
#include "harness/gemm_workload.hpp"
#include "harness/pattern.hpp"
#include "harness/sizes.hpp"
#include "ovb/annotate.hpp"
#include "ovb/error.hpp"
#include "overlap/decomposition.hpp"

namespace ovb::mb {
namespace {

// Why the point cannot run over `ranks` ranks, "" when it can.
std::string decomposition_problem(const OverlapPoint& p, int ranks) {
  const GemmShape& s = p.gcase.shape;
  const std::string scenario = "--scenarios decomposition: ";
  if (s.ta != Trans::n || s.tb != Trans::n)
    return scenario + "GEMM " + shape_text(s) + " is transposed; chunks need the nn layout";
  if (p.kind == CollKind::all_gather) {
    if (p.split != SplitAxis::m) return "";  // skipped with the reason (ag_gemm.cpp)
    if (s.m % (static_cast<std::int64_t>(ranks) * p.chunks) != 0)
      return scenario + "ranks x --chunks = " + std::to_string(ranks) + " x " +
             std::to_string(p.chunks) + " does not divide M = " + std::to_string(s.m) +
             " of GEMM " + shape_text(s) + " (all_gather: each rank's rows in chunks)";
    return "";
  }
  const std::int64_t dim = p.split == SplitAxis::m ? s.m : s.n;
  if (p.chunks < 1 || dim % p.chunks != 0)
    return scenario + "--chunks " + std::to_string(p.chunks) + " does not divide " +
           (p.split == SplitAxis::m ? "M" : "N") + " = " + std::to_string(dim) + " of GEMM " +
           shape_text(s);
  const std::int64_t elems = s.m * s.n / p.chunks;
  if (p.kind == CollKind::reduce_scatter && elems % ranks != 0)
    return scenario + "a chunk of " + std::to_string(elems) + " elements (GEMM " + shape_text(s) +
           ", --chunks " + std::to_string(p.chunks) + ") does not reduce-scatter evenly over " +
           std::to_string(ranks) + " ranks";
  return "";
}

class Decomposition : public PipelineOps {
 public:
  Decomposition(BenchEnv& env, Communicator& comm, const OverlapPoint& p)
      : backend_(env.backend()),
        comm_(comm),
        kind_(p.kind),
        type_(p.gemm_type),
        dtype_(p.coll_type),
        whole_(p.gcase.shape),
        chunks_(p.chunks),
        split_(p.split),
        range_{overlap_benchmark_name(p), "collective", std::string(name_of(p.kind)),
               p.group.name(), static_cast<std::int64_t>(p.bytes)} {
    const std::string problem = decomposition_problem(p, comm.size());  // checked at start too
    if (!problem.empty()) throw UsageError(problem);
    const auto m = static_cast<std::size_t>(whole_.m), n = static_cast<std::size_t>(whole_.n),
               k = static_cast<std::size_t>(whole_.k);
    chunk_ = whole_;
    (split_ == SplitAxis::m ? chunk_.m : chunk_.n) /= chunks_;
    elems_ = m * n / static_cast<std::size_t>(chunks_);
    const Storage in = input_storage(type_), out = output_storage(type_);
    // A, B, B packed by chunk (split along N only), C, the whole GEMM's C, the collective's result.
    const std::size_t packed = split_ == SplitAxis::n ? k * n : 0;
    const std::size_t need = (m * k + k * n + packed) * size_of(in) + 3 * m * n * size_of(out);
    check_pipeline_fits(env, type_, dtype_, whole_, need);
    chunk_plan_ = env.gemm().plan(chunk_, type_, 1, sm_target(p));
    whole_plan_ = env.gemm().plan(whole_, type_, 1, sm_target(p));
    a_ = backend_.allocate(m * k * size_of(in));
    b_ = backend_.allocate(k * n * size_of(in));
    fill(backend_, a_, in, 0, m * k, gemm_a_value);
    fill(backend_, b_, in, 0, k * n, gemm_b_value);
    if (split_ == SplitAxis::n) {
      const std::size_t nc = n / static_cast<std::size_t>(chunks_);
      b_packed_ = backend_.allocate(packed * size_of(in));
      fill(backend_, b_packed_, in, 0, packed, [&](std::size_t idx) {
        const std::size_t q = idx / (k * nc), r = idx % (k * nc);
        return gemm_b_value((r / nc) * n + q * nc + r % nc);
      });
    }
    c_ = allocate_collective_buffer(backend_, comm_, m * n * size_of(out));
    c_whole_ = backend_.allocate(m * n * size_of(out));
    result_ = allocate_collective_buffer(backend_, comm_, m * n * size_of(out));
    backend_.memset_zero(c_);
    backend_.memset_zero(result_);
  }

  int chunks() const override { return chunks_; }
  // Chunk i's A rows (split along M) or packed B columns (along N), into chunk i of C.
  void compute_chunk(Stream& s, int i) override {
    const auto q = static_cast<std::size_t>(i);
    const std::size_t in = size_of(input_storage(type_));
    const auto k = static_cast<std::size_t>(whole_.k);
    const char* a = a_.as<const char>();
    const char* b = b_.as<const char>();
    if (split_ == SplitAxis::m)
      a += q * static_cast<std::size_t>(chunk_.m) * k * in;
    else
      b = b_packed_.as<const char>() + q * k * static_cast<std::size_t>(chunk_.n) * in;
    chunk_plan_->run(s, a, b, c_.as<char>() + q * elems_ * out_size());
  }
  // Every launch inside a "collective" range, as gemm_coll's.
  void comm_chunk(Stream& s, int i) override {
    ScopedRange r(range_);
    collective(s, c_.as<char>() + static_cast<std::size_t>(i) * elems_ * out_size(),
               result_.as<char>() + static_cast<std::size_t>(i) * result_elems(elems_) * out_size(),
               elems_);
  }
  void compute_whole(Stream& s) override {
    whole_plan_->run(s, a_.data(), b_.data(), c_whole_.data());
  }
  void comm_whole(Stream& s) override {
    ScopedRange r(range_);
    collective(s, c_.data(), result_.data(), elems_ * static_cast<std::size_t>(chunks_));
  }
  int ranks() const override { return comm_.size(); }
  const RangeInfo& comm_range() const override { return range_; }

  // The result against the unchunked computation, evaluated exactly: element (i, j) of the
  // reduced C is n * C[i,j], C[i,j] the integer sum GemmWorkload::reference. Cutting along M or N
  // only chooses which rows or columns a GEMM call computes, never the order of any element's sum
  // over k, so each chunk's C[i,j] is what the unchunked GEMM gives, within the same output
  // rounding (gemm_output_tolerance). Every rank holds that same value, and the collective adds
  // the n copies per element in an order of the library's choosing (ring or tree, chosen per
  // message size, so a chunk's order may differ from the whole call's): n - 1 additions, each
  // rounding by at most one unit roundoff u of the collective's type, give a relative error of at
  // most (n - 1) * u on top. For fp32 sums of integers below 2^24 both terms are exact (0).
  std::int64_t check(bool inject) override {
    const Storage out = output_storage(type_);
    const std::size_t total = result_elems(elems_) * static_cast<std::size_t>(chunks_);
    const std::vector<std::int64_t> at =
        check_points(static_cast<std::int64_t>(total), 4096, 1024, 107);
    const double n = comm_.size();
    if (inject) {
      const double ref = n * static_cast<double>(exact(0));
      poke(backend_, result_, out, 0, static_cast<float>(ref + std::max(8.0, std::fabs(ref))));
    }
    const double tol = reduced_tolerance(out, dtype_, comm_.size());
    std::int64_t wrong = 0;
    for (const std::int64_t i : at) {
      const auto e = static_cast<std::size_t>(i);
      const double ref = n * static_cast<double>(exact(e));
      const double got = read(backend_, result_, out, e, 1)[0];
      if (!(std::fabs(got - ref) <= tol * std::fabs(ref))) ++wrong;
    }
    return wrong;
  }

 private:
  std::size_t out_size() const { return size_of(output_storage(type_)); }
  // Elements of this rank's result of a collective over `elems` elements.
  std::size_t result_elems(std::size_t elems) const {
    return kind_ == CollKind::reduce_scatter ? elems / static_cast<std::size_t>(comm_.size())
                                             : elems;
  }
  void collective(Stream& s, const void* send, void* recv, std::size_t elems) {
    if (kind_ == CollKind::all_reduce)
      comm_.all_reduce(send, recv, elems, dtype_, s);
    else
      comm_.reduce_scatter(send, recv, result_elems(elems), dtype_, s);
  }
  // The exact unchunked C[i,j] behind element e of this rank's result: chunk q = e / (its share
  // of a chunk), then the element within the chunk (reduce_scatter: this rank's part of it), then
  // (i, j) by the chunk's place in C.
  std::int64_t exact(std::size_t e) const {
    const std::size_t share = result_elems(elems_);
    const std::size_t q = e / share;
    std::size_t local = e % share;
    if (kind_ == CollKind::reduce_scatter) local += static_cast<std::size_t>(comm_.rank()) * share;
    const auto cols = static_cast<std::size_t>(chunk_.n);
    std::size_t i = local / cols, j = local % cols;
    if (split_ == SplitAxis::m)
      i += q * static_cast<std::size_t>(chunk_.m);
    else
      j += q * cols;
    return GemmWorkload::reference(whole_, static_cast<std::int64_t>(i),
                                   static_cast<std::int64_t>(j));
  }

  Backend& backend_;
  Communicator& comm_;
  CollKind kind_;
  GemmType type_;
  DType dtype_;
  GemmShape whole_, chunk_;
  int chunks_;
  SplitAxis split_;
  std::size_t elems_ = 0;  // of one chunk of C
  std::unique_ptr<GemmPlan> chunk_plan_, whole_plan_;
  Buffer a_, b_, b_packed_, c_, c_whole_, result_;
  RangeInfo range_;
};

}  // namespace

void check_pipeline_fits(BenchEnv& env, GemmType t, DType coll, const GemmShape& s,
                         std::size_t need) {
  if (const std::string why = env.gemm().unsupported(t); !why.empty()) throw UsageError(why);
  if (!env.backend().supports(coll))
    throw UsageError("the " + std::string(env.backend().name()) + " backend has no " +
                     std::string(name_of(coll)) + " collectives");
  if (need > env.memory_budget())
    throw UsageError("decomposition of " + shape_text(s) + " needs " + human_bytes(need) +
                     ", more than this rank's share of memory (" +
                     human_bytes(env.memory_budget()) + ")");
}

std::size_t pipeline_bytes(const OverlapPoint& p) {
  const GemmShape& s = p.gcase.shape;
  if (p.kind == CollKind::all_gather)
    return static_cast<std::size_t>(s.m * s.k) * size_of(input_storage(p.gemm_type));
  return static_cast<std::size_t>(s.m * s.n) * size_of(output_storage(p.gemm_type));
}

double reduced_tolerance(Storage out, DType t, int n) {
  const double u = t == DType::f32 ? 0 : std::ldexp(1.0, t == DType::bf16 ? -8 : -11);
  return gemm_output_tolerance(out) + (n - 1) * u;
}

namespace {

std::unique_ptr<OverlapOps> make_decomposition(BenchEnv& env, Communicator& comm,
                                               const OverlapPoint& p) {
  if (p.kind == CollKind::all_gather) return make_ag_gemm(env, comm, p);
  return std::make_unique<Decomposition>(env, comm, p);
}

}  // namespace

OVB_OVERLAP_PIPELINE_SCENARIO(decomposition, "a GEMM and its collective in dependent chunks",
                              make_decomposition, decomposition_problem, pipeline_bytes);

}  // namespace ovb::mb
