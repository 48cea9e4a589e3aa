// Command-line options shared by the programs that run collectives (ovb-collective, ovb-overlap):
// groups with the grid they refer to, NCCL CTA settings to sweep, and the collective dtype.
#pragma once

#include <CLI/CLI.hpp>

#include <set>
#include <string>
#include <vector>

#include "harness/env.hpp"

namespace ovb::mb {

struct CommOptions {
  std::vector<std::string> groups{"world"};
  GridShape grid;
  std::vector<std::string> min_ctas{"default"}, max_ctas{"default"}, cta_policy{"default"};
};

// --colls: collective kinds to run.
void add_colls_option(CLI::App& app, std::vector<std::string>& colls);

// --groups, --gx --gy --gz --gdata --grid-order, --min-ctas, --max-ctas, --cta-policy.
void add_comm_options(CLI::App& app, CommOptions& o);

// Validates the CTA values, and a grid given on the command line against the world.
void check_comm_options(const CommOptions& o, const std::set<std::string>& cli, int world);

// Every combination of the CTA values, as communicator configurations.
std::vector<CommConfig> comm_configs(const CommOptions& o);

// "min_ctas=default max_ctas=8 cta_policy=default", for labels.
std::string cta_text(const CommConfig& c);
// "" when every CTA knob is NCCL's default, else "/cta=MIN,MAX,POLICY", for benchmark names.
std::string cta_suffix(const CommConfig& c);

// The element type of "default": bf16 on CUDA, fp32 on host.
DType default_dtype(const Backend& b);

// Binds the grid when a group needs it; on rank 0 warns when it does not fit the world (those
// benchmarks are then skipped with the reason).
void setup_groups(BenchEnv& env, const CommOptions& o);

}  // namespace ovb::mb
