// The GPT and Llama models under the 4D algorithm (docs/algorithm.md), as data: shapes and
// presets, the local geometry of every fully connected layer on a grid, the validity rules, and the
// list of collectives one training iteration issues (kind, group, count, dtype, phase, layer).
//
// This is the one description of the layer schedule: endtoend/ (gpt4d) sizes its buffers and
// issues its collectives from it, analysis/ (ovb-model) costs it, and the tests check that gpt4d's
// traced collectives equal this list. Change the algorithm here first. The order of one
// iteration's steps (compute, issues, waits, buffer slots) is ovb/gpt_schedule.hpp's.
//
// Layout (per rank, T = tokens per rank and micro-step = micro_batch * seq, whole sequences; the
// rank's batch / (Gdata*Gz) sequences run as micro-steps of micro_batch sequences each):
//  - residual stream [T, h/Gx]: features split over X, replicated over Y;
//  - block: LN1 -> QKV (normal, h->3h, heads over Y, q|k|v per head) -> attention (local heads)
//    -> attention-out (transposed, h->h) -> +residual -> LN2 -> MLP-up (normal, h->4h) -> GELU
//    -> MLP-down (transposed, 4h->h) -> +residual. Layer-norm statistics (sum, sum of squares) are
//    all-reduced over X; in backward the two row sums of the LN gradient likewise.
//  - token embedding [V, h/Gx] and position embedding [seq, h/Gx], split over X along the hidden
//    dimension, replicated over Y, Z and data (their gradients are reduced over Z and data);
//  - final LN, then LM head as a normal layer h->V (vocabulary over Y, no bias), and a
//    vocab-parallel cross-entropy: each Y rank all-gathers (max, sum exp, target logit) per token
//    over Y and combines them locally (only sum collectives exist);
//  - linear biases are sharded like their output features and replicated over the other TP dim;
//    layer-norm and bias gradients are all-reduced over Z (tokens differ), then over data.
//  - data-parallel gradient all-reduce: one bucket per block (its weight-gradient shards and
//    small parameters), and one "head" bucket (LM-head shard, final LN, embeddings). With the
//    sharded optimizer (ZeRO-1) each bucket is instead reduce-scattered over data into equal
//    chunks (data_chunk()), each data rank updates its chunk, and the step all-gathers the
//    updated working weights of every bucket over data.
//  - the loss sum and the gradient-norm sum of squares are all-reduced over the world (2 floats).
//  - micro-steps (gradient accumulation): every micro-step runs the forward and backward with all
//    their tensor-parallel collectives and Z reduce-scatters (each adds into the accumulated
//    shard); the Z all-reduces of small parameters and the data-parallel buckets run once, in
//    the last micro-step (they are linear: the accumulated sum is reduced once). With sharded
//    gradients (ZeRO-2) no full gradient outlives its micro-step: both run in every micro-step
//    and the reduce-scattered chunks accumulate.
// Collectives over a group of size 1 are not issued and not listed.
//
// Llama (Arch::llama) changes the block and head, not the schedule's structure:
//  - RMSNorm instead of LN: one statistic (sum of squares, T fp32 over X) forward, one row sum
//    backward; a gain, no bias;
//  - QKV h -> (heads + 2 kv_heads) * head_dim with grouped-query attention: the rows are ordered
//    by K/V group, [q of the group's heads/kv_heads query heads | k | v], and Y splits whole
//    groups, so kv_heads % Gy == 0 (K/V heads are never replicated over Y); rotary embeddings on q
//    and k;
//  - MLP-up h -> 2 ffn with gate and up rows interleaved (row 2j gate j, 2j+1 up j, so every Y
//    slice holds matching pairs), SwiGLU, MLP-down ffn -> h;
//  - no linear biases, no position embedding; the LM head is untied (as for GPT here).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ovb/backend.hpp"
#include "ovb/dtype.hpp"
#include "ovb/grid.hpp"

