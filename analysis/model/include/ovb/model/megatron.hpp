// The Megatron-LM strategy in the performance model: tensor parallelism with sequence parallelism
// inside a node (across nodes on request), pipeline parallelism (1F1B, optionally interleaved over
// virtual stages), data parallelism with the distributed optimizer (gradient reduce-scatter and
// parameter all-gather overlapped with the first/last micro-batch), micro-batches, and no /
// selective / full activation recomputation. Memory per GPU by the published formulas (Korthikanti
// et al. 2022, arXiv 2205.05198, Section 4, for GPT blocks; Llama blocks from the tensors
// Megatron-Core saves, megatron_activations.hpp; Megatron-LM's distributed optimizer: 6 + 12/dp
// bytes per parameter). The GEMM, attention and memory-bound costs are the 4D model's own
// (compute_terms on the grid 1 x tp x 1 x 1, whose layer shapes are Megatron's column/row-parallel
// ones) and every collective is costed by cost_collective, so both strategies share one machine
// description. Formulas: docs/model-megatron.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ovb/gpt_plan.hpp"
#include "ovb/model/compute_cost.hpp"
#include "ovb/model/machine.hpp"

namespace ovb::model {

enum class Recompute { none, selective, full };
std::string_view name_of(Recompute r);    // "none", "selective", "full"
Recompute parse_recompute(std::string_view s);  // throws UsageError

// Megatron-LM's code paths that changed between its releases and decide what an iteration costs
// (docs/model-megatron.md, "Code paths by era"). An era names the set a release had; `versus`
// and `search` default to today's Megatron-Core, a published run states the one it ran.
enum class DdpImpl {
  torch,  // PyTorch DDP: 16-bit gradients all-reduced in buckets under the backward
  local,  // Megatron's own DDP: fp32 main_grad reduced after the pipeline flush, not overlapped
  core,   // Megatron-Core DDP: fp32 buckets reduced under the last micro-batch's backward and the
          // distributed optimizer's parameter all-gather under the first forward
};
std::string_view name_of(DdpImpl d);

struct MegatronFeatures {
  std::string era = "core";
  DdpImpl ddp_pp1 = DdpImpl::core;  // data-parallel implementation without a pipeline (pp = 1)
  DdpImpl ddp_pp = DdpImpl::core;   // ... and with one (pp > 1)
  // The weight-gradient GEMM accumulates into the fp32 main_grad; without it every micro-batch's
  // 16-bit gradient is added in a separate pass (local DDP: into main_grad; torch DDP: autograd's
  // accumulation into param.grad).
  bool grad_accumulation_fusion = true;
  // Without sequence parallelism, a stage sends 1/tp of the activation and the receiver
  // all-gathers it over its tensor-parallel group before use (Megatron-LM before Megatron-Core).
  bool scatter_gather_p2p = false;
  bool interleave_pp2 = true;  // the interleaved schedule is allowed at pp = 2
  // The interleaved schedule posts each send and receive and waits for it only before the chunk
  // that needs it, computing meanwhile (Megatron-Core's --overlap-p2p-communication, on by
  // default with interleaving); before it, every exchange blocked the schedule.
  bool overlap_p2p = true;
  // Full recomputation of only some layers of each chunk (--recompute-method block, the 2022
  // releases' name of --activations-checkpoint-method); the search tries the fewest that fit.
  bool block_recompute = true;
  // Megatron-Core's DDP takes the norm of each gradient bucket before its collective and asserts
  // it is not NaN (--check-for-nan-in-loss-and-grad, on by default in bf16; param_and_grad_buffer
  // .py, start_grad_sync, at f2e5db402c and still at d98e8a64dd): one more read of the fp32
  // gradients in the last micro-batch's backward (grad_passes_us).
  bool grad_nan_check = true;
  // fp16 with loss scaling: the optimizer unscales its fp32 gradients and checks them for
  // infinities before the step (_unscale_main_grads_and_check_for_nan: read and write, 8 bytes a
  // shard parameter; grad_passes_us). The sc21 launcher's --fp16 --loss-scale 8192; the later
  // eras' runs trained in bf16 (no scaler) or do not say.
  bool fp16_unscale = false;
  // Megatron's own and Megatron-Core's DDPs keep the gradients in an fp32 buffer (main_grad),
  // accumulated, reduced and handed to the optimizer in fp32: Megatron-LM's launcher forces it
  // for bf16 (--accumulate-allreduce-grads-in-fp32, arguments.py). Without it (false) the
  // gradients stay in the parameters' 16-bit dtype: the sc21 launcher's fp16 runs (CONFIG.sh
  // passes neither that flag nor --use-contiguous-buffers-in-ddp, so the 2021 local DDP
  // all-reduces autograd's 16-bit param.grad after the flush: distributed.py,
  // allreduce_gradients) and NeMo's performance recipes (grad_reduce_in_fp32 = False).
  bool grad_buffer_fp32 = true;
  DdpImpl ddp(int pp) const { return pp > 1 ? ddp_pp : ddp_pp1; }
  // The gradients stay in the parameters' 16-bit dtype (no fp32 buffer): PyTorch's DDP reduces
  // autograd's 16-bit gradients, and so does a DDP without grad_buffer_fp32.
  bool grads_in_param_dtype(int pp) const {
    return ddp(pp) == DdpImpl::torch || !grad_buffer_fp32;
  }
  // Bytes of a gradient in the data-parallel buffer and reduction (act_bytes: the 16-bit dtype's).
  double grad_bytes(int pp, double act_bytes) const {
    return grads_in_param_dtype(pp) ? act_bytes : 4;
  }
};
// "sc21" (Narayanan et al., SC21: Megatron-LM of 2021), "2022" (Korthikanti et al. 2022 until
// Megatron-Core's overlapped DDP of September 2023; the AxoNN paper's baseline) or "core"
// (today's Megatron-Core); throws UsageError naming the eras otherwise.
MegatronFeatures megatron_era(std::string_view era);
// The era names megatron_era accepts, in order of release (the CLI's choices and its messages).
inline const std::vector<std::string> kMegatronEras = {"sc21", "2022", "core"};

// The era of a run that does not name one, read from what it states about its software (a
// published run written before runs named their era). Stated to run without FlashAttention
// (Megatron-LM from December 2022, d693034ecf; Megatron-Core's overlapped gradient reduction
// came after it, August 2023, 2d5220a424): "2022" when it used what Megatron-LM gained in 2022,
// sequence parallelism (April, cfd2e21607) or selective recomputation (May, bbab79f869), else
// "sc21", the code before both (and the forks of it, e.g. Megatron-DeepSpeed); any other run
// "core". `why` says which statement decided it, for the run's notes; empty for "core".
struct InferredEra {
  std::string era, why;
};
InferredEra infer_megatron_era(bool flash_attention, bool sequence_parallel, bool selective);

// Megatron-LM refuses --tp-comm-overlap without sequence parallelism; so do the model's checks
// of a configuration (validate_megatron) and of a search's options (search_megatron).
inline constexpr const char* kTpOverlapNeedsSequenceParallel =
    "tensor-parallel communication overlap needs sequence parallelism";

struct MegatronConfig {
  int tp = 1, pp = 1, dp = 1;
  int micro_batch = 1;     // sequences per micro-batch (Megatron's --micro-batch-size)
  int virtual_stages = 1;  // model chunks per pipeline stage (interleaved 1F1B when > 1)
  // Uneven pipeline (Megatron-Core's --decoder-first/last-pipeline-num-layers): layers of the
  // first and of the last stage; 0 = as many as every other stage. The other stages share the
  // remaining layers evenly. Lets a model whose layer count pp does not divide keep its stages
  // balanced with the embedding and the LM head (Llama 3 405B: 126 layers, 7 + 14 x 8 + 7).
  int first_stage_layers = 0, last_stage_layers = 0;
  Recompute recompute = Recompute::none;
  // With full recomputation: the layers of each model chunk that are recomputed (Megatron-Core's
  // --recompute-method block --recompute-num-layers N: the first N layers of every chunk keep
  // their input only, the others keep everything); 0 = every layer (--recompute-method uniform).
  int recompute_layers = 0;
  bool sequence_parallel = true;
  bool distributed_optimizer = true;
  // Megatron-LM accepts any tp dividing the heads; the search keeps it inside a node (its
  // recommended use) unless asked, e.g. where nothing else fits in memory.
  bool tp_across_nodes = false;
  // Transformer Engine's userbuffers overlap (Megatron's --tp-comm-overlap, which needs sequence
  // parallelism): every tensor-parallel all-gather and reduce-scatter of a layer runs under the
  // GEMM it feeds or follows (tp_overlap_pair, megatron_overlap.hpp); off by default, as in
  // Megatron-LM.
  bool tp_comm_overlap = false;
  // Megatron-LM's --untie-embeddings-and-output-weights: the output layer has its own weight
  // (Megatron's GPT default is tied; Llama models are untied whatever this says). Tied with
  // pp > 1, the last stage keeps a copy of the word embeddings whose gradient is all-reduced with
  // the first stage's after the pipeline's flush (finalize_model_grads); tied with pp = 1 the
  // one weight serves both.
  bool untie_embeddings = false;
  std::int64_t batch = 0;  // global batch, sequences
  DType act_dtype = DType::bf16;
  MegatronFeatures features;
  int gpus() const { return tp * pp * dp; }
  // Block recomputation: full with fewer layers than a chunk holds (chunk_layers).
  bool block_recompute() const { return recompute == Recompute::full && recompute_layers > 0; }
  // Whether the output layer has a weight of its own (untied, or Llama's head).
  bool untied(const GptShape& m) const { return untie_embeddings || m.llama(); }
  bool uneven() const { return first_stage_layers > 0 || last_stage_layers > 0; }
  std::int64_t microbatches() const { return batch / (static_cast<std::int64_t>(dp) * micro_batch); }
};

// Layers of the first, each middle and the last pipeline stage (all L/pp when even; middle 0
// when pp <= 2). With one stage, first = last = L.
struct StageLayers {
  std::int64_t first = 0, middle = 0, last = 0;
  std::int64_t of(int stage, int pp) const {
    return stage == 0 ? first : stage == pp - 1 ? last : middle;
  }
};
// The split of `layers` over pp stages with the first / last given (0: as the middle ones);
// nullopt when it does not split: pp does not divide an even model, or the layers left after
// the ends are not a positive multiple of the middle stages, or the ends alone do not add up.
std::optional<StageLayers> split_stages(std::int64_t layers, int pp, int first, int last);

// Layers of one model chunk: a stage's (the middle stages' when uneven with pp > 2, else the
// first's) over the virtual stages. Block recomputation recomputes recompute_layers of them.
std::int64_t chunk_layers(const GptShape& m, const MegatronConfig& c);
// The share of the layers whose forward is recomputed: 1 for full, recompute_layers /
// chunk_layers for block, 0 otherwise (selective recomputes part of every layer: 0 here).
double recompute_share(const GptShape& m, const MegatronConfig& c);
// "none", "selective", "full", or "block N/C" (N of each chunk's C layers recomputed).
std::string recompute_words(const GptShape& m, const MegatronConfig& c);

// Per GPU of the first pipeline stage (the one holding the most activations and the embedding).
// Uneven stages: parameters of the stage holding the most and activations of the stage holding
// the most, each the largest over the stages (their sum an upper bound of any one stage's total).
struct MegatronMemory {
  double params_local = 0;  // parameter elements on the GPU
  double params_first = 0;  // ... on a GPU of the first stage
  double weights = 0;       // act_dtype copy: 2 bytes per parameter in bf16
  double gradients = 0;     // fp32 main gradients: 4 bytes per parameter
  double optimizer = 0;     // fp32 master + Adam m, v: 12 bytes per parameter, / dp when distributed
  // The largest over the stages of activation_per_layer x the stage's layers in flight, the last
  // stage's with its logits (their peak while a micro-batch's loss runs).
  double activations = 0;
  double logits = 0;  // s x micro-batch x V/tp logits, 16-bit and fp32 (a + 4 bytes each)
  double activation_per_layer = 0;  // one layer, one micro-batch
  double inflight_layers = 0;       // layers' worth of micro-batch activations held at the peak
  double total() const { return weights + gradients + optimizer + activations; }
};

struct MegatronTime {
  std::int64_t microbatches = 0;
  double layer_fwd_us = 0, layer_bwd_us = 0;  // one layer, one micro-batch, compute only
  double recompute_us = 0;                    // one layer, one micro-batch
  double grad_accumulation_us = 0;            // one layer, one micro-batch (unfused only)
  // TP/SP collectives of one layer, one micro-batch: their time alone, or with --tp-comm-overlap
  // what the overlap leaves exposed plus the GEMMs' slowdown under them.
  double tp_fwd_us = 0, tp_bwd_us = 0;
  // One micro-batch through the stage with the most layers (all chunks); every stage when even.
  double stage_fwd_us = 0, stage_bwd_us = 0;
  double head_us = 0;                         // LM head + loss per micro-batch (last stage)
  double cross_entropy_us = 0;                // of head_us: the loss's passes, forward + backward
  // Fill and drain: (the stages' times summed - the slowest stage's) / v, i.e.
  // (pp-1)/v * (stage_fwd + stage_bwd) when even.
  double bubble_us = 0;
  double p2p_one_us = 0;                      // one activation send between stages
  double p2p_us = 0;                          // p2p on the critical path
  double p2p_hidden_us = 0;                   // p2p under compute (overlapped interleaving)
  double dp_rs_us = 0, dp_ag_us = 0;          // gradient reduce-scatter / param all-gather alone
  // The embeddings' bucket (overlapped DDPs): its reduction after the backward, its gather
  // before the first forward, each a lower bound on the exposed time above.
  double dp_tail_rs_us = 0, dp_tail_ag_us = 0;
  double dp_exposed_us = 0;                   // what the overlap leaves
  // Tied embeddings with pp > 1: the word-embedding gradient (fp32 main_grad, vocab/tp x h)
  // all-reduced between the first and the last stage after the flush, exposed.
  double embedding_grads_us = 0;
  double interference_us = 0;
  double optimizer_us = 0;
  // Passes over the gradients outside the layers, every iteration (megatron.cpp: zeroing the
  // fp32 gradient buffer before the first forward, the data-parallel scaling by 1/dp and
  // Megatron-Core's NaN check of each bucket, the optimizer's gradient norm and, with fp16 loss
  // scaling, its unscale-and-check, the 2021 torch-DDP copy of 16-bit gradients to fp32), as
  // they lie on the critical path.
  double grad_passes_us = 0;
  double iteration_us = 0;
};

struct MegatronPrediction {
  MegatronConfig config;
  MegatronTime time;
  MegatronMemory memory;
  double memory_limit_bytes = 0;
  bool fits = false;
};

// Throws UsageError naming the first failed condition (tp divides heads and hidden and fits in a
// node unless tp_across_nodes, pp * virtual_stages divides layers, dp * micro_batch divides the
// batch, interleaving needs pp > 1 (pp > 2 where the era's schedule has no interleaving at pp 2)
// and micro-batches % pp == 0). Uneven stages: pp > 1 (pp > 2
// with both ends set), the other stages split the remaining layers evenly (at least one each),
// v divides that split.
void validate_megatron(const GptShape& m, const MegatronConfig& c, const Machine& mc);

// Parameter elements of one transformer block before the tensor-parallel split: the linear
// weights plus GPT's biases and LayerNorms (13 h) or Llama's two RMSNorm gains (2 h).
double megatron_block_params(const GptShape& m);

// flash_attention: the attention keeps no s x s tensors (megatron_activations.hpp).
MegatronMemory megatron_memory(const GptShape& m, const MegatronConfig& c,
                               bool flash_attention = true);
// The compute terms of a Megatron layer (the 4D plan's on the grid 1 x tp x 1 x 1, its
// epilogues as separate passes): what predict_megatron prices the layers with.
ComputeTerms megatron_compute_terms(const GptShape& m, const MegatronConfig& c, const Machine& mc);
MegatronPrediction predict_megatron(const GptShape& m, const MegatronConfig& c, const Machine& mc);

// The 4D plan whose layer shapes are this configuration's (grid 1 x tp x 1 x 1, batch =
// micro-batch), and predict_megatron with its compute_terms given (the search computes them once
// per (tp, micro-batch)).
GptPlanOptions megatron_layer_options(const MegatronConfig& c);

MegatronPrediction predict_megatron(const GptShape& m, const MegatronConfig& c, const Machine& mc,
                                    const ComputeTerms& layer_terms);

}  // namespace ovb::model
