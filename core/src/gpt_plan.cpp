// The GPT model under the 4D algorithm as data (see ovb/gpt_plan.hpp).
#include "ovb/gpt_plan.hpp"

#include <algorithm>
#include <cctype>
#include <sstream>

#include "ovb/error.hpp"
#include "ovb/gpt_schedule.hpp"
#include "ovb/metrics.hpp"

namespace ovb {

// ---- Shapes and presets ----

std::string_view name_of(Arch a) {
  return a == Arch::llama ? "llama" : "gpt";
}

Arch parse_arch(std::string_view s) {
  if (s == "gpt") return Arch::gpt;
  if (s == "llama") return Arch::llama;
  throw UsageError("unknown architecture '" + std::string(s) + "' (expected gpt or llama)");
}

std::int64_t GptShape::block_linear_params() const {
  const std::int64_t h = hidden;
  if (!llama()) return 12 * h * h;
  return h * (heads + 2 * kv()) * head_dim() + h * h + 3 * h * ffn();
}

std::int64_t GptShape::parameter_count() const {
  const std::int64_t h = hidden;
  if (llama())  // RMSNorm gains (2 per block, 1 final), token embedding, untied head
    return layers * (block_linear_params() + 2 * h) + vocab * h + h + vocab * h;
  const std::int64_t per_block = 12 * h * h + 9 * h /* biases */ + 4 * h /* LN1, LN2 */;
  return layers * per_block + vocab * h /* token emb */ + seq * h /* pos emb */ + 2 * h /* LN_f */ +
         vocab * h /* LM head */;
}

double GptShape::model_flop(std::int64_t batch) const {
  return metrics::transformer_model_flop(static_cast<double>(batch), static_cast<double>(seq),
                                         static_cast<double>(layers), static_cast<double>(hidden),
                                         static_cast<double>(vocab),
                                         static_cast<double>(block_linear_params()));
}

const std::vector<GptPreset>& gpt_presets() {
  // Llama 3 (Meta, "The Llama 3 Herd of Models", 2024, table 3; the released configs): layers,
  // model dimension, query heads, 8 K/V heads, FFN dimension, vocabulary 128256, RoPE base 5e5.
  constexpr std::int64_t kLlama3Vocab = 128256;
  constexpr double kLlama3Theta = 500000;
  static const std::vector<GptPreset> presets = {
      {"tiny", 2, 64, 4},  // tests and demos
      {"125M", 12, 768, 12},
      {"350M", 24, 1024, 16},
      {"760M", 24, 1536, 16},
      {"1.3B", 24, 2048, 16},
      {"2.7B", 32, 2560, 32},
      {"6.7B", 32, 4096, 32},
      {"13B", 40, 5120, 40},
      {"18B", 40, 6144, 48},
      {"39B", 48, 8192, 64},
      {"76B", 60, 10240, 80},
      {"145B", 80, 12288, 96},
      {"175B", 96, 12288, 96},
      {"310B", 96, 16384, 128},
      {"530B", 105, 20480, 128},
      {"1T", 128, 25600, 160},
      // tests and demos: two query heads per K/V head, SwiGLU width ~ 8h/3
      {"llama-tiny", 2, 64, 4, Arch::llama, 2, 176, 0, kDefaultRopeTheta},
      {"llama3-8B", 32, 4096, 32, Arch::llama, 8, 14336, kLlama3Vocab, kLlama3Theta},
      {"llama3-70B", 80, 8192, 64, Arch::llama, 8, 28672, kLlama3Vocab, kLlama3Theta},
      {"llama3-405B", 126, 16384, 128, Arch::llama, 8, 53248, kLlama3Vocab, kLlama3Theta},
  };
  return presets;
}

static std::string upper(std::string_view s) {
  std::string u(s);
  for (char& c : u) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return u;
}

GptShape gpt_preset(std::string_view name) {
  std::string key = upper(name);
  if (key.rfind("GPT-", 0) == 0)
    key = key.substr(4);
  else if (key.rfind("GPT", 0) == 0)
    key = key.substr(3);
  std::string known;
  for (const GptPreset& p : gpt_presets()) {
    if (upper(p.name) == key) {
      GptShape m;
      m.arch = p.arch;
      m.layers = p.layers;
      m.hidden = p.hidden;
      m.heads = p.heads;
      m.kv_heads = p.kv_heads;
      m.ffn_hidden = p.ffn_hidden;
      if (p.vocab > 0) m.vocab = p.vocab;
      m.rope_theta = p.rope_theta;
      m.preset = p.name;
      return m;
    }
    known += (known.empty() ? "" : ", ") + std::string(p.name);
  }
  throw UsageError("unknown GPT preset '" + std::string(name) + "' (known: " + known + ")");
}

// ---- Layers ----

std::string_view name_of(LinearId id) {
  switch (id) {
    case LinearId::qkv: return "qkv";
    case LinearId::attn_out: return "attn_out";
    case LinearId::mlp_up: return "mlp_up";
    case LinearId::mlp_down: return "mlp_down";
    case LinearId::lm_head: return "lm_head";
  }
  return "?";
}

std::vector<LinearSpec> block_linears(const GptShape& m) {
  const std::int64_t h = m.hidden;
  if (m.llama())
    return {{LinearId::qkv, h, (m.heads + 2 * m.kv()) * m.head_dim(), false, false},
            {LinearId::attn_out, h, h, true, false},
            {LinearId::mlp_up, h, 2 * m.ffn(), false, false},
            {LinearId::mlp_down, m.ffn(), h, true, false}};
  return {{LinearId::qkv, h, 3 * h, false, true},
          {LinearId::attn_out, h, h, true, true},
          {LinearId::mlp_up, h, 4 * h, false, true},
          {LinearId::mlp_down, 4 * h, h, true, true}};
}

LinearSpec lm_head_linear(const GptShape& m) {
  return {LinearId::lm_head, m.hidden, m.vocab, false, false};
}

LinearGeom linear_geom(const LinearSpec& spec, const GridShape& g) {
  LinearGeom L;
  L.spec = spec;
  L.in_dim = spec.transposed ? Dim::y : Dim::x;
  L.out_dim = spec.transposed ? Dim::x : Dim::y;
  L.in_local = spec.in / g.size(L.in_dim);
  L.out_local = spec.out / g.size(L.out_dim);
  L.block = L.in_local * L.out_local;
  L.shard = L.block / g.gz;
  L.bias_local = spec.bias ? L.out_local : 0;
  return L;
}

// ---- Validation ----

std::int64_t local_batch(const GptPlanOptions& o) {
  return o.batch / (static_cast<std::int64_t>(o.grid.gdata) * o.grid.gz);
}

std::int64_t micro_batch(const GptPlanOptions& o) {
  return o.micro_batch > 0 ? o.micro_batch : local_batch(o);
}

std::int64_t micro_steps(const GptPlanOptions& o) {
  const std::int64_t mb = micro_batch(o);
  return mb > 0 ? local_batch(o) / mb : 1;
}

std::int64_t tokens_per_rank(const GptShape& m, const GptPlanOptions& o) {
  return micro_batch(o) * m.seq;
}

namespace {

std::string shape_words(const GptShape& m) {
  std::string s = std::string(m.llama() ? "Llama " : "GPT ") + std::to_string(m.layers) + "x" +
                  std::to_string(m.hidden) + " (heads " + std::to_string(m.heads);
  if (m.llama())
    s += ", kv-heads " + std::to_string(m.kv()) + ", ffn " + std::to_string(m.ffn_hidden);
  return s + ", seq " + std::to_string(m.seq) + ", vocab " + std::to_string(m.vocab);
}

}  // namespace

std::string describe(const GptShape& m) {
  return shape_words(m) + ")";
}

void validate_gpt_shape(const GptShape& m) {
  auto fail = [&](const std::string& what) { throw UsageError(shape_words(m) + "): " + what); };
  const std::pair<const char*, std::int64_t> positive[] = {{"layers", m.layers},
                                                           {"hidden", m.hidden},
                                                           {"heads", m.heads},
                                                           {"seq", m.seq},
                                                           {"vocab", m.vocab}};
  for (const auto& [name, v] : positive)
    if (v < 1) fail(std::string(name) + " must be >= 1, got " + std::to_string(v));
  if (m.kv_heads < 0) fail("kv-heads must be >= 1, got " + std::to_string(m.kv_heads));
  if (m.ffn_hidden < 0) fail("ffn-hidden must be >= 1, got " + std::to_string(m.ffn_hidden));
  if (m.hidden % m.heads != 0)
    fail("hidden " + std::to_string(m.hidden) + " is not divisible by heads " +
         std::to_string(m.heads));
  if (!m.llama()) {
    if (m.kv() != m.heads)
      fail("kv-heads " + std::to_string(m.kv()) +
           " differs from heads: grouped-query attention needs --arch llama");
    if (m.ffn() != 4 * m.hidden)
      fail("ffn-hidden " + std::to_string(m.ffn()) +
           " differs from 4*hidden: the GPT MLP is 4h wide (other widths need --arch llama)");
    return;
  }
  if (m.ffn_hidden == 0) fail("give the SwiGLU width with --ffn-hidden");
  if (m.heads % m.kv() != 0)
    fail("heads " + std::to_string(m.heads) + " is not divisible by kv-heads " +
         std::to_string(m.kv()) + " (every K/V head serves the same number of query heads)");
  if (m.head_dim() % 2 != 0)
    fail("head dimension " + std::to_string(m.head_dim()) +
         " is odd (rotary embeddings rotate pairs of features)");
  if (!(m.rope_theta > 0)) fail("rope-theta must be > 0, got " + std::to_string(m.rope_theta));
}

void validate_gpt_plan(const GptShape& m, const GptPlanOptions& o) {
  const GridShape& g = o.grid;
  auto fail = [&](const std::string& what) {
    throw UsageError(shape_words(m) + ", batch " + std::to_string(o.batch) + ") on grid " +
                     g.str() + ": " + what);
  };
  validate_gpt_shape(m);
  if (o.batch < 1) fail("batch must be >= 1, got " + std::to_string(o.batch));
  const std::int64_t gxy = static_cast<std::int64_t>(g.gx) * g.gy;
  if (m.hidden % gxy != 0)
    fail("hidden " + std::to_string(m.hidden) +
         " is not divisible by Gx*Gy = " + std::to_string(gxy));
  if (m.heads % g.gy != 0)
    fail("heads " + std::to_string(m.heads) + " is not divisible by Gy = " + std::to_string(g.gy) +
         " (attention heads are split over Y)");
  if (m.llama() && m.kv() % g.gy != 0)
    fail("kv-heads " + std::to_string(m.kv()) +
         " is not divisible by Gy = " + std::to_string(g.gy) +
         " (Y splits whole K/V groups; K/V heads are not replicated over Y)");
  if (m.llama() && m.ffn() % g.gy != 0)
    fail("ffn-hidden " + std::to_string(m.ffn()) + " is not divisible by Gy = " +
         std::to_string(g.gy) + " (the SwiGLU width is split over Y)");
  if (m.vocab % g.gy != 0)
    fail("vocab " + std::to_string(m.vocab) + " is not divisible by Gy = " + std::to_string(g.gy) +
         " (the LM head splits the vocabulary over Y)");
  const std::int64_t dz = static_cast<std::int64_t>(g.gdata) * g.gz;
  if (o.batch % dz != 0)
    fail("batch " + std::to_string(o.batch) + " is not divisible by Gdata*Gz = " +
         std::to_string(dz) + " (whole sequences are split over data and Z)");
  if (o.micro_batch < 0)
    fail("the micro-batch must be >= 1 sequence (0: the whole local batch), got " +
         std::to_string(o.micro_batch));
  if (o.micro_batch > 0 && o.batch % (o.micro_batch * dz) != 0)
    fail("batch " + std::to_string(o.batch) +
         " is not divisible by micro-batch x Gdata x Gz = " + std::to_string(o.micro_batch) +
         " x " + std::to_string(dz) + " (every data-and-Z shard runs whole micro-steps of " +
         std::to_string(o.micro_batch) + " sequences)");
  if (o.ors_window < 1)
    fail("the ORS window must be >= 1 dW block, got " + std::to_string(o.ors_window));
  if (o.tp_chunks < 1) fail("--tp-chunks must be >= 1, got " + std::to_string(o.tp_chunks));
  if (o.otp && tokens_per_rank(m, o) % o.tp_chunks != 0)
    fail("--tp-chunks " + std::to_string(o.tp_chunks) + " does not divide the " +
         std::to_string(tokens_per_rank(m, o)) +
         " tokens per rank and micro-step (overlap tp cuts them into even row slices)");
  if (o.shard_gradients && !o.shard_optimizer)
    fail("sharded gradients (--shard-gradients, ZeRO-2) need the sharded optimizer "
         "(--shard-optimizer): only a rank that updates just its chunk can drop the rest of the "
         "gradient");
  std::vector<LinearSpec> all = block_linears(m);
  all.push_back(lm_head_linear(m));
  for (const LinearSpec& s : all) {
    const LinearGeom L = linear_geom(s, g);
    if (L.block % g.gz != 0)
      fail(std::string(name_of(s.id)) + " weight block of " + std::to_string(L.block) +
           " elements is not divisible by Gz = " + std::to_string(g.gz));
  }
}

// ---- Collectives ----

std::string_view name_of(Group g) {
  switch (g) {
    case Group::x: return "x";
    case Group::y: return "y";
    case Group::z: return "z";
    case Group::data: return "data";
    case Group::world: return "world";
  }
  return "?";
}

Group group_of(Dim d) {
  switch (d) {
    case Dim::x: return Group::x;
    case Dim::y: return Group::y;
    case Dim::z: return Group::z;
    case Dim::data: return Group::data;
  }
  return Group::world;
}

std::string_view name_of(Phase p) {
  switch (p) {
    case Phase::forward: return "forward";
    case Phase::backward: return "backward";
    case Phase::step: return "step";
  }
  return "?";
}

std::string_view name_of(CollRole r) {
  switch (r) {
    case CollRole::weight_gather: return "weight_gather";
    case CollRole::output_reduce: return "output_reduce";
    case CollRole::input_grad_reduce: return "input_grad_reduce";
    case CollRole::weight_grad_scatter: return "weight_grad_scatter";
    case CollRole::ln_stats: return "ln_stats";
    case CollRole::ln_grad_stats: return "ln_grad_stats";
    case CollRole::ce_stats: return "ce_stats";
    case CollRole::param_grad_reduce: return "param_grad_reduce";
    case CollRole::data_grad_reduce: return "data_grad_reduce";
    case CollRole::scalars: return "scalars";
    case CollRole::param_gather: return "param_gather";
  }
  return "?";
}

double CollOp::bytes() const {
  return metrics::collective_bytes(kind, static_cast<std::size_t>(count), group_size,
                                   size_of(dtype));
}

std::int64_t norm_stats_per_token(const GptShape& m) {
  return m.llama() ? 1 : 2;
}

std::int64_t block_small_params(const GptShape& m, const GridShape& g) {
  const std::int64_t h = m.hidden;
  if (m.llama()) return 2 * h / g.gx;  // RMSNorm gains; no biases
  return 4 * h / g.gx /* LN1, LN2 */ + 3 * h / g.gy + h / g.gx + 4 * h / g.gy + h / g.gx;
}

std::int64_t head_small_params(const GptShape& m, const GridShape& g) {
  if (m.llama()) return (m.hidden + m.vocab * m.hidden) / g.gx;  // final gain, token embedding
  return (2 * m.hidden + m.vocab * m.hidden + m.seq * m.hidden) / g.gx;
}

bool optimizer_sharded(const GptPlanOptions& o) {
  return o.shard_optimizer && o.grid.gdata > 1;
}

bool gradients_sharded(const GptPlanOptions& o) {
  return o.shard_gradients && optimizer_sharded(o);
}

int grad_bucket_slots(const GptPlanOptions& o) {
  if (!gradients_sharded(o)) return 0;
  return o.ors ? 2 : 1;
}

bool accumulates_full_gradients(const GptPlanOptions& o) {
  return micro_steps(o) > 1 && !gradients_sharded(o);
}

std::int64_t data_chunk(std::int64_t count, const GptPlanOptions& o) {
  if (!optimizer_sharded(o)) return count;
  return (count + o.grid.gdata - 1) / o.grid.gdata;
}

std::int64_t bucket_extent(std::int64_t count, const GptPlanOptions& o) {
  return optimizer_sharded(o) ? data_chunk(count, o) * o.grid.gdata : count;
}

std::int64_t block_bucket_count(const GptShape& m, const GridShape& g) {
  std::int64_t n = block_small_params(m, g);
  for (const LinearSpec& s : block_linears(m)) n += linear_geom(s, g).shard;
  return n;
}

std::int64_t head_bucket_count(const GptShape& m, const GridShape& g) {
  return head_small_params(m, g) + linear_geom(lm_head_linear(m), g).shard;
}

// The schedule's issues (gpt_schedule.cpp is the one generator); without overlap flags, whose
// only effect on the issues is their order (and tp's: the forward output all-reduces in chunks).
std::vector<CollOp> gpt_collectives(const GptShape& m, const GptPlanOptions& o) {
  GptPlanOptions plain = o;
  plain.oar = plain.ors = plain.oag = plain.otp = false;
  struct Issues final : StepVisitor {
    std::vector<CollOp> out;
    void step(const Step&, const CollOp* issued) override {
      if (issued) out.push_back(*issued);
    }
  } v;
  visit_gpt_schedule(m, plain, v);
  return std::move(v.out);
}

std::vector<std::pair<std::string_view, double>> GptMemory::terms() const {
  return {{"params", params},           {"grads", grads},
          {"optimizer", optimizer},     {"gathered", gathered},
          {"grad_blocks", grad_blocks}, {"activations", activations},
          {"workspace", workspace}};
}

std::string_view GptMemory::largest_term() const {
  const auto all = terms();
  return std::max_element(all.begin(), all.end(),
                          [](const auto& a, const auto& b) { return a.second < b.second; })
      ->first;
}

std::int64_t max_bias_local(const GptShape& m, const GridShape& g) {
  std::int64_t n = 0;
  for (const LinearSpec& s : block_linears(m)) n = std::max(n, linear_geom(s, g).bias_local);
  return n;
}

int dw_slots(const GptShape& m, const GptPlanOptions& o) {
  if (o.grid.gz == 1) return accumulates_full_gradients(o) ? 1 : 0;
  if (!o.ors) return 1;
  const std::int64_t linears = 4 * m.layers + 1;
  return static_cast<int>(std::min<std::int64_t>(o.ors_window, linears));
}

GptMemory gpt_memory(const GptShape& m, const GptPlanOptions& o) {
  const GridShape& g = o.grid;
  const ScheduleCounts slots = schedule_counts(m, o);  // the buffers' slots are the schedule's
  const double a = static_cast<double>(size_of(o.act_dtype));
  const double T = static_cast<double>(tokens_per_rank(m, o));
  const double L = static_cast<double>(m.layers);
  const double h = static_cast<double>(m.hidden);
  const double hx = h / g.gx, hy = h / g.gy;
  const double hl = static_cast<double>(m.heads) / g.gy;  // local heads
  const double vy = static_cast<double>(m.vocab) / g.gy;
  std::vector<LinearGeom> geo;
  for (const LinearSpec& s : block_linears(m)) geo.push_back(linear_geom(s, g));
  const LinearGeom head = linear_geom(lm_head_linear(m), g);
  // Local widths: QKV output, MLP-up output (GPT pre-GELU 4h; Llama gate|up 2ffn), MLP-down input
  // (the activation: GELU 4h, SwiGLU ffn).
  const double qkv_w = static_cast<double>(geo[0].out_local);
  const double up_w = static_cast<double>(geo[2].out_local);
  const double act_w = static_cast<double>(geo[3].in_local);

  double blocks = head.block, max_block_lin = 0;
  for (const LinearGeom& Lg : geo) {
    blocks += L * Lg.block;
    max_block_lin = std::max(max_block_lin, static_cast<double>(Lg.block));
  }
  const double max_block = std::max(max_block_lin, static_cast<double>(head.block));
  // Flat buffers: every bucket at its extent (padded to Gdata chunks when sharded); the master
  // (when separate from the working copy) and the moments: the rank's chunk of each bucket.
  const double n_flat = L * static_cast<double>(bucket_extent(block_bucket_count(m, g), o)) +
                        static_cast<double>(bucket_extent(head_bucket_count(m, g), o));
  const double n_own = L * static_cast<double>(data_chunk(block_bucket_count(m, g), o)) +
                       static_cast<double>(data_chunk(head_bucket_count(m, g), o));

  GptMemory mem;
  mem.params = o.act_dtype == DType::f32 ? n_flat * 4 : n_flat * a + n_own * 4;
  mem.grads = n_flat * 4;
  if (gradients_sharded(o))  // the rank's chunks, the head bucket's buffer and the block ring
    mem.grads = (n_own + static_cast<double>(bucket_extent(head_bucket_count(m, g), o)) +
                 (slots.bucket_slots - 1) *  // the block ring (the head's counted above)
                     static_cast<double>(bucket_extent(block_bucket_count(m, g), o))) *
                4;
  mem.optimizer = n_own * 8;
  if (g.gz > 1)  // cached: every block (4L + 1 slots); else the LM head's and a ring of the rest
    mem.gathered =
        (o.cache_weights ? blocks : head.block + (slots.gathered_slots - 1) * max_block_lin) * a;
  mem.grad_blocks = slots.dw_slots * max_block * 4;
  // Saved per block: LN1 out, LN2 input and out [T, h/Gx]; QKV [T, 3h/Gy] (Llama: after RoPE);
  // attention out [T, h/Gy]; MLP-up out and GELU (SwiGLU) out; two norm statistics slots (mean,
  // rstd; RMSNorm leaves the mean 0) and the attention log-sum-exp per local head, fp32. Block
  // inputs are the residual stream res[0..L].
  const double per_block = T * ((3 * hx + qkv_w + hy + up_w + act_w) * a + (4 + hl) * 4);
  mem.activations = (L + 1) * T * hx * a + (o.recompute ? 1 : L) * per_block;
  // Final LN out, logits [T, V/Gy] (their gradient in place), dres and dtmp [T, h/Gx], two wide
  // gradient buffers (the first holds d(MLP-up out) and dQKV, the second d(activation) and
  // d(attention out): [T, 4h/Gy] each for GPT); fp32: LN_f (mean, rstd) 2T, CE local 3T,
  // gathered 3T*Gy and log-sum-exp T, LN scratch 2T, attention scratch T*heads/Gy; the tokens
  // and targets of every micro-step (int32, uploaded once per iteration); the two global
  // scalars; when micro-steps accumulate full gradients, the bias gradient of one layer before
  // it is added (the largest local bias: GPT's MLP-up 4h/Gy or a transposed layer's h/Gx; Llama
  // has none); the GEMM workspace.
  const double wide = std::max(up_w, qkv_w) + std::max(act_w, hy);
  const double iter_tokens = static_cast<double>(local_batch(o) * m.seq);
  const double bias_scratch = accumulates_full_gradients(o) ? max_bias_local(m, g) * 4.0 : 0;
  mem.workspace = T * (3 * hx + vy + wide) * a + T * (8 + 3.0 * g.gy + hl) * 4 +
                  2 * iter_tokens * 4 + 2 * 4 + bias_scratch + o.gemm_workspace_bytes;
  return mem;
}

std::string describe(const CollOp& c) {
  std::ostringstream os;
  if (c.micro_step > 0) os << 'm' << c.micro_step << ' ';
  os << name_of(c.phase) << (c.recompute ? "(recompute)" : "") << ' ';
  if (c.layer >= 0) os << 'L' << c.layer << ' ';
  os << c.op << ' ' << name_of(c.role) << ' ' << name_of(c.kind) << ' ' << name_of(c.group) << '('
     << c.group_size << ") count=" << c.count << ' ' << name_of(c.dtype);
  return os.str();
}

}  // namespace ovb
