// gpt4d's options (see config.hpp).
#include "config.hpp"

#include <algorithm>
#include <sstream>

#include "kernels/kernels.hpp"  // cudnn_attention_built
#include "ovb/cli.hpp"
#include "ovb/error.hpp"

namespace ovb::gpt {

void parse_overlap(const std::string& s, GptPlanOptions& plan) {
  plan.oar = plan.ors = plan.oag = false;
  if (s == "none" || s.empty()) return;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (item == "oar")
      plan.oar = true;
    else if (item == "ors")
      plan.ors = true;
    else if (item == "oag")
      plan.oag = true;
    else
      throw UsageError("--overlap: unknown flag '" + item +
                       "' (expected a comma-separated subset of oar,ors,oag, or none)");
  }
}

std::string overlap_string(const GptPlanOptions& plan) {
  std::string s;
  for (auto [on, name] : {std::pair{plan.oar, "oar"}, {plan.ors, "ors"}, {plan.oag, "oag"}})
    if (on) s += (s.empty() ? "" : ",") + std::string(name);
  return s.empty() ? "none" : s;
}

static Priority parse_priority(const std::string& s) {
  return s == "high" ? Priority::high : Priority::normal;
}

void add_options(CLI::App& app, Config& cfg) {
  add_backend_options(app, cfg.backend);
  add_grid_options(app, cfg.plan.grid);
  app.add_option("--preset", cfg.model.preset,
                 "Model size by name (tiny, 125M, 350M, 760M, 1.3B, 2.7B, 6.7B, 13B, ... 1T); "
                 "--layers/--hidden/--heads given as well override it");
  app.add_option("--layers", cfg.model.layers, "Transformer blocks L");
  app.add_option("--hidden", cfg.model.hidden, "Hidden size h");
  app.add_option("--heads", cfg.model.heads, "Attention heads");
  app.add_option("--seq", cfg.model.seq, "Sequence length")->capture_default_str();
  app.add_option("--vocab", cfg.model.vocab,
                 "Vocabulary size (default 50304; 256 with --data text:FILE)")
      ->capture_default_str();
  app.add_option("--batch", cfg.plan.batch,
                 "Global batch in sequences (split over Gdata*Gz, whole sequences per rank)")
      ->required();
  app.add_option("--iters", cfg.iters, "Training iterations")->capture_default_str();
  app.add_option("--warmup", cfg.warmup,
                 "Iterations left out of the summary's timing statistics (0 when --iters is 1)")
      ->capture_default_str();
  app.add_option("--seed", cfg.seed, "Seed of the weights and of synthetic data")
      ->capture_default_str();
  app.add_option("--data", cfg.data,
                 "synthetic (seeded random tokens), tokens:FILE (flat uint16 token ids) or "
                 "text:FILE (bytes as tokens, vocab 256)")
      ->capture_default_str();
  app.add_option("--dtype", cfg.dtype,
                 "Weights and activations: auto (host fp32, cuda bf16), fp32 or bf16 (cuda only)")
      ->check(CLI::IsMember({"auto", "fp32", "bf16"}))
      ->capture_default_str();
  app.add_option("--attention", cfg.attention,
                 "Attention on the cuda backend: cudnn (cuDNN fused flash attention, bf16), simt "
                 "(the suite's CUDA-core flash-style kernels) or auto (cudnn where it is built "
                 "and runs the shape, else simt)")
      ->check(CLI::IsMember({"auto", "cudnn", "simt"}))
      ->capture_default_str();
  app.add_option_function<std::string>(
         "--overlap", [&cfg](const std::string& s) { parse_overlap(s, cfg.plan); },
         "Overlap optimisations: comma-separated subset of oar (all-reduce of dX behind dW), "
         "ors (deferred Z reduce-scatter of dW), oag (Z all-gather one layer ahead), or none")
      ->default_str("none");
  app.add_flag("--recompute", cfg.plan.recompute,
               "Full activation recomputation: keep block inputs only, recompute each block's "
               "forward (with its collectives) before its backward");
  add_memory_options(app, cfg.memory);

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
  // For tests: the collectives issued in the first iteration, one JSON object per line.
  app.add_option("--dump-collectives", cfg.dump_collectives)->group("");
}

void finish_config(const CLI::App& app, Config& cfg, std::string_view backend_name) {
  cfg.memory.apply(cfg.plan);
  if (!cfg.model.preset.empty()) {
    const GptShape p = gpt_preset(cfg.model.preset);
    if (app.count("--layers") == 0) cfg.model.layers = p.layers;
    if (app.count("--hidden") == 0) cfg.model.hidden = p.hidden;
    if (app.count("--heads") == 0) cfg.model.heads = p.heads;
    cfg.model.preset = p.preset;
  } else if (app.count("--layers") == 0 || app.count("--hidden") == 0 ||
             app.count("--heads") == 0) {
    throw UsageError("give the model as --preset NAME or as --layers, --hidden and --heads");
  }
  if (cfg.data.rfind("text:", 0) == 0 && app.count("--vocab") == 0) cfg.model.vocab = 256;

  if (cfg.dtype == "auto")
    cfg.plan.act_dtype = backend_name == "cuda" ? DType::bf16 : DType::f32;
  else
    cfg.plan.act_dtype = parse_dtype(cfg.dtype);
  if (cfg.plan.act_dtype != DType::f32 && backend_name != "cuda")
    throw UsageError("--dtype " + cfg.dtype + " needs the cuda backend (the host backend is fp32)");
  cfg.plan.grad_dtype = DType::f32;
  cfg.plan.gemm_workspace_bytes = backend_name == "cuda" ? kCudaGemmWorkspace : 0;

  if (cfg.attention != "auto" && backend_name != "cuda")
    throw UsageError("--attention " + cfg.attention +
                     " needs the cuda backend (the host backend has one attention)");
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
  // The default warm-up leaves at least one measured iteration (--iters 1: none left out).
  if (app.count("--warmup") == 0) cfg.warmup = std::min(cfg.warmup, cfg.iters - 1);
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

}  // namespace ovb::gpt
