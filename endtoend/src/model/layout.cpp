// The flat parameter layout of one rank (see layout.hpp).
//
// Ownership (which replica counts in the gradient norm and in gathered comparisons): gradients of
// weight shards are equal over data after the data all-reduce, so data rank 0 owns them. Layer
// norms, embeddings and the biases of transposed layers are replicated over Y (and Z, data): the
// rank with y = z = d = 0 owns them. Biases of normal layers are replicated over X: x = z = d = 0.
// With the sharded optimizer a gradient is final only in its data rank's chunk: there, the
// conditions other than d = 0 (owner_in_data_rank) decide.
#include "model/layout.hpp"

#include <algorithm>
#include <cmath>

namespace ovb::gpt {

const LinearParams& BlockParams::linear(int i) const {
  switch (i) {
    case 0: return qkv;
    case 1: return attn_out;
    case 2: return mlp_up;
    default: return mlp_down;
  }
}

namespace {

class Builder {
 public:
  Builder(ParamLayout& p, const GptPlanOptions& o, const Coords& c) : p_(p), o_(o), c_(c) {}

  int add(TensorDesc t) {
    t.offset = p_.total;
    p_.total += t.count;
    p_.tensors.push_back(std::move(t));
    return static_cast<int>(p_.tensors.size()) - 1;
  }

  LinearParams weight(const LinearSpec& spec, int layer, const std::string& name, std::uint64_t id,
                      float stddev) {
    LinearParams lp;
    lp.geom = linear_geom(spec, o_.grid);
    lp.layer = layer;
    const LinearGeom& g = lp.geom;
    TensorDesc t;
    t.name = name + ".w";
    t.id = id;
    t.count = g.shard;
    t.rows = spec.out;
    t.cols = spec.in;
    t.row0 = c_[g.out_dim] * g.out_local;
    t.col0 = c_[g.in_dim] * g.in_local;
    t.block_rows = g.out_local;
    t.block_cols = g.in_local;
    t.flat0 = c_[Dim::z] * g.shard;
    t.init = Init::normal;
    t.stddev = stddev;
    t.decay = true;
    t.owner_in_data_rank = true;
    t.owner = c_[Dim::data] == 0;
    lp.weight = add(std::move(t));
    return lp;
  }

  // A vector [n] split over `dim` (n / G(dim) per rank), replicated over `replicated`, Z, data.
  int vector(const std::string& name, std::uint64_t id, std::int64_t n, Dim dim, Dim replicated,
             Init init) {
    TensorDesc t;
    t.name = name;
    t.id = id;
    t.count = n / o_.grid.size(dim);
    t.cols = n;
    t.col0 = c_[dim] * t.count;
    t.block_cols = t.count;
    t.init = init;
    t.owner_in_data_rank = c_[replicated] == 0 && c_[Dim::z] == 0;
    t.owner = t.owner_in_data_rank && c_[Dim::data] == 0;
    return add(std::move(t));
  }

  // An embedding table [rows, h] split over X along h, replicated over Y, Z and data.
  int embedding(const std::string& name, std::uint64_t id, std::int64_t rows, std::int64_t h) {
    TensorDesc t;
    t.name = name;
    t.id = id;
    t.rows = rows;
    t.cols = h;
    t.block_rows = rows;
    t.block_cols = h / o_.grid.gx;
    t.col0 = c_[Dim::x] * t.block_cols;
    t.count = rows * t.block_cols;
    t.init = Init::normal;
    t.stddev = 0.02f;
    t.decay = true;
    t.owner_in_data_rank = c_[Dim::y] == 0 && c_[Dim::z] == 0;
    t.owner = t.owner_in_data_rank && c_[Dim::data] == 0;
    return add(std::move(t));
  }

  // Closes bucket b at the current end: its padding to Gdata chunks and the rank's chunk.
  void close(Bucket& b) {
    b.count = p_.total - b.offset;
    b.extent = bucket_extent(b.count, o_);
    b.own_count = data_chunk(b.count, o_);
    const bool sharded = optimizer_sharded(o_);
    b.own_offset = b.offset + (sharded ? c_[Dim::data] * b.own_count : 0);
    b.shard_offset = sharded ? p_.shard_total : b.own_offset;
    p_.total = b.offset + b.extent;
    p_.shard_total = sharded ? p_.shard_total + b.own_count : p_.total;
  }

