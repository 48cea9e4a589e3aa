// Command-line options shared by the programs that run collectives (ovb-collective, ovb-overlap):
// the collective kinds, groups with the grid they refer to, and NCCL CTA settings to sweep, as
// typed axes (harness/axes.hpp).
#pragma once

#include <set>
#include <string>
#include <vector>

#include "harness/axes.hpp"
#include "harness/env.hpp"
#include "ovb/cli_fwd.hpp"

namespace ovb::mb {

// --colls: collective kinds to run.
Axis<CollKind> colls_axis(std::vector<std::string> defaults);

// NCCL CTA knob values: "default" (NCCL's choice, -1) or N.
Axis<std::int64_t> knob_axis(std::string flag, std::string help);

struct CommOptions {
  Axis<GroupSpec> groups = enum_axis<GroupSpec>(
      "--groups", "Groups: world, or x, y, z, data of the grid --gx --gy --gz --gdata", {"world"},
      {{"world", GroupSpec{}},
       {"x", GroupSpec{false, Dim::x}},
       {"y", GroupSpec{false, Dim::y}},
       {"z", GroupSpec{false, Dim::z}},
       {"data", GroupSpec{false, Dim::data}}});
  GridShape grid;
  Axis<std::int64_t> min_ctas = knob_axis("--min-ctas", "NCCL minCTAs values to sweep");
  Axis<std::int64_t> max_ctas = knob_axis("--max-ctas", "NCCL maxCTAs values to sweep");
  Axis<std::int64_t> cta_policy = knob_axis(
      "--cta-policy",
      "NCCL CTA policy values to sweep: default, 0 (default), 1 (efficiency), 2 (zero); needs "
      "NCCL >= 2.27, ignored by the host backend");
};

// --groups, --gx --gy --gz --gdata --grid-order, --min-ctas, --max-ctas, --cta-policy.
void add_comm_options(CLI::App& app, CommOptions& o);

// Checks a grid given on the command line against the world.
void check_comm_options(const CommOptions& o, const std::set<std::string>& cli, int world);

// The communicator configuration of a point of the CTA axes.
CommConfig comm_config(const CommOptions& o, const Point& p);

// "min_ctas=default max_ctas=8 cta_policy=default", for labels.
std::string cta_text(const CommConfig& c);
// "" when every CTA knob is NCCL's default, else "/cta=MIN,MAX,POLICY", for benchmark names.
std::string cta_suffix(const CommConfig& c);

// The element type of "default": bf16 on CUDA, fp32 on host.
DType default_dtype(const Backend& b);

// Binds the grid when a group needs it; on rank 0 warns when it does not fit the world (those
// benchmarks are then skipped with the reason).
void setup_groups(BenchEnv& env, const CommOptions& o);

// Throws UsageError where a CTA axis asks for a value on a backend without NCCL communicators
// (host: MPI's collectives have no CTAs to set), naming the flag and value.
void check_cta_backend(const Backend& b, const CommOptions& o);

}  // namespace ovb::mb
