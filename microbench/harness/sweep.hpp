// Sweep files (microbench/sweeps/*.json): recorded command-line options, one section per
// program. A sweep file only fills options the command line left unset, so
//   ovb-gemm --sweep quick --dtypes bf16
// runs the quick GEMM sweep in bf16. Format: see microbench/README.md ("Sweep files").
#pragma once

#include <string>
#include <string_view>

#include "ovb/cli_fwd.hpp"

namespace ovb::mb {

// A name ("quick", "full": <microbench>/sweeps/<name>.json; the folder can be overridden with
// OVB_SWEEP_DIR) or a path (anything containing '/' or ending in ".json").
std::string sweep_path(std::string_view name_or_path);

// Applies section `program` of the sweep file to the options of `app` that were not given on the
// command line, running their validators and callbacks. A section "<program>@<backend>" (e.g.
// "ovb-gemm@host"), when present, goes first and wins over `program`'s keys: a sweep written for
// GPUs asks the host backend only for what it can do (fp32, sizes a CPU finishes). Throws
// UsageError naming the file and key for a missing file or section, an unknown option, or a value
// the option rejects.
void apply_sweep(CLI::App& app, std::string_view program, std::string_view name_or_path,
                 std::string_view backend = "");

}  // namespace ovb::mb
