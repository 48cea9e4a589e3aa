// gpt4d's configuration: every command-line option in one struct (no option globals), the CLI11
// registration that fills it, and the checks that turn it into a GPT plan (ovb/gpt_plan.hpp).
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>

#include "ovb/backend.hpp"
#include "ovb/gpt_plan.hpp"
#include "ovb/memory_options.hpp"

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

struct Config {
  GptShape model;
  GptPlanOptions plan;   // grid, batch, recompute, dtypes, overlap flags, memory options
  MemoryOptions memory;  // as given on the command line; finish_config() copies it into plan
  BackendOptions backend;
  OptimConfig optim;
  int iters = 10;
  int warmup = 1;  // iterations left out of the summary (timing warm-up)
  std::uint64_t seed = 1234;
  std::string data = "synthetic";  // synthetic | tokens:FILE | text:FILE
  std::string dtype = "auto";      // auto (host fp32, cuda bf16) | fp32 | bf16
  std::string attention = "auto";  // auto | cudnn | simt (kernels.hpp AttentionKind)
  Priority comm_priority = Priority::high;
  Priority compute_priority = Priority::normal;
  CommConfig nccl;  // min/max CTAs and CTA policy for every communicator (name set per group)
  std::string out, trace_dir, dump_collectives;
  std::string predict;  // --predict MACHINE: the model's prediction beside the measurement
  bool quiet = false;   // no per-iteration lines
};

// Registers every option on `app`, writing into `cfg`. Call finish_config() after parsing.
void add_options(CLI::App& app, Config& cfg);

// Applies --preset and the explicit shape options given (explicit ones win), the data source's
// vocabulary rule (text: 256 unless --vocab was given), the backend's dtype, and checks the
// options that the plan does not: iterations, warm-up, learning rate, clip.
void finish_config(const CLI::App& app, Config& cfg, std::string_view backend_name);

// The overlap flags as a list: "oar,ors,oag" subsets or "none". Throws UsageError otherwise.
void parse_overlap(const std::string& s, GptPlanOptions& plan);
std::string overlap_string(const GptPlanOptions& plan);  // "oar,ors" or "none"

}  // namespace ovb::gpt