  void bias(LinearParams& lp, const std::string& name, std::uint64_t id) {
    const LinearGeom& g = lp.geom;
    lp.bias = vector(name + ".b", id, g.spec.out, g.out_dim, g.in_dim, Init::zeros);
  }

 private:
  ParamLayout& p_;
  const GptPlanOptions& o_;
  const Coords& c_;
};

}  // namespace

TensorDesc slice(const TensorDesc& t, std::int64_t lo, std::int64_t hi, std::int64_t offset) {
  TensorDesc s = t;
  const std::int64_t first = std::max(lo, t.offset);
  const std::int64_t last = std::min(hi, t.offset + t.count);
  s.offset = offset + (first - lo);
  s.count = std::max<std::int64_t>(0, last - first);
  s.flat0 = t.flat0 + (first - t.offset);
  return s;
}

ParamLayout make_layout(const GptShape& m, const GptPlanOptions& o, const Coords& c) {
  ParamLayout p;
  Builder b(p, o, c);
  const std::vector<LinearSpec> specs = block_linears(m);
  const float std_w = 0.02f;
  const float std_proj = 0.02f / std::sqrt(2.0f * static_cast<float>(m.layers));
  const std::int64_t h = m.hidden;
  for (int l = 0; l < m.layers; ++l) {
    std::string L = std::to_string(l);  // "L3." (built in steps: GCC 12 -Wrestrict false positive)
    L.insert(0, 1, 'L').push_back('.');
    const std::uint64_t id = 16 * (static_cast<std::uint64_t>(l) + 1);
    Bucket bucket;
    bucket.layer = l;
    bucket.offset = p.total;
    BlockParams bp;
    bp.qkv = b.weight(specs[0], l, L + "qkv", id + 0, std_w);
    bp.attn_out = b.weight(specs[1], l, L + "attn_out", id + 2, std_proj);
    bp.mlp_up = b.weight(specs[2], l, L + "mlp_up", id + 4, std_w);
    bp.mlp_down = b.weight(specs[3], l, L + "mlp_down", id + 6, std_proj);
    bucket.small_offset = p.total;
    bp.ln1_g = b.vector(L + "ln1.g", id + 8, h, Dim::x, Dim::y, Init::ones);
    if (!m.llama()) bp.ln1_b = b.vector(L + "ln1.b", id + 9, h, Dim::x, Dim::y, Init::zeros);
    bp.ln2_g = b.vector(L + "ln2.g", id + 10, h, Dim::x, Dim::y, Init::ones);
    if (!m.llama()) {  // Llama: RMSNorm gains only, no linear biases
      bp.ln2_b = b.vector(L + "ln2.b", id + 11, h, Dim::x, Dim::y, Init::zeros);
      b.bias(bp.qkv, L + "qkv", id + 1);
      b.bias(bp.attn_out, L + "attn_out", id + 3);
      b.bias(bp.mlp_up, L + "mlp_up", id + 5);
      b.bias(bp.mlp_down, L + "mlp_down", id + 7);
    }
    bucket.small_count = p.total - bucket.small_offset;
    b.close(bucket);
    p.blocks.push_back(bp);
    p.buckets.push_back(bucket);
  }
  Bucket head;
  head.offset = p.total;
  p.head.lm_head = b.weight(lm_head_linear(m), -1, "lm_head", 5, std_w);
  head.small_offset = p.total;
  p.head.lnf_g = b.vector("ln_f.g", 3, h, Dim::x, Dim::y, Init::ones);
  if (!m.llama()) p.head.lnf_b = b.vector("ln_f.b", 4, h, Dim::x, Dim::y, Init::zeros);
  p.head.wte = b.embedding("wte", 1, m.vocab, h);
  if (!m.llama()) p.head.wpe = b.embedding("wpe", 2, m.seq, h);  // Llama: RoPE instead
  head.small_count = p.total - head.small_offset;
  b.close(head);
  p.buckets.push_back(head);
  return p;
}

}  // namespace ovb::gpt
