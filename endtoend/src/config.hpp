// gpt4d's configuration: the shared run configuration (ovb/run_config.hpp: model, grid, batch,
// overlap, recompute, weight caching, dtype) plus the trainer's own options in one struct (no
// option globals), the CLI11 registration that fills it, and the checks that finish it.
#pragma once

#include <cstdint>
#include <string>

#include "ovb/backend.hpp"
#include "ovb/cli_fwd.hpp"
#include "ovb/gpt_plan.hpp"
#include "ovb/run_config.hpp"

namespace ovb::gpt {

struct OptimConfig {
  double lr = 3e-4;
  double min_lr = -1;         // end of the cosine decay; < 0: lr / 10
  int lr_warmup_iters = 0;    // linear warm-up from lr/warmup to lr
  int lr_decay_iters = -1;    // cosine decay ends here (< 0: --iters)
  double weight_decay = 0.1;  // AdamW, on weight matrices and embeddings only
  double beta1 = 0.9, beta2 = 0.95, eps = 1e-8;
  double clip = 1.0;  // global gradient-norm clip; <= 0 disables
};

// model, plan (grid, batch, overlap flags, recompute, cache_weights, dtypes) and dtype come from
// RunConfig; the rest is gpt4d's.
struct Config : RunConfig {
  BackendOptions backend;
  OptimConfig optim;
  int iters = 23;   // stats::default_runs(): 20 timed iterations after the warm-up rule
  int warmup = -1;  // iterations left out of the summary (< 0: stats::default_warmup(iters))
  std::uint64_t seed = 1234;
  std::string data = "synthetic";  // synthetic | tokens:FILE | text:FILE
  std::string attention = "auto";  // auto | cudnn | simt (kernels.hpp AttentionKind)
  int gemm_autotune = 0;  // cuBLASLt algorithms timed per GEMM shape (0, 1: heuristic's first)
  Priority comm_priority = Priority::high;
  Priority compute_priority = Priority::normal;
  CommConfig nccl;  // min/max CTAs and CTA policy for every communicator (name set per group)
  std::string out, trace_dir, dump_collectives;
  std::string dump_gradients;  // for tests: iteration 0's loss and gradients (io/gradients.hpp)
  std::string predict;         // --predict MACHINE: the model's prediction beside the measurement
  bool quiet = false;          // no per-iteration lines
  // --check-config: validate the configuration, print it (--json: as JSON) and exit, without
  // ranks or a backend.
  bool check_config = false, check_json = false;
};

// Registers every option on `app`, writing into `cfg`. Call finish_config() after parsing.
void add_options(CLI::App& app, Config& cfg);

// Applies --preset (finish_run_config), the data source's
// vocabulary rule (text: 256 unless --vocab was given), the backend's dtype, and checks the
// options that the plan does not: iterations, warm-up, learning rate, clip.
void finish_config(const CLI::App& app, Config& cfg, std::string_view backend_name);

// --check-config: finishes and validates the configuration for the backend named by --backend
// (auto: host) without making it, prints the result on rank 0, and returns the exit status (0
// valid, 2 not). Without --json an invalid configuration throws UsageError like a run would.
int check_config(const CLI::App& app, Config& cfg, int rank);

}  // namespace ovb::gpt
