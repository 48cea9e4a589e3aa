// The table of strategies (see strategy.hpp). Adding a strategy: its file
// src/strategy_<name>.cpp defining a `const Strategy`, declared and listed below, and the file in
// analysis/model/CMakeLists.txt.
#include "ovb/model/strategy.hpp"

#include "ovb/error.hpp"

namespace ovb::model {

extern const Strategy kStrategy4d;        // strategy_4d.cpp
extern const Strategy kStrategyMegatron;  // strategy_megatron.cpp

const std::vector<const Strategy*>& strategies() {
  static const std::vector<const Strategy*> table = {&kStrategy4d, &kStrategyMegatron};
  return table;
}

std::string strategy_names(const std::string& last) {
  std::vector<std::string> names;
  for (const Strategy* s : strategies()) names.push_back(s->name);
  if (!last.empty()) names.push_back(last);
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i)
    out += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  return out;
}

const Strategy& strategy(std::string_view name) {
  for (const Strategy* s : strategies())
    if (name == s->name) return *s;
  throw UsageError("unknown strategy '" + std::string(name) + "': " + strategy_names());
}

}  // namespace ovb::model
