// Predicted and measured communication terms (see terms.hpp).
#include "terms.hpp"

#include "ovb/model/stats.hpp"

namespace ovb::model::detail {

using nlohmann::json;

std::string group_name(std::string g) {
  return g == "z-allgather" ? "z" : g;
}

double num(const json& j, const char* key, double dflt) {
  return j.contains(key) && j[key].is_number() ? j[key].get<double>() : dflt;
}

json error_or_null(double predicted, double measured) {
  return measured > 0 ? json(error_pct(predicted, measured)) : json(nullptr);
}

std::map<TermKey, Term> predicted_terms(const Prediction& p) {
  std::map<TermKey, Term> out;
  const Timeline& t = p.timeline;
  for (Group g : kGroups)
    for (CollKind k : kKinds) {
      const auto gi = static_cast<std::size_t>(g), ki = static_cast<std::size_t>(k);
      if (t.count[gi][ki] > 0)
        out[{std::string(name_of(g)), std::string(name_of(k))}] = {
            t.count[gi][ki], 0, t.comm_us[gi][ki] / 1e3, t.exposed_us[gi][ki] / 1e3};
    }
  for_each_slot(p.comm, [&](const CommSlot& s, double mult) {
    auto it = out.find({std::string(name_of(s.cost.group)), std::string(name_of(s.cost.kind))});
    if (it != out.end()) it->second.bytes += s.cost.bytes * mult;
  });
  return out;
}

std::map<TermKey, Term> gpt4d_terms(const json& summary) {
  std::map<TermKey, Term> out;
  if (!summary.contains("collectives") || !summary["collectives"].is_array()) return out;
  for (const json& c : summary["collectives"]) {
    Term& t = out[{group_name(c.value("group", "")), c.value("kind", "")}];
    t.count += num(c, "count");
    t.bytes += num(c, "bytes");
    t.time_ms += num(c, "time_ms");
    t.exposed_ms += num(c, "exposed_ms");
  }
  return out;
}

}  // namespace ovb::model::detail