namespace ovb {

// ---- Model shape ----

enum class Arch { gpt, llama };
std::string_view name_of(Arch a);     // "gpt", "llama"
Arch parse_arch(std::string_view s);  // throws UsageError naming the accepted values

inline constexpr double kDefaultRopeTheta = 10000;  // the RoPE paper's base

struct GptShape {
  Arch arch = Arch::gpt;
  std::int64_t layers = 0, hidden = 0, heads = 0, seq = 2048, vocab = 50304;
  std::int64_t kv_heads = 0;              // K/V heads (Llama's GQA); 0: as many as query heads
  std::int64_t ffn_hidden = 0;            // MLP width; 0: 4 * hidden (GPT; Llama requires it)
  double rope_theta = kDefaultRopeTheta;  // Llama's rotary base
  std::string preset;  // name when it came from a preset, else empty
  std::int64_t head_dim() const { return hidden / heads; }
  std::int64_t kv() const { return kv_heads > 0 ? kv_heads : heads; }
  std::int64_t ffn() const { return ffn_hidden > 0 ? ffn_hidden : 4 * hidden; }
  bool llama() const { return arch == Arch::llama; }
  // Weight elements of one block's four linear layers (biases not included): GPT 12 h^2; Llama
  // h (heads + 2 kv) d + h^2 + 3 h ffn.
  std::int64_t block_linear_params() const;
  // Parameters of the model as laid out here. GPT: linear biases, LN, token and position
  // embeddings, untied LM head. Llama: no biases, RMSNorm gains, token embedding, untied head.
  std::int64_t parameter_count() const;
  // Model FLOP of one iteration over `batch` sequences (metrics::transformer_model_flop).
  double model_flop(std::int64_t batch) const;
};

struct GptPreset {
  const char* name;
  std::int64_t layers, hidden, heads;
  Arch arch = Arch::gpt;
  std::int64_t kv_heads = 0, ffn_hidden = 0, vocab = 0;  // 0: not part of the preset
  double rope_theta = kDefaultRopeTheta;
};
// GPT-3 sizes (125M..175B), the Megatron-LM 2021 paper's (18B..1T), Llama 3's (llama3-8B, -70B,
// -405B, as published with their 128256-token vocabulary) and "tiny", "llama-tiny" for tests.
const std::vector<GptPreset>& gpt_presets();
// Sets the shape (arch, layers/hidden/heads, and for Llama kv_heads, ffn_hidden, vocab,
// rope_theta; and preset) from a name, case-insensitive, "gpt-" prefix allowed. Throws
// UsageError listing the known names.
GptShape gpt_preset(std::string_view name);

// ---- Fully connected layers ----

enum class LinearId { qkv, attn_out, mlp_up, mlp_down, lm_head };
std::string_view name_of(LinearId id);  // "qkv", "attn_out", "mlp_up", "mlp_down", "lm_head"

struct LinearSpec {
  LinearId id;
  std::int64_t in = 0, out = 0;  // weight W[out, in]
  bool transposed = false;       // in over Y, out over X (else in over X, out over Y)
  bool bias = true;
};

// The four layers of a block, in forward order: QKV, attention-out (T), MLP-up, MLP-down (T).
// GPT: h->3h, h->h, h->4h, 4h->h with biases; Llama: h->(heads+2kv)d, h->h, h->2ffn, ffn->h
// without.
std::vector<LinearSpec> block_linears(const GptShape& m);
LinearSpec lm_head_linear(const GptShape& m);

// Per-rank geometry of one layer on a grid (sizes in elements).
struct LinearGeom {
  LinearSpec spec;
  Dim in_dim, out_dim;            // the dims that split `in` and `out`
  std::int64_t in_local = 0;      // in / G(in_dim)
  std::int64_t out_local = 0;     // out / G(out_dim)
  std::int64_t block = 0;         // out_local * in_local: the weight block after the Z all-gather
  std::int64_t shard = 0;         // block / Gz: what a rank stores
  std::int64_t bias_local = 0;    // out_local when the layer has a bias, else 0
  // Forward: Y_part = X W_blk^T is partial over in_dim: all-reduce over in_dim.
  // Backward: dX = dY W_blk is partial over out_dim: all-reduce over out_dim.
};
LinearGeom linear_geom(const LinearSpec& spec, const GridShape& g);

// ---- Configuration of one training iteration ----

// With ORS, the Z reduce-scatters of dW stay asynchronous but at most this many dW blocks are
// in flight: the dW GEMM of a layer waits for the reduce-scatter issued `window` layers before,
// whose block it reuses. 4 = one transformer block: each reduce-scatter has the backward of the
// next block's same layer (its dX and dW GEMMs and attention) to hide behind, which is what the
// performance model assumes ORS hides, at 4 fp32 blocks of memory instead of 4 per block.
inline constexpr int kDefaultOrsWindow = 4;
// With the tp overlap flag: the row slices a forward GEMM and its output all-reduce are cut into.
inline constexpr int kDefaultTpChunks = 2;

struct GptPlanOptions {
  GridShape grid;
  std::int64_t batch = 0;         // global batch, sequences
  // Sequences per data-and-Z shard per micro-step (Megatron's micro-batch size); the global batch
  // is micro_batch x micro_steps x Gdata x Gz. 0: the whole local batch, one micro-step.
  std::int64_t micro_batch = 0;
  bool recompute = false;         // full activation recomputation (one more forward per block)
  bool cache_weights = false;     // keep the Z-gathered weight blocks from forward to backward
  int ors_window = kDefaultOrsWindow;  // with ORS: dW blocks whose reduce-scatter may be in flight
  DType act_dtype = DType::f32;   // weights and activations (bf16 on GPU, fp32 on host)
  DType grad_dtype = DType::f32;  // weight gradients: Z reduce-scatter and data all-reduce
  bool oar = false, ors = false, oag = false;  // overlap flags (they change memory, not the set)
  // Overlap flag tp: each forward output all-reduce (role output_reduce, group > 1) chunked under
  // its GEMM - the GEMM runs as tp_chunks row slices of the tokens, each slice's all-reduce issued
  // on the tp stream as soon as the slice is computed, all waited for after the last slice. It
  // splits those collectives (tp_chunks of count / tp_chunks each) and needs no memory: the
  // chunks are row slices of the layer's output. tp_chunks divides tokens_per_rank() when otp.
  bool otp = false;
  int tp_chunks = kDefaultTpChunks;
    // fp32 master weights and AdamW moments split over the data group (ZeRO-1): gradient buckets
  // reduce-scattered over data instead of all-reduced, updated weights all-gathered in the step.
  bool shard_optimizer = false;
  // Gradients split over the data group as well (ZeRO-2; requires shard_optimizer): each bucket's
  // full gradient lives only in a bucket buffer while it is computed and reduce-scattered (every
  // micro-step), the rank keeps the fp32 sum of its chunks alone.
  bool shard_gradients = false;
  double gemm_workspace_bytes = 32.0 * 1024 * 1024;  // cuBLASLt workspace (0 on the host backend)
};

// The cuBLASLt workspace gpt4d allocates on the CUDA backend.
inline constexpr std::size_t kCudaGemmWorkspace = 32u << 20;

// Sequences per rank and iteration: batch / (Gdata*Gz).
std::int64_t local_batch(const GptPlanOptions& o);
// Sequences per rank and micro-step: micro_batch, or local_batch() when it is 0.
std::int64_t micro_batch(const GptPlanOptions& o);
// Micro-steps per iteration: local_batch() / micro_batch().
std::int64_t micro_steps(const GptPlanOptions& o);
// Tokens per rank and micro-step (what every activation buffer holds): micro_batch() * seq.
std::int64_t tokens_per_rank(const GptShape& m, const GptPlanOptions& o);

// Throws UsageError naming the first failed condition: positive sizes; hidden % heads;
// hidden % (Gx*Gy); heads % Gy; vocab % Gy; batch % (Gdata*Gz); micro_batch >= 0 and
// batch % (micro_batch*Gdata*Gz); every weight block % Gz; ors_window >= 1; tp_chunks >= 1 and,
// with otp, tokens_per_rank() % tp_chunks (even row slices). GPT: kv_heads =
// heads and ffn = 4h. Llama: ffn_hidden given, ffn % Gy, heads % kv_heads, kv_heads % Gy, even
// head_dim (RoPE rotates pairs), rope_theta > 0.
void validate_gpt_shape(const GptShape& m);  // the grid-free part
// "GPT 24x2048 (heads 16, seq 2048, vocab 50304)", "Llama 32x4096 (heads 32, kv-heads 8, ffn
// 14336, seq 2048, vocab 128256)": how messages and reports name a model.
std::string describe(const GptShape& m);
void validate_gpt_plan(const GptShape& m, const GptPlanOptions& o);

// ---- Data-parallel buckets ----

// True when the optimizer state is actually split: shard_optimizer and Gdata > 1.
bool optimizer_sharded(const GptPlanOptions& o);
// True when the gradients are split as well (ZeRO-2): shard_gradients and optimizer_sharded().
// Then every micro-step computes each bucket's gradient afresh in a bucket buffer (the head
// bucket's own, the blocks' from a ring of grad_bucket_slots()), reduces it over Z and
// reduce-scatters it over data (the Z small-parameter all-reduce and the data reduce-scatter are
// issued every micro-step), and the rank's chunk is added into its fp32 gradient shard.
bool gradients_sharded(const GptPlanOptions& o);
// Block-bucket buffers of the ring when gradients_sharded(): 2 with ORS (a block's data
// reduce-scatter runs behind the next block's backward; the block after that waits for it), else
// 1 (each reduce-scatter waited for at once); 0 when the gradients are not sharded.
int grad_bucket_slots(const GptPlanOptions& o);
// True when micro-steps after the first add the linear layers' dW and bias gradients into the
// accumulated full gradient (more than one micro-step, gradients not sharded); sharded gradients
// accumulate chunks after the data reduce-scatter instead.
bool accumulates_full_gradients(const GptPlanOptions& o);
// Elements of a gradient bucket of `count` elements that one data rank reduces and updates:
// count without sharding; with it ceil(count / Gdata) - the bucket is padded with zeros to
// Gdata equal chunks and data rank d owns chunk d, so an uneven bucket puts its padding (fewer
// than Gdata elements) at the end of the last chunk.
std::int64_t data_chunk(std::int64_t count, const GptPlanOptions& o);
// The bucket's extent in the flat parameter buffers: count, or Gdata * data_chunk() when sharded.
std::int64_t bucket_extent(std::int64_t count, const GptPlanOptions& o);
// Elements of the block buckets and of the head bucket (weight shards + small parameters).
std::int64_t block_bucket_count(const GptShape& m, const GridShape& g);
std::int64_t head_bucket_count(const GptShape& m, const GridShape& g);

// ---- Memory per rank ----

// Bytes one rank holds at the peak of an iteration, by what they are for. gpt4d allocates exactly
// these buffers, all before training (endtoend/src/train/state.hpp, gather.hpp; a test checks
// that the two agree term by term), so change both together.
struct GptMemory {
  double params = 0;       // fp32 master shards + working copy in act_dtype (when not fp32);
                           // sharded optimizer: the master only for the rank's data chunks
                           // (in fp32 the working copy, all of it, is the master)
  double grads = 0;        // fp32 gradient shards (every bucket, padded when sharded); with
                           // sharded gradients the rank's chunks + the bucket buffers (the
                           // head bucket's + grad_bucket_slots() of a block bucket, padded)
  double optimizer = 0;    // AdamW m and v, fp32 (the rank's data chunks when sharded)
  double gathered = 0;     // Z-gathered weight blocks (Gz > 1): every layer's when cached; else
                           // the LM head's + K slots of the largest block linear, K = 1 (4 with
                           // recompute) + 1 with OAG
  double grad_blocks = 0;  // fp32 dW blocks awaiting their Z reduce-scatter (Gz > 1): a ring
                           // of min(ors_window, 4L+1) slots of the largest block (LM head
                           // included) with ORS, else one such slot; with Gz = 1 and more than
                           // one micro-step, one slot (the dW GEMM's output before it is added)
  double activations = 0;  // residual stream [T, h/Gx] x (L+1) + the saved tensors of every
                           // block (of one block with recompute); T per micro-step
  double workspace = 0;    // final LN, logits, CE statistics, 2 gradient buffers [T, h/Gx] and 2
                           // wide ones (GPT [T, 4h/Gy] each; Llama [T, max(2ffn, qkv)/Gy] and
                           // [T, max(ffn, h)/Gy]), LN/attention scratch, the iteration's tokens
                           // and targets, GEMM workspace; accumulating full gradients a bias-gradient
                           // scratch (max_bias_local)
  double total() const {
    return params + grads + optimizer + gathered + grad_blocks + activations + workspace;
  }
  // The terms by name, in the order above: "params", "grads", "optimizer", "gathered",
  // "grad_blocks", "activations", "workspace".
  std::vector<std::pair<std::string_view, double>> terms() const;
  std::string_view largest_term() const;  // the name of the largest (why a rank does not fit)
};
GptMemory gpt_memory(const GptShape& m, const GptPlanOptions& o);
// Slots of the dW ring (each of the largest weight block, fp32): 1 without ORS, min(ors_window,
// 4L+1) with it; when Gz = 1, 1 when accumulates_full_gradients() (the dW to be added), else 0.
int dw_slots(const GptShape& m, const GptPlanOptions& o);
// The largest local bias of a block's linear layers (elements; 0 when they have none, Llama):
// the scratch that a bias gradient goes to before it is added, with micro-steps.
std::int64_t max_bias_local(const GptShape& m, const GridShape& g);

// ---- The collectives of one iteration ----

enum class Group { x, y, z, data, world };
std::string_view name_of(Group g);  // "x", "y", "z", "data", "world"
Group group_of(Dim d);

enum class Phase { forward, backward, step };
std::string_view name_of(Phase p);  // "forward", "backward", "step"

// Why a collective is issued.
enum class CollRole {
  weight_gather,      // Z all-gather of a weight shard (forward; again in backward without caching)
  output_reduce,      // forward all-reduce of partial outputs over in_dim
  input_grad_reduce,  // backward all-reduce of dX over out_dim
  weight_grad_scatter,  // Z reduce-scatter of dW
  ln_stats,             // forward LN (sum, sum of squares) over X, 2T fp32 (RMSNorm: T)
  ln_grad_stats,        // backward LN row sums over X, 2T fp32 (RMSNorm: T)
  ce_stats,             // vocab-parallel cross-entropy (max, sum exp, target) all-gather over Y
  param_grad_reduce,    // Z all-reduce of LN/bias/embedding gradients
  data_grad_reduce,     // data-parallel gradient all-reduce of one bucket (reduce-scatter of its
                        // chunks with the sharded optimizer)
  scalars,              // world all-reduce of (loss sum, grad-norm sum of squares)
  param_gather,         // sharded optimizer: data all-gather of a bucket's updated working weights
};
std::string_view name_of(CollRole r);

struct CollOp {
  Phase phase;
  int layer;          // block index; -1 for embedding / final LN / LM head / global
  std::string op;     // "ln1", "qkv", "attn_out", "ln2", "mlp_up", "mlp_down", "ln_f", "lm_head",
                      // "loss", "block" (bucket of a block), "head" (bucket), "global"
  CollRole role;
  CollKind kind;
  Group group;
  int group_size;
  std::int64_t count;  // the call's count argument (see Communicator in backend.hpp)
  DType dtype;
  bool recompute = false;  // issued by the recomputed forward inside backward
  int micro_step = 0;      // the micro-step that issues it (0 in the step phase)

