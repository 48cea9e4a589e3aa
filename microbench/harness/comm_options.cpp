// Shared collective options (see comm_options.hpp).
#include "harness/comm_options.hpp"

#include <algorithm>
#include <iostream>

#include "harness/bench_main.hpp"
#include "harness/sizes.hpp"
#include "ovb/cli.hpp"

namespace ovb::mb {

void add_colls_option(CLI::App& app, std::vector<std::string>& colls) {
  app.add_option("--colls", colls, "Collectives: all_reduce, reduce_scatter, all_gather")
      ->delimiter(',')
      ->check(CLI::IsMember({"all_reduce", "reduce_scatter", "all_gather"}))
      ->capture_default_str();
}

void add_comm_options(CLI::App& app, CommOptions& o) {
  app.add_option("--groups", o.groups,
                 "Groups: world, or x, y, z, data of the grid --gx --gy --gz --gdata")
      ->delimiter(',')
      ->check(CLI::IsMember({"world", "x", "y", "z", "data"}))
      ->capture_default_str();
  add_grid_options(app, o.grid);
  app.add_option("--min-ctas", o.min_ctas, "NCCL minCTAs values to sweep (default or N)")
      ->delimiter(',')
      ->capture_default_str();
  app.add_option("--max-ctas", o.max_ctas, "NCCL maxCTAs values to sweep (default or N)")
      ->delimiter(',')
      ->capture_default_str();
  app.add_option("--cta-policy", o.cta_policy,
                 "NCCL CTA policy values to sweep: default, 0 (default), 1 (efficiency), "
                 "2 (zero); needs NCCL >= 2.27, ignored by the host backend")
      ->delimiter(',')
      ->capture_default_str();
}

namespace {
std::vector<int> knobs(const std::vector<std::string>& v, const char* what) {
  std::vector<int> out;
  for (const std::string& s : v) out.push_back(parse_knob(s, what));
  return out;
}
}  // namespace

void check_comm_options(const CommOptions& o, const std::set<std::string>& cli, int world) {
  comm_configs(o);
  check_cli_grid(o.grid, cli, world);
}

std::vector<CommConfig> comm_configs(const CommOptions& o) {
  std::vector<CommConfig> out;
  for (int mn : knobs(o.min_ctas, "--min-ctas"))
    for (int mx : knobs(o.max_ctas, "--max-ctas"))
      for (int pol : knobs(o.cta_policy, "--cta-policy")) {
        CommConfig c;
        c.min_ctas = mn;
        c.max_ctas = mx;
        c.cta_policy = pol;
        out.push_back(c);
      }
  return out;
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

DType default_dtype(const Backend& b) {
  return b.name() == "host" ? DType::f32 : DType::bf16;
}

void setup_groups(BenchEnv& env, const CommOptions& o) {
  const bool any_dim = std::any_of(o.groups.begin(), o.groups.end(),
                                   [](const std::string& g) { return g != "world"; });
  if (!any_dim) return;
  const std::string why = env.set_grid(o.grid);
  if (!why.empty() && env.ctx().rank == 0)
    std::cerr << "warning: " << why << ": benchmarks over x/y/z/data are skipped" << std::endl;
}

}  // namespace ovb::mb
