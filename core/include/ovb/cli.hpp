// Command-line options shared by the suite's binaries (CLI11), so every binary spells them the same.
#pragma once

#include <CLI/CLI.hpp>

#include "ovb/backend.hpp"
#include "ovb/grid.hpp"
#include "ovb/launch.hpp"

namespace ovb {

// --backend auto|cuda|host, --ranks-per-gpu N.
void add_backend_options(CLI::App& app, BackendOptions& opts);

// --gx --gy --gz --gdata --grid-order x,y,z: the grid rows of the run-configuration table
// (ovb/run_config.hpp, defined in run_config.cpp), for programs that take a grid but no model.
void add_grid_options(CLI::App& app, GridShape& shape);

// Checks for numeric options, used instead of CLI::PositiveNumber / CLI::NonNegativeNumber, whose
// message spells out the range up to DBL_MAX: these say "--gpus: must be > 0, got 0".
const CLI::Validator& positive();
const CLI::Validator& non_negative();

// Parses argv. --help prints on rank 0 and throws ExitRequest{0}; a parse error throws UsageError
// with CLI11's message and a pointer to --help. When a --json, --out or --timeline names standard
// output ("-" or /dev/stdout), other text goes to stderr from then on (reserve_stdout_for_results
// in ovb/output_file.hpp), so stdout carries the result alone.
void parse_cli(CLI::App& app, int argc, char** argv, const LaunchContext& ctx);

}  // namespace ovb
