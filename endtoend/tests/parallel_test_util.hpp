// Helpers for the multi-rank gpt4d tests: the test models (GPT "tiny" and a small Llama on the
// committed text),
// configurations by grid and flags, and runs on a given MPI communicator.
#pragma once

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "config.hpp"
#include "ovb/process_grid.hpp"
#include "ovb/rounding.hpp"
#include "ovb/test_main.hpp"
#include "train/trainer.hpp"

namespace ovb::gpt::testing {

struct Case {
  std::string grid = "1x1x1x1";
  std::string overlap = "none";
  bool recompute = false;
  bool cache = true;
  int window = kDefaultOrsWindow;       // dW blocks in flight under ORS
  bool llama = false;                   // the Llama test model instead of GPT "tiny"
  std::int64_t micro_batch = 0;         // sequences per micro-step (0: one micro-step)
  bool shard = false;                   // optimizer state split over the data group
  bool grads = false;                   // gradients too (ZeRO-2; with shard)
  std::int64_t hidden = 64, heads = 4;  // 50, 2: data buckets that Gdata = 2 to 8 may not divide
  int tp_chunks = kDefaultTpChunks;     // row slices of the forward GEMMs with overlap tp
  std::string str() const {
    const bool tp = overlap.find("tp") != std::string::npos;
    return std::string(llama ? "llama " : "") + grid + " overlap=" + overlap +
           (tp ? " tp-chunks=" + std::to_string(tp_chunks) : "") +
           (recompute ? " recompute" : "") + (cache ? "" : " no-cache") +
           (window != kDefaultOrsWindow ? " window=" + std::to_string(window) : "") +
           (micro_batch > 0 ? " micro-batch=" + std::to_string(micro_batch) : "") +
           (shard ? " shard-optimizer" : "") + (grads ? " shard-gradients" : "") +
           (hidden != 64 ? " hidden=" + std::to_string(hidden) + " heads=" + std::to_string(heads)
                         : "");
  }
};

// On the GPU (ranks sharing one GPU over loopback NCCL) the tests run a reduced case list.
inline bool on_gpu() {
  return ovb::testing::options().backend == "cuda";
}

// Llama with 2 layers, hidden 64, 8 query heads over 4 K/V heads (head size 8: Gy up to 4 keeps
// whole K/V groups), SwiGLU width 176.
inline GptShape llama_test_model() {
  GptShape m = gpt_preset("llama-tiny");
  m.heads = 8;
  m.kv_heads = 4;
  return m;
}

inline Config test_config(const Case& c, int iters = 10) {
  Config cfg;
  cfg.model = gpt_preset("tiny");  // 2 layers, hidden 64 (or c.hidden), 4 heads
  if (c.llama) cfg.model = llama_test_model();
  cfg.model.seq = 16;
  cfg.model.vocab = 256;
  if (!c.llama) {
    cfg.model.hidden = c.hidden;
    cfg.model.heads = c.heads;
  }
  cfg.plan.grid = GridShape::parse(c.grid);
  cfg.plan.batch = 8;
  cfg.plan.recompute = c.recompute;
  cfg.plan.cache_weights = c.cache;
  cfg.plan.ors_window = c.window;
  cfg.plan.micro_batch = c.micro_batch;
  cfg.plan.shard_optimizer = c.shard;
  cfg.plan.shard_gradients = c.grads;
  // The backend of the test run (--backend=host|cuda, --ranks-per-gpu=N); fp32 activations on
  // either, so that the equivalence tolerances hold.
  cfg.backend.name = ovb::testing::options().backend;
  cfg.backend.ranks_per_gpu = ovb::testing::options().ranks_per_gpu;
  cfg.plan.act_dtype = DType::f32;
  cfg.plan.gemm_workspace_bytes = on_gpu() ? kCudaGemmWorkspace : 0;
  parse_overlap(c.overlap, cfg.plan);
  cfg.plan.tp_chunks = c.tp_chunks;
  cfg.iters = iters;
  cfg.warmup = 0;
  cfg.data = std::string("text:") + OVB_GPT4D_DATA_DIR + "/declaration.txt";
  cfg.optim.lr = 3e-3;
  cfg.optim.min_lr = 3e-4;
  cfg.optim.lr_warmup_iters = 2;
  cfg.optim.lr_decay_iters = iters;
  return cfg;
}

// On the GPU (ranks sharing it over loopback NCCL, each run seconds long), rank 0 says which run
// starts and when, so that a test stopped by its time limit shows in its log how far it got.
// Returns cfg, so that a run announces itself before its backend creates the communicators.
inline const Config& announced(const Config& cfg, MPI_Comm world) {
  int rank = 0;
  MPI_Comm_rank(world, &rank);
  if (!on_gpu() || rank != 0 || world == MPI_COMM_SELF) return cfg;
  static const auto t0 = std::chrono::steady_clock::now();
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("[%7.1f s] run: grid %s, %d iterations%s%s%s\n", s, cfg.plan.grid.str().c_str(),
              cfg.iters, cfg.plan.micro_batch > 0 ? ", micro-batch" : "",
              cfg.plan.shard_optimizer ? ", shard-optimizer" : "",
              cfg.plan.recompute ? ", recompute" : "");
  std::fflush(stdout);
  return cfg;
}

// Everything a run needs, on communicator `world` (MPI_COMM_SELF for the serial reference).
struct TrainerRun {
  TrainerRun(const Config& c, MPI_Comm world)
      : cfg(announced(c, world)),
        backend(make_backend(cfg.backend, ovb::testing::launch())),
        grid(cfg.plan.grid, world),
        trainer(cfg, *backend, grid) {}
  Config cfg;
  std::unique_ptr<Backend> backend;
  ProcessGrid grid;
  Trainer trainer;
};

inline std::vector<double> losses(const Config& cfg, MPI_Comm world) {
  TrainerRun r(cfg, world);
  std::vector<double> out;
  for (int i = 0; i < cfg.iters; ++i) out.push_back(r.trainer.run_iteration(i).loss);
  return out;
}

// Gdata of a grid string ("2x1x2x2:y,x,z" -> 2).
inline int gdata_of(const std::string& grid) {
  return GridShape::parse(grid).gdata;
}

// The 8-rank grids of the tests (other world sizes: the grids of that size).
inline std::vector<std::string> grids_for(int world) {
  if (world == 8)
    return {"2x2x2x1",       "2x1x2x2", "1x2x1x4", "4x2x1x1", "1x4x2x1",
            "2x2x1x2:y,x,z", "1x1x8x1", "8x1x1x1", "1x1x1x8", "1x2x2x2:z,y,x"};
  if (world == 4) return {"2x2x1x1", "1x2x2x1", "2x1x1x2", "1x1x4x1", "1x1x2x2"};
  if (world == 2) return {"2x1x1x1", "1x2x1x1", "1x1x2x1", "1x1x1x2"};
  return {"1x1x1x1"};
}

// Sequences per data-and-Z shard of the test batch on `grid` (micro-batches must divide it).
inline std::int64_t local_sequences(const std::string& grid) {
  const GridShape g = GridShape::parse(grid);
  return 8 / (static_cast<std::int64_t>(g.gdata) * g.gz);
}

// The number of summed terms along the longest chain of fp32 sums that one loss (forward: false)
// or one gradient element (forward and backward: true) of model `m` depends on, for an
// iteration over `tokens` tokens: the sum of the reduction lengths K along that chain, so that
// fp32_gamma(N) bounds its relative rounding in any summation order (each K-term sum adds at
// most gamma_K; gamma_a + gamma_b <= gamma_{a+b}). A grid or micro-batches only split these
// sums (tensor-parallel partial sums, Z/data reductions over tokens, micro-step accumulation)
// and add them in another order, so one N covers every grid and flag set.
//   Forward, per block: norm statistics (LayerNorm mean and variance: 2 h; RMSNorm: h), QKV
//   (K = h), scores (K = d), softmax and probabilities x V (2 s), output projection (h), the
//   second norm (2 h), MLP up (h), MLP down (ffn). Head: final norm (2 h), logits (h),
//   log-sum-exp (vocab), the mean over tokens (tokens).
//   Backward retraces them transposed: LM head dX (vocab), final norm (2 h); per block MLP down
//   dX (h), MLP up dX (ffn, SwiGLU's gate|up 2 ffn), norm (2 h), output projection dX (h), dP
//   (d), softmax (s), dQ/dK/dV (s), QKV dX ((heads + 2 kv) d), norm (2 h); then a weight
//   gradient sums over the tokens.
inline std::int64_t rounding_chain(const GptShape& m, std::int64_t tokens, bool backward) {
  const std::int64_t h = m.hidden, d = m.head_dim(), s = m.seq, f = m.ffn();
  const std::int64_t norm = m.llama() ? h : 2 * h;
  const std::int64_t fwd_block = norm + h + d + 2 * s + h + norm + h + f;
  const std::int64_t fwd = m.layers * fwd_block + norm + h + m.vocab + tokens;
  if (!backward) return fwd;
  const std::int64_t up = m.llama() ? 2 * f : f;
  const std::int64_t bwd_block = h + up + norm + h + d + 2 * s + (m.heads + 2 * m.kv()) * d + norm;
  return fwd + m.vocab + norm + m.layers * bwd_block + tokens;
}

// Every subset of AxoNN's three flags (what --overlap all sets); tp is added case by case.
inline const std::vector<std::string>& overlap_subsets() {
  static const std::vector<std::string> s{"none",    "oar",     "ors",     "oag",
                                          "oar,ors", "oar,oag", "ors,oag", "oar,ors,oag"};
  return s;
}

// The same case with overlap tp added, in `chunks` row slices.
inline Case with_tp(Case c, int chunks) {
  c.overlap = c.overlap == "none" ? "tp" : c.overlap + ",tp";
  c.tp_chunks = chunks;
  return c;
}

}  // namespace ovb::gpt::testing
