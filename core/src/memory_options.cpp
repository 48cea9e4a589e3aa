// The memory-shaping options of a GPT plan (see ovb/memory_options.hpp).
#include "ovb/memory_options.hpp"

#include <limits>

#include "ovb/cli.hpp"

namespace ovb {

void MemoryOptions::apply(GptPlanOptions& o) const {
  o.cache_weights = cache_weights;
  o.ors_window = ors_window;
}

MemoryOptions MemoryOptions::of(const GptPlanOptions& o) {
  MemoryOptions m;
  m.cache_weights = o.cache_weights;
  m.ors_window = o.ors_window;
  return m;
}

nlohmann::json MemoryOptions::to_json() const {
  return {{"cache_weights", cache_weights}, {"ors_window", ors_window}};
}

MemoryOptions MemoryOptions::from_json(const nlohmann::json& j) {
  MemoryOptions m;
  m.cache_weights = j.value("cache_weights", m.cache_weights);
  m.ors_window = j.value("ors_window", std::numeric_limits<int>::max());
  return m;
}

void add_memory_options(CLI::App& app, MemoryOptions& opts) {
  app.add_flag("--cache-weights,!--no-cache-weights", opts.cache_weights,
               "Keep the Z-gathered weight blocks from forward to backward (one block per layer "
               "in memory) instead of gathering them again (default: gather again)");
  app.add_option("--ors-window", opts.ors_window,
                 "With --overlap ors: dW blocks whose Z reduce-scatter may be in flight at once; "
                 "the memory of the dW ring is this many blocks of the largest layer")
      ->check(positive())
      ->capture_default_str();
}

}  // namespace ovb
