// Overlap scenarios: what ovb-overlap puts on its two streams. A scenario is one file that builds,
// for one sweep point, the work of the compute stream and of the communication stream with their
// correctness check, and registers itself with one line:
//
//   OVB_OVERLAP_SCENARIO(gemm_coll, "a GEMM and a collective", make_gemm_coll);
//
// (plus its file in microbench/CMakeLists.txt). The harness (overlap_bench.hpp) times each stream's
// work alone and both together, and derives the overlap metrics; the sweep's axes select the
// scenarios (--scenarios) and their parameters.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "harness/env.hpp"
#include "ovb/metrics.hpp"  // kDefaultOverlapScenario

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
};

struct OverlapScenario {
  std::string name;  // the --scenarios word
  std::string about;
  // May throw UsageError (the benchmark is then skipped with the reason, on every rank).
  std::unique_ptr<OverlapOps> (*make)(BenchEnv&, Communicator&, const OverlapPoint&);
};

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
