// gpt4d's options (see config.hpp).
#include "config.hpp"

#include <algorithm>
#include <iostream>

#include <nlohmann/json.hpp>

#include "kernels/kernels.hpp"  // cudnn_attention_built
#include "ovb/cli.hpp"
#include "ovb/error.hpp"
#include "ovb/timing_stats.hpp"

namespace ovb::gpt {

static Priority parse_priority(const std::string& s) {
  return s == "high" ? Priority::high : Priority::normal;
}

void add_options(CLI::App& app, Config& cfg) {
  add_backend_options(app, cfg.backend);
  // The shared run options; gpt4d's gradients are fp32 (no --grad-dtype).
  add_run_options(app, cfg, kAllRunGroups & ~kGradDtypeGroup);
  app.get_option("--batch")->required();
  app.get_option("--vocab")->description(
      "Vocabulary size (default 50304; 256 with --data text:FILE)");
  app.add_option("--iters", cfg.iters, "Training iterations")->capture_default_str();
  app.add_option(
      "--warmup", cfg.warmup,
      "Iterations left out of the summary's timing statistics (default: the suite's "
      "warm-up rule, max(3, ceil(iters/10)), leaving at least one; 0 when --iters is 1)");
  app.add_option("--seed", cfg.seed, "Seed of the weights and of synthetic data")
      ->capture_default_str();
  app.add_option("--data", cfg.data,
                 "synthetic (seeded random tokens), tokens:FILE (flat uint16 token ids) or "
                 "text:FILE (bytes as tokens, vocab 256)")
      ->capture_default_str();
  app.add_option("--attention", cfg.attention,
                 "Attention on the cuda backend: cudnn (cuDNN fused flash attention, bf16), simt "
                 "(the suite's CUDA-core flash-style kernels) or auto (cudnn where it is built "
                 "and runs the shape, else simt)")
      ->check(CLI::IsMember({"auto", "cudnn", "simt"}))
      ->capture_default_str();
  app.add_option("--gemm-autotune", cfg.gemm_autotune,
                 "cuda backend: time the cuBLASLt heuristic's first N algorithms on each GEMM "
                 "shape's first call (in the warm-up) and keep the fastest; 0 or 1: the "
                 "heuristic's first, untimed (as ovb-gemm --autotune)")
      ->capture_default_str();

  // Optimizer.
  app.add_option("--lr", cfg.optim.lr, "Peak learning rate (AdamW)")->capture_default_str();
  app.add_option("--min-lr", cfg.optim.min_lr,
                 "Learning rate at the end of the cosine decay "
                 "(default lr/10)");
  app.add_option("--warmup-iters,--lr-warmup-iters", cfg.optim.lr_warmup_iters,
                 "Linear learning-rate warm-up iterations")
      ->capture_default_str();
  app.add_option("--lr-decay-iters", cfg.optim.lr_decay_iters,
                 "Iteration where the cosine decay reaches --min-lr (default --iters)");
  app.add_option("--weight-decay", cfg.optim.weight_decay,
                 "AdamW decoupled weight decay (weight matrices and embeddings)")
      ->capture_default_str();
  app.add_option("--beta1", cfg.optim.beta1, "AdamW beta1")->capture_default_str();
  app.add_option("--beta2", cfg.optim.beta2, "AdamW beta2")->capture_default_str();
  app.add_option("--clip", cfg.optim.clip, "Clip the global gradient norm to this (<= 0: off)")
      ->capture_default_str();

  // Streams and NCCL.
  app.add_option_function<std::string>(
         "--comm-priority", [&cfg](const std::string& s) { cfg.comm_priority = parse_priority(s); },
         "Priority of the communication streams: high or normal")
      ->check(CLI::IsMember({"high", "normal"}))
      ->default_str("high");
  app.add_option_function<std::string>(
         "--compute-priority",
         [&cfg](const std::string& s) { cfg.compute_priority = parse_priority(s); },
         "Priority of the compute stream: high or normal")
      ->check(CLI::IsMember({"high", "normal"}))
      ->default_str("normal");
  app.add_option("--nccl-min-ctas", cfg.nccl.min_ctas, "NCCL minCTAs of every communicator");
  app.add_option("--nccl-max-ctas", cfg.nccl.max_ctas, "NCCL maxCTAs of every communicator");
  app.add_option("--nccl-cta-policy", cfg.nccl.cta_policy,
                 "NCCL CTAPolicy: 0 default, 1 efficiency, 2 zero (NCCL >= 2.27)");

  // Output.
  app.add_option("--out", cfg.out, "Write the JSON result (results/SCHEMA.md, gpt4d result)");
  app.add_option("--trace", cfg.trace_dir,
                 "Write one trace per rank into DIR (needs the profiling part, ovb::trace)");
  app.add_option("--predict", cfg.predict,
                 "Print the performance model's prediction for MACHINE (a preset of "
                 "analysis/machines, e.g. generic-h100-8nic, or a machine file) beside the "
                 "measurement, and add it to the result (needs the analysis part, ovb::model)");
  app.add_flag("--quiet", cfg.quiet, "No per-iteration lines");
  app.add_flag("--check-config", cfg.check_config,
               "Check the configuration against the plan's rules (not the world size: no ranks "
               "needed), print it and exit: 0 valid, 2 not");
  app.add_flag("--json", cfg.check_json,
               "With --check-config: print {\"valid\", \"config\" or \"error\"} as one JSON line");
  // For tests: the collectives issued in the first iteration, one JSON object per line.
  app.add_option("--dump-collectives", cfg.dump_collectives)->group("");
  // For tests: the first iteration's loss and every parameter's gradient, before its step.
  app.add_option("--dump-gradients", cfg.dump_gradients)->group("");
}

void finish_config(const CLI::App& app, Config& cfg, std::string_view backend_name) {
  finish_run_config(app, cfg);
  if (cfg.data.rfind("text:", 0) == 0 && app.count("--vocab") == 0) cfg.model.vocab = 256;

  if (cfg.dtype == "fp16")
    throw UsageError("--dtype fp16: gpt4d trains in fp32 or bf16 (fp16 would need loss scaling)");
  resolve_dtype(cfg, backend_name == "cuda" ? DType::bf16 : DType::f32);
  if (cfg.plan.act_dtype != DType::f32 && backend_name != "cuda")
    throw UsageError("--dtype " + cfg.dtype + " needs the cuda backend (the host backend is fp32)");
  cfg.plan.grad_dtype = DType::f32;
  cfg.plan.gemm_workspace_bytes = backend_name == "cuda" ? kCudaGemmWorkspace : 0;

  if (cfg.attention != "auto" && backend_name != "cuda")
    throw UsageError("--attention " + cfg.attention +
                     " needs the cuda backend (the host backend has one attention)");
  if (cfg.gemm_autotune < 0 || cfg.gemm_autotune > kMaxGemmAutotune)
    throw UsageError("--gemm-autotune must be in [0, " + std::to_string(kMaxGemmAutotune) +
                     "], got " + std::to_string(cfg.gemm_autotune));
  if (cfg.gemm_autotune > 1 && backend_name != "cuda")
    throw UsageError("--gemm-autotune " + std::to_string(cfg.gemm_autotune) +
                     " needs the cuda backend (the host GEMM has one algorithm)");
  if (cfg.attention == "cudnn" && !cudnn_attention_built())
    throw UsageError("--attention cudnn: this gpt4d was built without cuDNN (OVB_ENABLE_CUDNN)");
  if (cfg.attention == "cudnn" && cfg.plan.act_dtype != DType::bf16)
    throw UsageError("--attention cudnn needs bf16 activations (cuDNN's fused attention has no " +
                     std::string(name_of(cfg.plan.act_dtype)) + " path)");
  // The CUDA attention kernel keeps a head's row in registers spread over a warp: head <= 256.
  if (backend_name == "cuda" && cfg.model.heads > 0 && cfg.model.hidden % cfg.model.heads == 0 &&
      cfg.model.head_dim() > 256)
    throw UsageError("head size hidden/heads = " + std::to_string(cfg.model.head_dim()) +
                     " is larger than 256, which the CUDA attention kernel supports");
  if (cfg.iters < 1) throw UsageError("--iters must be >= 1, got " + std::to_string(cfg.iters));
  // The one warm-up rule of every timed figure (ovb/timing_stats.hpp).
  if (app.count("--warmup") == 0) cfg.warmup = stats::default_warmup(cfg.iters);
  if (cfg.warmup < 0 || cfg.warmup >= cfg.iters)
    throw UsageError("--warmup must be >= 0 and less than --iters (" + std::to_string(cfg.iters) +
                     "), got " + std::to_string(cfg.warmup));
  if (!(cfg.optim.lr > 0)) throw UsageError("--lr must be > 0");
  if (cfg.optim.min_lr < 0) cfg.optim.min_lr = cfg.optim.lr / 10;
  if (cfg.optim.min_lr > cfg.optim.lr) throw UsageError("--min-lr must not exceed --lr");
  if (cfg.optim.lr_warmup_iters < 0) throw UsageError("--warmup-iters must be >= 0");
  if (cfg.optim.lr_decay_iters < 0) cfg.optim.lr_decay_iters = cfg.iters;
  if (cfg.optim.weight_decay < 0) throw UsageError("--weight-decay must be >= 0");
  if (!(cfg.optim.beta1 >= 0 && cfg.optim.beta1 < 1 && cfg.optim.beta2 >= 0 && cfg.optim.beta2 < 1))
    throw UsageError("--beta1 and --beta2 must be in [0, 1)");
}

int check_config(const CLI::App& app, Config& cfg, int rank) {
  // No backend is made (a cuda check must run where no GPU is): "auto" checks the host's rules.
  const std::string backend = cfg.backend.name == "cuda" ? "cuda" : "host";
  nlohmann::json out;
  try {
    finish_config(app, cfg, backend);
    validate(cfg);
    out = {{"valid", true}, {"backend", backend}, {"config", to_json(cfg)}};
  } catch (const UsageError& e) {
    if (!cfg.check_json) throw;
    out = {{"valid", false}, {"backend", backend}, {"error", e.what()}};
  }
  if (rank == 0) {
    if (cfg.check_json)
      std::cout << out.dump() << std::endl;
    else
      std::cout << "gpt4d: valid configuration: " << cfg.model.layers << " layers, hidden "
                << cfg.model.hidden << ", heads " << cfg.model.heads << ", batch " << cfg.plan.batch
                << ", grid " << cfg.plan.grid.str() << " (" << cfg.plan.grid.world()
                << " ranks), overlap " << overlap_string(cfg.plan) << std::endl;
  }
  return out["valid"].get<bool>() ? 0 : 2;
}

}  // namespace ovb::gpt
