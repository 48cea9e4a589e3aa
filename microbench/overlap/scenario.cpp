// The registry of overlap scenarios (see scenario.hpp).
#include "overlap/scenario.hpp"

#include <algorithm>

namespace ovb::mb {

namespace {
// A function-local list: scenario files register during static initialisation, in any order.
std::vector<OverlapScenario>& registry() {
  static std::vector<OverlapScenario> list;
  return list;
}
}  // namespace

ScenarioRegistration::ScenarioRegistration(OverlapScenario s) {
  std::vector<OverlapScenario>& r = registry();
  r.push_back(std::move(s));
  std::sort(r.begin(), r.end(),
            [](const OverlapScenario& a, const OverlapScenario& b) { return a.name < b.name; });
}

const std::vector<OverlapScenario>& overlap_scenarios() {
  return registry();
}

}  // namespace ovb::mb
