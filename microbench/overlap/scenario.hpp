// Overlap scenarios: what ovb-overlap puts on its two streams. A scenario is one file that builds,
// for one sweep point, the work of the compute stream and of the communication stream with their
// correctness check, and registers itself with one line:
//
//   OVB_OVERLAP_SCENARIO(gemm_coll, "a GEMM and a collective", make_gemm_coll);
//
// (plus its file in microbench/CMakeLists.txt). The harness (overlap_bench.hpp) times each stream's
// work alone and both together, and derives the overlap metrics; the sweep's axes select the
// scenarios (--scenarios) and their parameters.
//
// Two forms: independent (OverlapOps: the two streams' work does not depend on each other) and
// dependent (PipelineOps: the work is cut into chunks, and chunk i's communication waits, through
// an event, for chunk i's compute), registered with OVB_OVERLAP_PIPELINE_SCENARIO; a dependent
// scenario is swept over --chunks and --split as well. A sequential scenario
// (OVB_OVERLAP_SEQUENTIAL_SCENARIO, host only) runs its compute and then its communication on one
// stream and waits: what a blocking collective after compute costs (blocking_wait.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "harness/env.hpp"
#include "ovb/annotate.hpp"  // RangeInfo
#include "ovb/metrics.hpp"   // kDefaultOverlapScenario

namespace ovb::mb {

struct OverlapPoint;

// The two streams' work at one point; allocated once per benchmark, run many times.
class OverlapOps {
 public:
  virtual ~OverlapOps() = default;
  virtual void compute(Stream& s) = 0;
  virtual void comm(Stream& s) = 0;
  // After both have completed: wrong elements on this rank (inject: corrupt one first, tests).
  virtual std::int64_t check(bool inject) = 0;
  // Ranks taking part in the communication (the "ranks" counter).
  virtual int ranks() const = 0;
  // The transport, when the scenario's own code fixes it ("ce-ipc": only cudaMemcpyAsync between
  // mapped peers); "" when it is observed (transport.hpp).
  virtual std::string transport_by_construction() const { return ""; }
  // The "collective" range (kind, group, bytes) every comm() launch runs in, so that a trace joins
  // the kernels to them; work launched later on comm()'s behalf (the transport observation's
  // captured graph) runs in it too.
  virtual const RangeInfo& comm_range() const = 0;
};

// The dependent form: compute() and comm() run every chunk's work back to back (each stream's work
// alone); the harness runs the pipeline itself, chunk by chunk, with an event between the streams.
class PipelineOps : public OverlapOps {
 public:
  virtual int chunks() const = 0;
  // false: chunk i's communication waits for chunk i's compute (GEMM+RS); true: the reverse
  // (AG+GEMM: chunk i's GEMM waits for chunk i's gather).
  virtual bool comm_feeds_compute() const { return false; }
  virtual void compute_chunk(Stream& s, int i) = 0;
  virtual void comm_chunk(Stream& s, int i) = 0;
  // The unchunked GEMM and collective alone: the baseline of the pipeline metrics.
  virtual void compute_whole(Stream& s) = 0;
  virtual void comm_whole(Stream& s) = 0;
  void compute(Stream& s) override {
    for (int i = 0; i < chunks(); ++i) compute_chunk(s, i);
  }
  void comm(Stream& s) override {
    for (int i = 0; i < chunks(); ++i) comm_chunk(s, i);
  }
};

struct OverlapScenario {
  std::string name;  // the --scenarios word
  std::string about;
  // May throw UsageError (the benchmark is then skipped with the reason, on every rank). A
  // dependent scenario's make returns a PipelineOps.
  std::unique_ptr<OverlapOps> (*make)(BenchEnv&, Communicator&, const OverlapPoint&);
  bool dependent = false;
  // Dependent scenarios: why the point cannot run over `ranks` ranks ("" when it can), checked
  // before anything runs, so that bad input is one error (e.g. --chunks not dividing M).
  std::string (*problem)(const OverlapPoint&, int ranks) = nullptr;
  // Dependent scenarios: the collective's S in bytes, which follows from the GEMM (--sizes does
  // not apply).
  std::size_t (*bytes)(const OverlapPoint&) = nullptr;
  // Dependent scenarios: one chunk per rank of the group, split along M (a ring exchange); --chunks
  // and --split do not apply.
  bool chunk_per_rank = false;
  // Sequential scenarios: compute, then the communication on the same stream, waited for; timed
  // by run_wait_point (blocking_wait.hpp) instead of the overlap harness. Host backend only.
  bool sequential = false;
};

// The gemm_coll scenario's work: the point's GEMM and its collective (what blocking_wait runs
// one after the other).
std::unique_ptr<OverlapOps> make_gemm_coll(BenchEnv& env, Communicator& comm,
                                           const OverlapPoint& p);

// The registered scenarios, sorted by name.
const std::vector<OverlapScenario>& overlap_scenarios();

// The scenario whose benchmark names carry no scenario part (the first one ovb-overlap had, whose
// names result files already use); a label always names its scenario ("scenario=gemm_coll").
inline constexpr const char* kDefaultScenario = metrics::kDefaultOverlapScenario;

struct ScenarioRegistration {
  explicit ScenarioRegistration(OverlapScenario s);
};

}  // namespace ovb::mb

#define OVB_OVERLAP_SCENARIO(id, about, make) \
  static const ::ovb::mb::ScenarioRegistration ovb_overlap_scenario_##id({#id, about, make})
#define OVB_OVERLAP_PIPELINE_SCENARIO(id, about, make, problem, bytes) \
  static const ::ovb::mb::ScenarioRegistration ovb_overlap_scenario_##id(            \
      {#id, about, make, true, problem, bytes})
#define OVB_OVERLAP_SEQUENTIAL_SCENARIO(id, about, make)                  \
  static const ::ovb::mb::ScenarioRegistration ovb_overlap_scenario_##id( \
      {#id, about, make, false, nullptr, nullptr, false, true})
#define OVB_OVERLAP_RING_SCENARIO(id, about, make, problem, bytes)        \
  static const ::ovb::mb::ScenarioRegistration ovb_overlap_scenario_##id( \
      {#id, about, make, true, problem, bytes, true})
