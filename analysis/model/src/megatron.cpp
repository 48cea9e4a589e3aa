// The Megatron-LM strategy: time and memory of one (tp, pp, dp, micro-batch, virtual stages,
// recompute) configuration (see megatron.hpp; formulas in docs/model-megatron.md).
#include "ovb/model/megatron.hpp"

#include <algorithm>
#include <cmath>

#include "ovb/error.hpp"
#include "ovb/model/comm_cost.hpp"
#include "ovb/model/compute_cost.hpp"
#include "ovb/model/megatron_activations.hpp"
#include "ovb/model/megatron_overlap.hpp"
#include "ovb/model/predict.hpp"

namespace ovb::model {

std::string_view name_of(Recompute r) {
  switch (r) {
    case Recompute::none: return "none";
    case Recompute::selective: return "selective";
    case Recompute::full: return "full";
  }
  return "?";
}

Recompute parse_recompute(std::string_view s) {
  if (s == "none") return Recompute::none;
  if (s == "selective") return Recompute::selective;
  if (s == "full") return Recompute::full;
  throw UsageError("unknown recompute mode '" + std::string(s) +
                   "' (expected none, selective or full)");
}

std::string_view name_of(DdpImpl d) {
  switch (d) {
    case DdpImpl::torch: return "torch";
    case DdpImpl::local: return "local";
    case DdpImpl::core: return "core";
  }
  return "?";
}

MegatronFeatures megatron_era(std::string_view era) {
  MegatronFeatures f;
  f.era = std::string(era);
  if (era == "core") return f;
  // The NaN check of the gradient buckets is Megatron-Core's DDP's; the older eras' DDPs (local,
  // PyTorch's) had none.
  f.grad_nan_check = false;
  if (era == "sc21") {
    // Megatron-LM's examples/sc21/run_table_1.sh (the paper's Table 1; NGC PyTorch 20.12,
    // fp16): DDP=torch for the models without a pipeline, DDP=local with one. The launcher
    // (CONFIG.sh at de7dc40f88) sets neither --accumulate-allreduce-grads-in-fp32 nor
    // --use-contiguous-buffers-in-ddp, so the 2021 local DDP leaves autograd to accumulate the
    // fp16 param.grad over the micro-batches and, after the pipeline's flush, flattens it,
    // divides it by dp, all-reduces it in fp16 and copies it back (allreduce_gradients); stages
    // send 1/tp of the activation and all-gather it on receipt (scatter_gather_tensors_in_pipeline);
    // the interleaved schedule requires pp > 2 (parallel_state: "pipeline-model-parallel size
    // should be greater than 2 with interleaved schedule").
    f.ddp_pp1 = DdpImpl::torch;
    f.ddp_pp = DdpImpl::local;
    f.grad_accumulation_fusion = false;
    f.scatter_gather_p2p = true;
    f.interleave_pp2 = false;
    f.overlap_p2p = false;
    f.block_recompute = false;  // the launcher's --checkpoint-activations: every layer
    f.fp16_unscale = true;      // CONFIG.sh: --fp16 --loss-scale 8192
    f.grad_buffer_fp32 = false;  // ... and no --accumulate-allreduce-grads-in-fp32
    return f;
  }
  if (era == "2022") {
    // Megatron-LM 3.0 (Korthikanti et al. 2022) to August 2023: bf16 forces fp32 gradient
    // accumulation and all-reduce (arguments.py), i.e. the local DDP, reduced after the flush;
    // the weight-gradient GEMM accumulates into main_grad (--gradient-accumulation-fusion);
    // --overlap-grad-reduce arrived with Megatron-Core's DDP in September 2023; interleaving at
    // pp = 2 was allowed from mid-2024.
    f.ddp_pp1 = f.ddp_pp = DdpImpl::local;
    f.scatter_gather_p2p = true;
    f.interleave_pp2 = false;
    f.overlap_p2p = false;
    return f;
  }
  std::string names;
  for (const std::string& e : kMegatronEras) names += (names.empty() ? "" : ", ") + e;
  throw UsageError("unknown Megatron-LM era '" + std::string(era) + "' (expected one of " + names +
                   ")");
}

InferredEra infer_megatron_era(bool flash_attention, bool sequence_parallel, bool selective) {
  if (flash_attention) return {"core", ""};
  if (sequence_parallel || selective)
    return {"2022", std::string("no era stated; without FlashAttention and with ") +
                        (sequence_parallel ? "sequence parallelism" : "selective recomputation") +
                        " (Megatron-LM of 2022 had both, FlashAttention only from December 2022 "
                        "and overlapped gradient reduction from August 2023): era 2022"};
  return {"sc21",
          "no era stated; without FlashAttention, sequence parallelism and selective "
          "recomputation (all three arrived in Megatron-LM in 2022): era sc21, the code before "
          "them"};
}

void validate_megatron(const GptShape& m, const MegatronConfig& c, const Machine& mc) {
  auto fail = [&](const std::string& why) {
    throw UsageError("Megatron tp=" + std::to_string(c.tp) + " pp=" + std::to_string(c.pp) +
                     " dp=" + std::to_string(c.dp) + " micro-batch " +
                     std::to_string(c.micro_batch) + " virtual stages " +
                     std::to_string(c.virtual_stages) + ": " + why);
  };
  if (c.tp < 1 || c.pp < 1 || c.dp < 1 || c.micro_batch < 1 || c.virtual_stages < 1)
    fail("every size must be >= 1");
  if (c.batch < 1) fail("the global batch must be >= 1");
  if (m.heads % c.tp != 0) fail("heads " + std::to_string(m.heads) + " not divisible by tp");
  if (m.hidden % c.tp != 0) fail("hidden " + std::to_string(m.hidden) + " not divisible by tp");
  if (m.kv() % c.tp != 0)
    fail("query groups (kv-heads) " + std::to_string(m.kv()) + " not divisible by tp");
  if (m.ffn() % c.tp != 0) fail("ffn-hidden " + std::to_string(m.ffn()) + " not divisible by tp");
  if (c.tp > mc.ranks_per_node() && !c.tp_across_nodes)
    fail("tensor parallelism stays inside a node of " + std::to_string(mc.ranks_per_node()) +
         " GPUs unless tensor parallelism across nodes is allowed");
  if (c.tp_comm_overlap && !c.sequence_parallel) fail(kTpOverlapNeedsSequenceParallel);
  if (c.first_stage_layers < 0 || c.last_stage_layers < 0)
    fail("the first and last stage's layers must be >= 0 (0: as the other stages)");
  if (!c.uneven() && m.layers % (static_cast<std::int64_t>(c.pp) * c.virtual_stages) != 0)
    fail("layers " + std::to_string(m.layers) + " not divisible by pp * virtual stages");
  if (c.uneven()) {
    if (c.pp < 2) fail("uneven stages (first/last stage layers) need pp >= 2");
    const auto split = split_stages(m.layers, c.pp, c.first_stage_layers, c.last_stage_layers);
    if (!split)
      fail("layers " + std::to_string(m.layers) + " less the first stage's (" +
           std::to_string(c.first_stage_layers) + ") and the last stage's (" +
           std::to_string(c.last_stage_layers) +
           ") do not split evenly, at least one each, over the other stages");
    // Interleaving cuts every stage into v chunks of at least one layer; the middle stages'
    // chunks are equal (the time model uses each stage's total, so the ends' need not be).
    const std::int64_t v = c.virtual_stages;
    if (v > 1 && (std::min(split->first, split->last) < v || (c.pp > 2 && split->middle % v != 0)))
      fail("virtual stages " + std::to_string(v) +
           " must divide the middle stages' layers and be at most the first and last stage's");
  }
  if (c.batch % (static_cast<std::int64_t>(c.dp) * c.micro_batch) != 0)
    fail("global batch " + std::to_string(c.batch) + " not divisible by dp * micro-batch");
  if (c.virtual_stages > 1 && c.pp < 2) fail("interleaving needs pp >= 2");
  if (c.virtual_stages > 1 && c.pp == 2 && !c.features.interleave_pp2)
    fail("Megatron-LM of era " + c.features.era + " interleaves only with pp > 2");
  if (c.virtual_stages > 1 && c.microbatches() % c.pp != 0)
    fail("interleaving needs the micro-batch count (" + std::to_string(c.microbatches()) +
         ") divisible by pp");
  if (c.recompute_layers < 0) fail("recompute layers must be >= 0 (0: every layer)");
  if (c.recompute_layers > 0) {
    if (c.recompute != Recompute::full) fail("recompute layers need full recomputation");
    const std::int64_t chunk = chunk_layers(m, c);
    if (c.recompute_layers >= chunk)
      fail("recompute layers " + std::to_string(c.recompute_layers) + " must be fewer than a " +
           "model chunk's " + std::to_string(chunk) + " layers (all of them: full recomputation)");
  }
}

std::optional<StageLayers> split_stages(std::int64_t layers, int pp, int first, int last) {
  if (pp < 1 || first < 0 || last < 0) return std::nullopt;
  if (first == 0 && last == 0) {
    if (layers % pp != 0) return std::nullopt;
    const std::int64_t n = layers / pp;
    return StageLayers{n, n, n};
  }
  if (pp < 2) return std::nullopt;
  const int others = pp - (first > 0) - (last > 0);
  const std::int64_t rest = layers - first - last;
  if (others == 0) {
    if (rest != 0) return std::nullopt;
    return StageLayers{first, 0, last};
  }
  if (rest < others || rest % others != 0) return std::nullopt;
  const std::int64_t n = rest / others;
  return StageLayers{first > 0 ? first : n, n, last > 0 ? last : n};
}

namespace {

StageLayers stages_of(const GptShape& m, const MegatronConfig& c) {
  const auto split = split_stages(m.layers, c.pp, c.first_stage_layers, c.last_stage_layers);
  if (!split)
    throw UsageError("Megatron pp=" + std::to_string(c.pp) + ": layers " +
                     std::to_string(m.layers) + " do not split over the stages");
  return *split;
}

}  // namespace

std::int64_t chunk_layers(const GptShape& m, const MegatronConfig& c) {
  const StageLayers st = stages_of(m, c);
  return (c.uneven() && c.pp > 2 ? st.middle : st.first) / c.virtual_stages;
}

double recompute_share(const GptShape& m, const MegatronConfig& c) {
  if (c.recompute != Recompute::full) return 0;
  if (c.recompute_layers == 0) return 1;
  return static_cast<double>(c.recompute_layers) / static_cast<double>(chunk_layers(m, c));
}

std::string recompute_words(const GptShape& m, const MegatronConfig& c) {
  if (!c.block_recompute()) return std::string(name_of(c.recompute));
  return "block " + std::to_string(c.recompute_layers) + "/" + std::to_string(chunk_layers(m, c));
}

double megatron_block_params(const GptShape& m) {
  return static_cast<double>(m.block_linear_params()) +
         (m.llama() ? 2 : 13) * static_cast<double>(m.hidden);
}

MegatronMemory megatron_memory(const GptShape& m, const MegatronConfig& c, bool flash_attention) {
  MegatronMemory mem;
  const double h = static_cast<double>(m.hidden), s = static_cast<double>(m.seq);
  const double V = static_cast<double>(m.vocab);
  const double t = c.tp;
  // First stage: its layers and the (vocab-parallel) embedding; position embedding replicated
  // (GPT; Llama has none). Block: linear weights, GPT's biases and LNs, Llama's two RMSNorm gains.
  // The last stage holds the output layer's weight: its own when untied, else a copy of the word
  // embeddings when pp > 1 (Megatron-Core's LanguageModule); tied at pp = 1 there is one weight.
  // The stage with the most parameters sets the memory (uneven stages: a middle one may).
  const double block = megatron_block_params(m);
  const StageLayers st = stages_of(m, c);
  const double output = c.untied(m) || c.pp > 1 ? V * h / t : 0;
  const double first =
      static_cast<double>(st.first) * block / t + V * h / t + (m.llama() ? 0 : s * h);
  mem.params_local = c.pp == 1 ? first + output : first;
  mem.params_first = mem.params_local;
  if (c.pp > 1) {
    if (c.pp > 2)
      mem.params_local = std::max(mem.params_local, static_cast<double>(st.middle) * block / t);
    mem.params_local =
        std::max(mem.params_local, static_cast<double>(st.last) * block / t + output);
  }
  mem.weights = mem.params_local * static_cast<double>(size_of(c.act_dtype));
  mem.gradients = c.features.grad_bytes(c.pp, static_cast<double>(size_of(c.act_dtype))) *
                  mem.params_local;
  mem.optimizer = 12 * mem.params_local / (c.distributed_optimizer ? c.dp : 1);
  // Bytes per layer per micro-batch: Korthikanti's formula for GPT blocks, Megatron-Core's saved
  // tensors for Llama blocks (megatron_activations.hpp).
  // Block recomputation: the recomputed share of the layers keeps full recomputation's, the
  // rest no recomputation's.
  double per_layer = megatron_layer_activation_bytes(m, c, flash_attention);
  if (c.block_recompute()) {
    MegatronConfig kept = c;
    kept.recompute = Recompute::none;
    const double share = recompute_share(m, c);
    per_layer = share * per_layer +
                (1 - share) * megatron_layer_activation_bytes(m, kept, flash_attention);
  }
  mem.activation_per_layer = per_layer;
  // 1F1B: the first stage holds min(pp, micro-batches) micro-batches of its L/pp layers, i.e. up
  // to L layers' worth; interleaving adds the factor 1 + (pp-1)/(pp*v) (Korthikanti,
  // Section 4.2.3). Stage i holds min(pp - i, m) micro-batches of its layers: the first when even.
  // The last stage also holds, while one micro-batch's loss runs, its logits twice: the 16-bit
  // output and the fp32 copy the cross-entropy works in (megatron_cross_entropy).
  const double interleave = c.virtual_stages > 1 ? 1 + (c.pp - 1.0) / (c.pp * c.virtual_stages) : 1;
  mem.logits = s * static_cast<double>(c.micro_batch) * V / t *
               (static_cast<double>(size_of(c.act_dtype)) + 4);
  double layers = 0;
  for (int i = 0; i < c.pp; ++i) {
    const double n = static_cast<double>(st.of(i, c.pp)) *
                     std::min<double>(c.pp - i, static_cast<double>(c.microbatches())) * interleave;
    layers = std::max(layers, n);
    mem.activations = std::max(mem.activations, per_layer * n + (i == c.pp - 1 ? mem.logits : 0));
  }
  mem.inflight_layers = layers;
  return mem;
}

namespace {

// One point-to-point send of `bytes` between ranks `ip` apart: a 2-rank all-gather moves
// S * 1/2 per rank, so S = 2 * bytes, costed on the link the placement rule gives.
double p2p_us(const Machine& mc, int ip, double bytes) {
  return cost_collective(mc, CollKind::all_gather, Group::data, 2, ip, 2 * bytes).time_us;
}

// The passes over the gradients that every iteration makes outside the layers, where they lie
// on the critical path; `shard` = the parameters whose gradients the optimizer steps.
//  - Zeroing: the local and Megatron-Core DDPs zero their fp32 gradient buffer before the first
//    forward (train_step: zero_grad_buffer; 4 bytes a parameter); the first stage's delays its
//    forward, the other stages' run while they wait for their first input. PyTorch's DDP (sc21
//    without a pipeline) leaves its 16-bit gradients to the optimizer's set-to-None.
//  - Megatron-Core (start_grad_sync, per bucket): the NaN check reads the bucket (4 bytes) and
//    the 1/dp scaling reads and writes it (8; none at dp = 1), on the compute stream before the
//    bucket's collective. The first stage runs them in each chunk's last backward; the others
//    launch a chunk's reduction as many backward steps later as their pipeline rank (the default
//    --delay-grad-reduce, today --align-grad-reduce: schedules.py), so that all stages reduce a
//    chunk together. A replay of the interleaved order finds the iteration longer by one stage's
//    passes with that delay, by every stage's without it (results/model/interleaved-schedule.py):
//    the first stage's are charged.
//  - Local DDP (2021, 2022; allreduce_gradients): `main_grad /= dp` on every stage at once
//    after the flush, before its all-reduce (8 bytes; at dp = 1 too); with 16-bit gradients and
//    no contiguous buffer (the sc21 launcher) the gradients are flattened, divided and copied
//    back (4 bytes each) and there is no buffer to zero.
//  - 16-bit gradients (PyTorch DDP, the sc21 local DDP, NeMo's grad_reduce_in_fp32 = False): the
//    optimizer copies its shard's to fp32 first (_copy_model_grads_to_main_grads: 6 bytes).
//  Zeroing, the NaN check and the scaling read and write the buffer's dtype (2 bytes, not 4).
//  - The optimizer's gradient norm for clipping (--clip-grad 1.0 by default; clip_grad_norm_fp32)
//    reads its gradients (4 bytes a shard parameter); the clipping's scaling only runs when the
//    norm exceeds the bound and is not counted. With fp16 loss scaling (feature fp16_unscale,
//    era sc21) it first unscales them and checks for infinities (8 bytes a shard parameter).
// Not counted: PyTorch DDP's copies into and out of its buckets.
double grad_passes_us(const Machine& mc, const MegatronConfig& c, const MegatronMemory& mem,
                      double shard) {
  const auto pass = [&](double bytes) {
    return bytes > 0 ? mem_term(mc, bytes, MemClass::copy).time_us : 0.0;
  };
  const MegatronFeatures& f = c.features;
  const bool param_dtype = f.grads_in_param_dtype(c.pp);
  const double g = f.grad_bytes(c.pp, static_cast<double>(size_of(c.act_dtype)));
  // 16-bit gradients: the optimizer first copies its shard's to fp32 (.float(): read g, write 4).
  double us = pass(4 * shard) + pass(f.fp16_unscale ? 8 * shard : 0) +
              pass(param_dtype ? (g + 4) * shard : 0);
  switch (f.ddp(c.pp)) {
    case DdpImpl::core:
      us += pass(g * mem.params_first) +
            pass(((f.grad_nan_check ? g : 0) + (c.dp > 1 ? 2 * g : 0)) * mem.params_first);
      break;
    case DdpImpl::local:
      // fp32 buffer: zeroed, divided in place. 16-bit gradients (no buffer): flattened,
      // divided and copied back, 2 g bytes each.
      us += param_dtype ? pass(6 * g * mem.params_local)
                        : pass(g * mem.params_first) + pass(2 * g * mem.params_local);
      break;
    case DdpImpl::torch:
      break;  // the optimizer's copy to fp32 above
  }
  return us;
}

}  // namespace

GptPlanOptions megatron_layer_options(const MegatronConfig& c) {
  GptPlanOptions o;
  o.grid.gy = c.tp;
  o.batch = c.micro_batch;
  o.act_dtype = c.act_dtype;
  return o;
}

ComputeTerms megatron_compute_terms(const GptShape& m, const MegatronConfig& c, const Machine& mc) {
  // Megatron-LM runs bias + GELU and bias-dropout-add as kernels of their own (Megatron-Core's
  // bias_gelu_impl and bias_dropout_add, Transformer Engine's linears called with
  // skip_bias_add): separate passes, whatever the machine says of the 4D trainer.
  return compute_terms(m, megatron_layer_options(c), mc, false);
}

MegatronPrediction predict_megatron(const GptShape& m, const MegatronConfig& c,
                                    const Machine& mc) {
  validate_megatron(m, c, mc);
  return predict_megatron(m, c, mc, megatron_compute_terms(m, c, mc));
}

MegatronPrediction predict_megatron(const GptShape& m, const MegatronConfig& c, const Machine& mc,
                                    const ComputeTerms& ct) {
  MegatronPrediction p;
  p.config = c;
  p.memory = megatron_memory(m, c, mc.flash_attention);
  p.memory_limit_bytes = memory_limit_bytes(mc);
  p.fits = p.memory.total() <= p.memory_limit_bytes;

  MegatronTime& T = p.time;
  T.microbatches = c.microbatches();
  const double mb = static_cast<double>(T.microbatches);
  // Megatron's column/row-parallel layers are the 4D plan's on the grid 1 x tp x 1 x 1.
  T.layer_fwd_us = ct.block.fwd_us;
  T.layer_bwd_us = ct.block.bwd_us;
  T.recompute_us = c.recompute == Recompute::full        ? ct.block.fwd_us
                   : c.recompute == Recompute::selective ? ct.block.attn_fwd_us
                                                         : 0;
  const double a = static_cast<double>(size_of(c.act_dtype));
  if (!mc.flash_attention) {
    // Megatron's unfused attention (baddbmm, fused scale-mask-softmax, dropout, bmm) computes
    // the full s x s products and masks them afterwards: the causal half that compute_terms
    // costs once more. GPT's attention dropout (Megatron's default 0.1; Llama trains without)
    // reads the probabilities and writes them with a 1-byte mask, and its backward the same.
    // Selective recomputation repeats this core attention: its products, the scores' trips
    // through memory (compute_terms' 4 bytes a element) and the dropout.
    const double scores = static_cast<double>(c.micro_batch) * (m.heads / c.tp) *
                          static_cast<double>(m.seq) * static_cast<double>(m.seq);
    const double gemm_fwd = ct.block.attn_fwd_us - mc.kernel_overhead_us;
    const MemTerm dropout = m.llama() ? MemTerm{} : mem_term(mc, (2 * a + 1) * scores, MemClass::dropout);
    T.layer_fwd_us += gemm_fwd + dropout.time_us;
    T.layer_bwd_us += 2 * gemm_fwd + dropout.bwd_us;
    if (c.recompute == Recompute::full) T.recompute_us = T.layer_fwd_us;
    if (c.recompute == Recompute::selective)
      T.recompute_us = 2 * gemm_fwd + mem_term(mc, 4 * a * scores, MemClass::softmax).time_us + dropout.time_us;
  }
  // Block recomputation: the first recompute_layers of each chunk repeat their forward, the
  // others none; per layer of a stage (every chunk alike) that is the share of a full recompute.
  const double share = recompute_share(m, c);
  T.recompute_us *= c.recompute == Recompute::full ? share : 1;
  // The head's loss as Megatron-LM computes it (megatron_cross_entropy) in place of the 4D
  // model's one pass over the logits.
  const MemTerm ce = megatron_cross_entropy(
      mc, static_cast<double>(ct.tokens) * static_cast<double>(m.vocab) / c.tp,
      static_cast<double>(size_of(c.act_dtype)));
  T.cross_entropy_us = ce.time_us + ce.bwd_us;
  T.head_us = ct.head.fwd_us + ct.head.bwd_us - ct.head.ce.time_us - ct.head.ce.bwd_us +
              T.cross_entropy_us;
  // Unfused gradient accumulation: a pass over the layer's gradients every micro-batch. Local
  // DDP with its fp32 buffer: main_grad (fp32) += grad (16-bit): read 2 + 4, write 4 bytes per
  // parameter. 16-bit gradients (torch DDP, the sc21 local DDP): autograd adds into the 16-bit
  // param.grad from the second micro-batch on: read 2 + 2, write 2.
  const MegatronFeatures& f = c.features;
  const double layer_params = megatron_block_params(m) / c.tp;
  if (!f.grad_accumulation_fusion) {
    const double mb_count = static_cast<double>(c.microbatches());
    const double bytes = f.grads_in_param_dtype(c.pp) ? 6 * (mb_count - 1) / mb_count : 10;
    if (bytes > 0) T.grad_accumulation_us = mem_term(mc, bytes * layer_params, MemClass::grad_accum).time_us;
  }

  // Tensor parallelism, per layer and micro-batch: with SP two all-gathers and two
  // reduce-scatters of the s*b*h activation forward, the same backward (each swapped); without
  // SP two all-reduces each way. A full recompute repeats the forward ones.
  const double act_bytes = static_cast<double>(m.seq) * c.micro_batch * m.hidden * a;
  if (c.tp > 1) {
    const double ag =
        cost_collective(mc, CollKind::all_gather, Group::y, c.tp, 1, act_bytes).time_us;
    const double rs =
        cost_collective(mc, CollKind::reduce_scatter, Group::y, c.tp, 1, act_bytes).time_us;
    const double fwd =
        c.sequence_parallel
            ? 2 * ag + 2 * rs
            : 2 * cost_collective(mc, CollKind::all_reduce, Group::y, c.tp, 1, act_bytes).time_us;
    T.tp_fwd_us = fwd;
    T.tp_bwd_us = fwd + (c.recompute == Recompute::full ? share * fwd : 0);
    if (c.tp_comm_overlap && c.sequence_parallel) {
      // Transformer Engine's userbuffers (v1.8, module/base.py initialize_ub): forward, the
      // all-gathers ring-exchanged under QKV and MLP-up, the reduce-scatters pipelined in 4
      // splits under attention-out and MLP-down; backward, the output gradient's all-gather
      // ring-exchanged under the dgrad of attention-out and MLP-down, and for QKV and MLP-up the
      // input's all-gather beside the dgrad GEMM and the reduce-scatter of dX beside the wgrad
      // GEMM (bulk): six collectives, the two input gathers that sequence parallelism repeats for
      // the weight gradients included.
      const auto& L = ct.block.lin;  // qkv, attn_out, mlp_up, mlp_down
      const std::string_view dt = name_of(c.act_dtype);
      const TpMethod ring = TpMethod::ring_exchange, pipe = TpMethod::pipeline,
                     bulk = TpMethod::bulk;
      const TpOverlap f[] = {tp_overlap_pair(mc, L[0].fwd, ag, ring, c.tp, dt),
                             tp_overlap_pair(mc, L[1].fwd, rs, pipe, 4, dt),
                             tp_overlap_pair(mc, L[2].fwd, ag, ring, c.tp, dt),
                             tp_overlap_pair(mc, L[3].fwd, rs, pipe, 4, dt)};
      const TpOverlap b[] = {tp_overlap_pair(mc, L[3].dx, ag, ring, c.tp, dt),
                             tp_overlap_pair(mc, L[2].dx, ag, bulk, 1, dt),
                             tp_overlap_pair(mc, L[2].dw, rs, bulk, 1, dt),
                             tp_overlap_pair(mc, L[1].dx, ag, ring, c.tp, dt),
                             tp_overlap_pair(mc, L[0].dx, ag, bulk, 1, dt),
                             tp_overlap_pair(mc, L[0].dw, rs, bulk, 1, dt)};
      const auto cost = [&](const auto& pairs) {
        double us = 0;
        for (const TpOverlap& o : pairs) us += o.exposed_us + mc.compute_slowdown * o.hidden_us;
        return us;
      };
      T.tp_fwd_us = cost(f);
      T.tp_bwd_us = cost(b) + (c.recompute == Recompute::full ? share * T.tp_fwd_us : 0);
    }
  }
  const StageLayers st = stages_of(m, c);
  const double layer_fwd = T.layer_fwd_us + T.tp_fwd_us;
  const double layer_bwd = T.layer_bwd_us + T.recompute_us + T.tp_bwd_us + T.grad_accumulation_us;
  // 1F1B (Narayanan et al. SC21, Section 2.2): the slowest stage runs all m micro-batches, the
  // others' times fill and drain the pipeline, 1/v of them with interleaving; the last stage (the
  // only one without a pipeline) also runs the LM head and loss for every micro-batch. Even
  // stages: m (stage + head) + (pp-1)/v stage.
  double slowest = 0, all = 0, most = 0;
  for (int i = 0; i < c.pp; ++i) {
    const double n = static_cast<double>(st.of(i, c.pp));
    const double t = n * (layer_fwd + layer_bwd) + (i == c.pp - 1 ? T.head_us : 0);
    slowest = std::max(slowest, t);
    all += t;
    most = std::max(most, n);
  }
  T.stage_fwd_us = most * layer_fwd;
  T.stage_bwd_us = most * layer_bwd;
  T.bubble_us = (all - slowest) / c.virtual_stages;
  const double pipeline_us = mb * slowest + T.bubble_us;

  // Point-to-point: the s*b*h activation to the next stage, tp*dp ranks away in Megatron's rank
  // order (tp fastest, then dp, then pp): 1/tp of it when sequence parallelism shards it, or
  // when the era's scatter-gather optimization sends a slice that the receiver then all-gathers
  // over its tensor-parallel group. Each stage sends forward and backward for every micro-batch
  // of every chunk; the sends are blocking in the schedule, so all v*m of them plus the pp-1 of
  // the fill and drain are on the critical path.
  if (c.pp > 1) {
    const bool gather = f.scatter_gather_p2p && !c.sequence_parallel && c.tp > 1;
    const bool sliced = c.sequence_parallel || gather;
    T.p2p_one_us = p2p_us(mc, c.tp * c.dp, sliced ? act_bytes / c.tp : act_bytes);
    if (gather)
      T.p2p_one_us +=
          cost_collective(mc, CollKind::all_gather, Group::y, c.tp, 1, act_bytes).time_us;
    T.p2p_us = 2 * (c.virtual_stages * mb + c.pp - 1) * T.p2p_one_us;
    if (f.overlap_p2p && c.virtual_stages > 1) {
      // Overlapped (interleaved schedule, Megatron-Core): the fill and the drain still wait for
      // their exchanges, and they cross every virtual stage in turn: the first micro-batch's
      // forward runs chunk k on stages 0 .. pp-1 and comes back from the last stage to the first
      // for chunk k+1, so 2 (pp v - 1) exchanges lie on the critical path (a replay of
      // Megatron-Core's interleaved order with each exchange a delay gives exactly this while an
      // exchange is shorter than a chunk's forward: results/model/interleaved-schedule.py). Each
      // of the 2 v m exchanges runs beside the next chunk's compute, exposing only what it takes
      // beyond the shorter pass of a chunk, and slows that compute by the machine's
      // compute_slowdown while it runs.
      const double sends = 2.0 * c.virtual_stages * mb;
      const double chunk = std::min(T.stage_fwd_us, T.stage_bwd_us) / c.virtual_stages;
      const double one = T.p2p_one_us * (1 + mc.comm_slowdown);
      T.p2p_us = 2.0 * (c.pp * c.virtual_stages - 1) * T.p2p_one_us +
                 sends * std::max(0.0, one - chunk);
      T.p2p_hidden_us = sends * std::min(one, chunk);
    }
  }

  // Data parallelism over dp ranks tp apart. Megatron-Core: fp32 gradients reduce-scattered
  // (distributed optimizer) or all-reduced, and bf16 parameters all-gathered after the step,
  // the reduce-scatter hidden under the last micro-batch's backward, the all-gather under the
  // first micro-batch's forward (--overlap-grad-reduce, --overlap-param-gather). Local DDP: the
  // same collectives after the pipeline's flush, all exposed. Torch DDP: 16-bit gradients
  // all-reduced under the last micro-batch's backward.
  const double params = p.memory.params_local;
  double hidden_under = 0;
  if (c.dp > 1) {
    const DdpImpl ddp = f.ddp(c.pp);
    const double grad_bytes = f.grad_bytes(c.pp, a);
    const bool scatter = c.distributed_optimizer && ddp != DdpImpl::torch;
    // Each call of a collective pays its latency. Megatron-Core's DDP reduces the first
    // pipeline stage's first model chunk in buckets of max(4e7, 1e6 dp) parameters and every
    // other chunk whole (distributed_data_parallel.py at f2e5db402c: bucket_size, and no
    // bucketing off the first stage or the first chunk), the parameter gather in the same
    // buckets; PyTorch DDP in buckets of 25 MiB (bucket_cap_mb); Megatron's local DDP its
    // contiguous buffer in one call.
    const int v = c.virtual_stages;
    const int calls =
        ddp == DdpImpl::core
            ? static_cast<int>(std::ceil(params / v / std::max(4e7, 1e6 * c.dp))) + v - 1
        : ddp == DdpImpl::torch
            ? std::max(1, static_cast<int>(std::ceil(params * grad_bytes / (25.0 * 1024 * 1024))))
            : 1;
    const auto in_calls = [&](CollKind kind, double bytes) {
      return calls * cost_collective(mc, kind, Group::data, c.dp, c.tp, bytes / calls).time_us;
    };
    if (scatter) {
      T.dp_rs_us = in_calls(CollKind::reduce_scatter, params * grad_bytes);
      T.dp_ag_us = in_calls(CollKind::all_gather, params * a);
    } else {
      T.dp_rs_us = in_calls(CollKind::all_reduce, params * grad_bytes);
    }
    if (ddp == DdpImpl::local) {
      T.dp_exposed_us = T.dp_rs_us + T.dp_ag_us;
    } else {
      const double slow = 1 + mc.comm_slowdown;
      const double rs = T.dp_rs_us * slow, ag = T.dp_ag_us * slow;
      // Shared NICs: a tensor-parallel group that spans nodes sends its collectives through the
      // NICs the data-parallel reduction uses, so of the micro-batch's backward (forward) the
      // reduce-scatter (all-gather) has the time those collectives leave the NICs free - the
      // end of both on one link at best, as the 4D replay's shared links (link_share.hpp).
      const bool tp_on_nics = c.tp > mc.ranks_per_node();
      const double bwd_window = T.stage_bwd_us - (tp_on_nics ? most * T.tp_bwd_us : 0);
      const double fwd_window = T.stage_fwd_us - (tp_on_nics ? most * T.tp_fwd_us : 0);
      // Interleaved, Megatron-Core synchronises each model chunk on its own (schedules.py): a
      // chunk's reduce-scatter starts with its last backward, the chunks' ends pp chunk-passes
      // and pp exchanges apart in the drain (as their first forwards are in the fill: the
      // replay in results/model/interleaved-schedule.py), and its all-gather is issued a chunk
      // ahead of its first forward.
      const int gaps = v > 1 && ddp == DdpImpl::core ? c.pp : 0;
      double exposed_rs = chunked_reduction_exposed_us(
          v, rs / v, bwd_window / v, gaps * (T.stage_bwd_us / v + T.p2p_one_us));
      double exposed_ag = chunked_gather_exposed_us(
          v, ag / v, fwd_window / v, gaps * (T.stage_fwd_us / v + T.p2p_one_us));
      // The embedding's bucket. Both DDPs bucket the first stage's parameters in the reverse of
      // their registration order (Megatron-Core: param_and_grad_buffer.py, "roughly follow
      // backprop order"; PyTorch DDP likewise), so the word and position embeddings, registered
      // first and given their gradient last, are in the last gradient bucket: its reduction
      // starts only once the backward has ended. With the distributed optimizer's overlapped
      // parameter gather, the bucket gathered first, at zero_grad before the forward, is the
      // same one, and the first layer waits for it (distrib_optimizer.py: the next bucket's
      // gather starts when the previous one is waited for). Neither hides: a lower bound on
      // what is exposed (the bucket may hold more than the embeddings).
      const double embeddings = static_cast<double>(m.vocab) * static_cast<double>(m.hidden) / c.tp +
                                (m.llama() ? 0 : static_cast<double>(m.seq) * m.hidden);
      T.dp_tail_rs_us = cost_collective(mc, scatter ? CollKind::reduce_scatter : CollKind::all_reduce,
                                        Group::data, c.dp, c.tp, embeddings * grad_bytes)
                            .time_us * slow;
      T.dp_tail_ag_us = scatter ? cost_collective(mc, CollKind::all_gather, Group::data, c.dp,
                                                  c.tp, embeddings * a)
                                          .time_us * slow
                                : 0;
      exposed_rs = std::max(exposed_rs, std::min(rs, T.dp_tail_rs_us));
      exposed_ag = std::max(exposed_ag, std::min(ag, T.dp_tail_ag_us));
      T.dp_exposed_us = exposed_rs + exposed_ag;
      hidden_under = rs - exposed_rs + ag - exposed_ag;
    }
  }
  // Tied embeddings split over the pipeline: finalize_model_grads all-reduces the word
  // embeddings' gradient (the buffer's dtype) between the first and the last stage
  // (tp * dp * (pp - 1) ranks apart) once the pipeline has drained, before the optimizer:
  // nothing runs beside it.
  if (c.pp > 1 && !c.untied(m)) {
    const double embedding = static_cast<double>(m.vocab) * static_cast<double>(m.hidden) / c.tp;
    T.embedding_grads_us = cost_collective(mc, CollKind::all_reduce, Group::data, 2,
                                           c.tp * c.dp * (c.pp - 1),
                                           f.grad_bytes(c.pp, a) * embedding)
                               .time_us;
  }
  T.interference_us = mc.compute_slowdown * (hidden_under + T.p2p_hidden_us);
  // AdamW over the local shard: read fp32 master, grad, m, v and write master, m, v, plus the
  // 16-bit working copy (as the 4D model's optimizer term).
  const double shard = params / (c.distributed_optimizer ? c.dp : 1);
  T.optimizer_us = mem_term(mc, shard * (28 + a), MemClass::adamw).time_us;
  T.grad_passes_us = grad_passes_us(mc, c, p.memory, shard);
  T.iteration_us = pipeline_us + T.p2p_us + T.dp_exposed_us + T.embedding_grads_us +
                   T.interference_us + T.optimizer_us + T.grad_passes_us;
  return p;
}

}  // namespace ovb::model
