// Shared collective options (see comm_options.hpp).
#include "harness/comm_options.hpp"

#include <algorithm>
#include <iostream>
#include <limits>

#include "harness/bench_main.hpp"
#include "harness/sizes.hpp"
#include "ovb/cli.hpp"
#include "ovb/error.hpp"

namespace ovb::mb {

Axis<CollKind> colls_axis(std::vector<std::string> defaults) {
  return enum_axis<CollKind>("--colls", "Collectives: all_reduce, reduce_scatter, all_gather",
                             std::move(defaults),
                             {{"all_reduce", CollKind::all_reduce},
                              {"reduce_scatter", CollKind::reduce_scatter},
                              {"all_gather", CollKind::all_gather}});
}

Axis<std::int64_t> knob_axis(std::string flag, std::string help) {
  return int64_axis(std::move(flag), std::move(help) + " (default or N)", {"default"}, 0,
                    std::numeric_limits<int>::max(), {{"default", -1}, {"-1", -1}});
}

void add_comm_options(CLI::App& app, CommOptions& o) {
  o.groups.add_to(app);
  add_grid_options(app, o.grid);
  o.min_ctas.add_to(app);
  o.max_ctas.add_to(app);
  o.cta_policy.add_to(app);
}

void check_comm_options(const CommOptions& o, const std::set<std::string>& cli, int world) {
  check_cli_grid(o.grid, cli, world);
}

CommConfig comm_config(const CommOptions& o, const Point& p) {
  CommConfig c;
  c.min_ctas = static_cast<int>(o.min_ctas.at(p));
  c.max_ctas = static_cast<int>(o.max_ctas.at(p));
  c.cta_policy = static_cast<int>(o.cta_policy.at(p));
  return c;
}

std::string cta_text(const CommConfig& c) {
  return "min_ctas=" + knob_text(c.min_ctas) + " max_ctas=" + knob_text(c.max_ctas) +
         " cta_policy=" + knob_text(c.cta_policy);
}

std::string cta_suffix(const CommConfig& c) {
  if (c.min_ctas < 0 && c.max_ctas < 0 && c.cta_policy < 0) return "";
  return "/cta=" + knob_text(c.min_ctas) + "," + knob_text(c.max_ctas) + "," +
         knob_text(c.cta_policy);
}

void check_cta_backend(const Backend& b, const CommOptions& o) {
  if (b.name() != "host") return;
  for (const Axis<std::int64_t>* a : {&o.min_ctas, &o.max_ctas, &o.cta_policy})
    for (std::int64_t v : a->values())
      if (v >= 0)
        throw UsageError(a->flag() + " " + std::to_string(v) +
                         ": the host backend's collectives are MPI's and have no NCCL CTAs to "
                         "set; use " + a->flag() + " default");
}

DType default_dtype(const Backend& b) {
  return b.name() == "host" ? DType::f32 : DType::bf16;
}

void setup_groups(BenchEnv& env, const CommOptions& o) {
  const bool any_dim = std::any_of(o.groups.values().begin(), o.groups.values().end(),
                                   [](const GroupSpec& g) { return !g.world; });
  if (!any_dim) return;
  const std::string why = env.set_grid(o.grid);
  if (!why.empty() && env.ctx().rank == 0)
    std::cerr << "warning: " << why << ": benchmarks over x/y/z/data are skipped" << std::endl;
}

}  // namespace ovb::mb