  // S of docs/metrics.md: the full buffer in bytes.
  double bytes() const;
  bool operator==(const CollOp&) const = default;
};

// Every collective of one iteration, in the order of a run without overlap flags: each micro-step's
// forward and backward (the Z small-parameter and data reductions in the last one only), then the
// step. With overlap flags gpt4d issues the same set in another order (prefetches, deferred waits),
// except that tp splits each forward output_reduce into tp_chunks of count / tp_chunks.
// These are the issues of gpt_schedule() (ovb/gpt_schedule.hpp, the one generator of the
// iteration's order and waits) with the overlap flags cleared.
std::vector<CollOp> gpt_collectives(const GptShape& m, const GptPlanOptions& o);

// Count of the small (non tensor-parallel) parameters of a block on one rank: LN1, LN2 (gamma,
// beta: h/Gx each) and the four biases; and of the head bucket: final LN, token and position
// embeddings (the LM head has no bias). Llama: the two RMSNorm gains; final gain and token
// embedding.
std::int64_t block_small_params(const GptShape& m, const GridShape& g);
std::int64_t head_small_params(const GptShape& m, const GridShape& g);

// Floats per token of a norm's statistics all-reduce over X: forward (sum, sum of squares) for
// LN, (sum of squares) for RMSNorm; backward likewise two or one row sums.
std::int64_t norm_stats_per_token(const GptShape& m);

// One line per op, e.g. "forward L3 qkv output_reduce all_reduce x(2) count=... fp32"; ops of a
// micro-step after the first start with "m<k> ".
std::string describe(const CollOp& c);

}  // namespace ovb
