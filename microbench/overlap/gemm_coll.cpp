// The gemm_coll overlap scenario: the point's GEMM on the compute stream and its collective (over
// the point's group, in the GEMM's output type) on the communication stream, as in tensor-parallel
// training, where a layer's GEMM runs while the previous layer's all-reduce, reduce-scatter or
// all-gather is in flight.
#include "harness/collective.hpp"
#include "harness/gemm_workload.hpp"
#include "ovb/annotate.hpp"
#include "overlap/overlap_bench.hpp"
#include "overlap/scenario.hpp"

namespace ovb::mb {
namespace {

class GemmColl : public OverlapOps {
 public:
  GemmColl(BenchEnv& env, Communicator& comm, const OverlapPoint& p)
      : gemm_(env.backend(), env.gemm(), p.gcase.shape, p.gemm_type, 1, env.memory_budget() / 2,
              sm_target(p)),
        coll_(env.backend(), comm, coll_def(p.kind), p.coll_type, p.bytes, false,
              env.memory_budget() / 2),
        range_{overlap_benchmark_name(p), "collective", std::string(name_of(p.kind)),
               p.group.name(), static_cast<std::int64_t>(p.bytes)} {}
  void compute(Stream& s) override { gemm_.run(s); }
  // Every launch inside a "collective" range, so that a trace joins its kernels to the kind, group
  // and bytes (as ovb-collective and gpt4d do).
  void comm(Stream& s) override {
    ScopedRange r(range_);
    coll_.run(s);
  }
  std::int64_t check(bool inject) override { return gemm_.check(inject) + coll_.check(inject); }
  int ranks() const override { return coll_.ranks(); }
  const RangeInfo& comm_range() const override { return range_; }

 private:
  GemmWorkload gemm_;
  CollWorkload coll_;
  RangeInfo range_;
};

}  // namespace

std::unique_ptr<OverlapOps> make_gemm_coll(BenchEnv& env, Communicator& comm,
                                           const OverlapPoint& p) {
  return std::make_unique<GemmColl>(env, comm, p);
}

OVB_OVERLAP_SCENARIO(gemm_coll, "a GEMM and a collective", make_gemm_coll);

}  // namespace ovb::mb
